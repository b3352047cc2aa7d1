//! The company's virtual accounts. No state here: the company holds this
//! book, and the rules that change it live beside it.

use paydesk_api::models::virtual_accounts::VirtualAccount;
use uuid::Uuid;

use crate::book::Book;
use crate::error::ApiError;
use crate::pagination::Sequenced;

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Record {
    pub(super) seq: u64,
    pub(super) account: VirtualAccount,
}

impl Sequenced for Record {
    fn seq(&self) -> u64 {
        self.seq
    }
}

impl crate::book::Record for Record {
    type Key = Uuid;

    fn key(&self) -> Uuid {
        self.account.id
    }
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct VirtualAccountBook {
    pub(crate) records: Book<Record>,
}

impl VirtualAccountBook {
    pub(super) fn index(&self, id: Uuid) -> Result<usize, ApiError> {
        self.records
            .iter()
            .position(|r| r.account.id == id)
            .ok_or_else(|| ApiError::NotFound(format!("no virtual account {id}")))
    }
}
