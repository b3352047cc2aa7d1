//! The company's bulk-transfer schedules, each with its cadence and executions. No state here: the company holds this
//! book, and the rules that change it live beside it.

use paydesk_api::models::bulk::{BulkExecution, BulkSchedule};
use uuid::Uuid;

use crate::book::Book;
use crate::error::ApiError;
use crate::recurrence::Cadence;

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct BulkScheduleRecord {
    pub schedule: BulkSchedule,
    pub executions: Vec<BulkExecution>,
    pub(super) cadence: Cadence,
}

impl crate::book::Record for BulkScheduleRecord {
    type Key = Uuid;

    fn key(&self) -> Uuid {
        self.schedule.id
    }
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct BulkScheduleBook {
    pub records: Book<BulkScheduleRecord>,
}

impl BulkScheduleBook {
    pub fn get(&self, id: Uuid) -> Result<&BulkScheduleRecord, ApiError> {
        self.records
            .iter()
            .find(|r| r.schedule.id == id)
            .ok_or_else(|| ApiError::NotFound(format!("no bulk transfer schedule {id}")))
    }

    pub(super) fn index(&self, id: Uuid) -> Result<usize, ApiError> {
        self.records
            .iter()
            .position(|r| r.schedule.id == id)
            .ok_or_else(|| ApiError::NotFound(format!("no bulk transfer schedule {id}")))
    }
}
