//! The company's saved beneficiaries. No state here: the company holds this
//! book, and the rules that change it live beside it.

use paydesk_api::models::beneficiaries::Beneficiary;
use uuid::Uuid;

use crate::book::Book;

impl crate::book::Record for Beneficiary {
    type Key = Uuid;

    fn key(&self) -> Uuid {
        self.id
    }
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct BeneficiaryBook {
    pub(crate) records: Book<Beneficiary>,
}

impl BeneficiaryBook {
    pub fn find(&self, id: Uuid) -> Option<&Beneficiary> {
        self.records.iter().find(|b| b.id == id)
    }
}
