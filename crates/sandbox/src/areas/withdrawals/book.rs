//! The company's withdrawals. No state here: the company holds this
//! book, and the rules that change it live beside it.

use paydesk_api::models::withdrawals::Withdrawal;
use uuid::Uuid;

use crate::book::Book;
use crate::error::ApiError;
use crate::pagination::Sequenced;

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Record {
    pub(super) seq: u64,
    pub(super) withdrawal: Withdrawal,
}

impl Sequenced for Record {
    fn seq(&self) -> u64 {
        self.seq
    }
}

impl crate::book::Record for Record {
    type Key = Uuid;

    fn key(&self) -> Uuid {
        self.withdrawal.id
    }
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct WithdrawalBook {
    pub(crate) records: Book<Record>,
}

impl WithdrawalBook {
    pub fn get(&self, id: Uuid) -> Option<&Withdrawal> {
        self.records.iter().map(|r| &r.withdrawal).find(|w| w.id == id)
    }

    pub(super) fn index(&self, id: Uuid) -> Result<usize, ApiError> {
        self.records
            .iter()
            .position(|r| r.withdrawal.id == id)
            .ok_or_else(|| ApiError::NotFound(format!("no withdrawal {id}")))
    }
}
