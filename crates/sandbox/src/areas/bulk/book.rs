//! The company's bulk batches. No state here: the company holds this
//! book, and the rules that change it live beside it.

use paydesk_api::models::bulk::Batch;
use uuid::Uuid;

use crate::book::Book;
use crate::error::ApiError;
use crate::pagination::Sequenced;

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct BatchRecord {
    pub(super) seq: u64,
    pub batch: Batch,
}

impl Sequenced for BatchRecord {
    fn seq(&self) -> u64 {
        self.seq
    }
}

impl crate::book::Record for BatchRecord {
    type Key = Uuid;

    fn key(&self) -> Uuid {
        self.batch.id
    }
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct BatchBook {
    pub records: Book<BatchRecord>,
}

impl BatchBook {
    pub(super) fn index(&self, id: Uuid) -> Result<usize, ApiError> {
        self.records
            .iter()
            .position(|r| r.batch.id == id)
            .ok_or_else(|| ApiError::NotFound(format!("no bulk transfer {id}")))
    }
}
