//! The company's customers and their card KYC. No state here: the company holds this
//! book, and the rules that change it live beside it.

use paydesk_api::models::customers::{CardKyc, Customer};
use uuid::Uuid;

use crate::book::Book;
use crate::error::ApiError;
use crate::pagination::Sequenced;

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct CustomerRecord {
    pub(super) seq: u64,
    pub customer: Customer,
    pub kyc: Option<CardKyc>,
}

impl Sequenced for CustomerRecord {
    fn seq(&self) -> u64 {
        self.seq
    }
}

impl crate::book::Record for CustomerRecord {
    type Key = Uuid;

    fn key(&self) -> Uuid {
        self.customer.id
    }
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct CustomerBook {
    pub(crate) records: Book<CustomerRecord>,
}

impl CustomerBook {
    pub fn find(&self, id: Uuid) -> Option<&CustomerRecord> {
        self.records.iter().find(|r| r.customer.id == id)
    }

    pub(super) fn find_mut(&mut self, id: Uuid) -> Result<&mut CustomerRecord, ApiError> {
        self.records
            .by_key_mut(&id)
            .ok_or_else(|| ApiError::NotFound(format!("no customer {id}")))
    }

    pub fn by_email(&self, email: &str) -> Option<&CustomerRecord> {
        self.records
            .iter()
            .find(|r| r.customer.email.eq_ignore_ascii_case(email.trim()))
    }

    pub fn get(&self, id: Uuid) -> Result<&CustomerRecord, ApiError> {
        self.find(id)
            .ok_or_else(|| ApiError::NotFound(format!("no customer {id}")))
    }
}
