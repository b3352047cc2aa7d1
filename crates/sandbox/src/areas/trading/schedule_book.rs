//! The company's scheduled orders, each with its cadence and executions. No state here: the company holds this
//! book, and the rules that change it live beside it.

use chrono::NaiveDate;
use paydesk_api::models::trading::{Execution, Schedule};
use uuid::Uuid;

use crate::book::Book;
use crate::error::ApiError;
use crate::recurrence::Cadence;

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ScheduleRecord {
    pub schedule: Schedule,
    pub executions: Vec<Execution>,
    pub(super) cadence: Cadence,
    /// The last day a tick may run.
    #[serde(default)]
    pub(super) end_date: Option<NaiveDate>,
}

impl crate::book::Record for ScheduleRecord {
    type Key = Uuid;

    fn key(&self) -> Uuid {
        self.schedule.id
    }
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct ScheduleBook {
    pub records: Book<ScheduleRecord>,
}

impl ScheduleBook {
    pub fn get(&self, id: Uuid) -> Result<&ScheduleRecord, ApiError> {
        self.records
            .iter()
            .find(|r| r.schedule.id == id)
            .ok_or_else(|| ApiError::NotFound(format!("no scheduled order {id}")))
    }

    pub(super) fn index(&self, id: Uuid) -> Result<usize, ApiError> {
        self.records
            .iter()
            .position(|r| r.schedule.id == id)
            .ok_or_else(|| ApiError::NotFound(format!("no scheduled order {id}")))
    }
}
