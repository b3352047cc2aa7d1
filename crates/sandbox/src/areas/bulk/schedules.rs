//! Recurring bulk transfers: a schedule holds the items and, at each tick
//! on the sandbox clock (timing, pause and resume in `crate::recurrence`),
//! makes a batch of them and confirms it. A tick whose batch can't be
//! confirmed (the wallet can't pay it, or an item went bad, e.g. a deleted
//! beneficiary) is a `failed` execution naming the reason and the draft
//! batch, and the schedule goes on.
//!
//! Decisions where the documents are silent: a schedule's items must all
//! be valid when it is created or changed (400 listing each item's
//! errors); `DELETE` cancels.

use chrono::{DateTime, Utc};
use paydesk_api::models::bulk::{
    BulkExecution, BulkItemInput, BulkSchedule, BulkScheduleUpdate, NewBatch, NewBulkSchedule,
};
use paydesk_api::models::bulk::{ExecutionStatus, ScheduleStatus};
use paydesk_api::wire::FieldError;
use uuid::Uuid;

use super::model;
use super::schedule_book::BulkScheduleRecord;
use crate::error::ApiError;
use crate::recurrence::{Cadence, Timing};
use crate::scheduler::{Job, Scheduler};
use crate::state::{Company, Effects};

impl BulkScheduleRecord {
    fn show(&mut self, now: DateTime<Utc>) {
        let (s, c) = (&mut self.schedule, &self.cadence);
        s.frequency = c.timing.frequency_name().to_owned();
        s.day_of_week = c.timing.day_of_week();
        s.day_of_month = c.timing.day_of_month();
        s.execution_time = c.timing.execution_time();
        s.status = c.status.clone();
        s.next_execution_at = c.next;
        s.updated_at = now;
    }

    fn queue(&mut self, scheduler: &mut Scheduler, company_id: Uuid) {
        let schedule_id = self.schedule.id;
        self.cadence.queue(scheduler, |generation| Job::BulkScheduleTick {
            company_id,
            schedule_id,
            generation,
        });
    }
}

/// Every item must be valid now; the errors are listed per item.
fn check_items(company: &Company, currency: &str, items: &[BulkItemInput]) -> Result<String, ApiError> {
    let preview = model::preview(
        company,
        &NewBatch {
            currency: currency.to_owned(),
            items: items.to_vec(),
            ..NewBatch::default()
        },
    )?;
    let errors: Vec<FieldError> = preview
        .items
        .iter()
        .flat_map(|i| {
            i.errors.iter().map(move |e| FieldError {
                field: format!("items[{}]", i.row - 1),
                message: e.clone(),
            })
        })
        .collect();
    if !errors.is_empty() {
        return Err(ApiError::Validation {
            detail: format!(
                "{} item error(s); every item of a schedule must be valid",
                errors.len()
            ),
            errors,
        });
    }
    Ok(preview.currency)
}

pub fn create(
    company: &mut Company,
    req: &NewBulkSchedule,
    fx: &mut Effects<'_>,
) -> Result<BulkSchedule, ApiError> {
    let currency = check_items(company, &req.currency, &req.items)?;
    let timing = Timing::check(
        &req.frequency,
        req.day_of_week,
        req.day_of_month,
        &req.execution_time,
    )?;
    let mut record = BulkScheduleRecord {
        schedule: BulkSchedule {
            id: Uuid::new_v4(),
            company_id: company.id,
            name: req.name.trim().to_owned(),
            currency,
            items: req.items.clone(),
            frequency: String::new(),
            day_of_week: 0,
            day_of_month: 0,
            execution_time: String::new(),
            status: ScheduleStatus::Active,
            next_execution_at: None,
            total_executions: 0,
            reference: req.reference.clone(),
            created_at: fx.now,
            updated_at: fx.now,
        },
        executions: Vec::new(),
        cadence: Cadence::start(timing, fx.now),
    };
    record.show(fx.now);
    record.queue(fx.scheduler, company.id);
    let schedule = record.schedule.clone();
    company.bulk_schedules.records.push(record);
    Ok(schedule)
}

pub fn update(
    company: &mut Company,
    id: Uuid,
    req: &BulkScheduleUpdate,
    fx: &mut Effects<'_>,
) -> Result<BulkSchedule, ApiError> {
    let index = company.bulk_schedules.index(id)?;
    if let Some(items) = &req.items {
        let currency = company.bulk_schedules.records[index].schedule.currency.clone();
        check_items(company, &currency, items)?;
    }
    let record = &mut company.bulk_schedules.records[index];
    let timing = record.cadence.timing.changed(
        req.frequency.as_deref(),
        req.day_of_week,
        req.day_of_month,
        req.execution_time.as_deref(),
    )?;
    let requeue = record
        .cadence
        .change(timing, req.status.as_ref().map(ScheduleStatus::as_str), fx.now)?;
    if let Some(items) = &req.items {
        record.schedule.items = items.clone();
    }
    if let Some(name) = &req.name {
        record.schedule.name = name.trim().to_owned();
    }
    record.show(fx.now);
    if requeue {
        record.queue(fx.scheduler, company.id);
    }
    Ok(record.schedule.clone())
}

pub fn cancel(company: &mut Company, id: Uuid, now: DateTime<Utc>) -> Result<BulkSchedule, ApiError> {
    let index = company.bulk_schedules.index(id)?;
    let record = &mut company.bulk_schedules.records[index];
    record.cadence.cancel()?;
    record.show(now);
    Ok(record.schedule.clone())
}

/// One tick: a batch of the items, confirmed.
pub fn tick(company: &mut Company, id: Uuid, generation: u64, fx: &mut Effects<'_>) {
    let Ok(index) = company.bulk_schedules.index(id) else {
        return;
    };
    if !company.bulk_schedules.records[index].cadence.is_due(generation) {
        return;
    }
    let s = company.bulk_schedules.records[index].schedule.clone();
    let run = company.bulk_schedules.records[index].executions.len() + 1;
    let request = NewBatch {
        currency: s.currency.clone(),
        reference: format!("{}#{run}", s.reference),
        description: Some(format!("Scheduled: {}", s.name)),
        items: s.items.clone(),
        csv: None,
    };
    let made = model::create(company, &request, fx.now, Some(s.id));
    let (batch_id, result) = match made {
        Ok(batch) => (
            batch.id.to_string(),
            model::confirm(company, batch.id, fx).map(|_| ()),
        ),
        Err(e) => (String::new(), Err(e)),
    };
    let record = &mut company.bulk_schedules.records[index];
    record.executions.push(BulkExecution {
        id: Uuid::new_v4(),
        batch_id,
        status: if result.is_ok() {
            ExecutionStatus::Completed
        } else {
            ExecutionStatus::Failed
        },
        reason: result.err().map(|e| e.to_string()),
        executed_at: fx.now,
    });
    if record
        .executions
        .last()
        .is_some_and(|e| e.status == ExecutionStatus::Completed)
    {
        record.schedule.total_executions += 1;
    }
    record.cadence.ticked(fx.now);
    record.show(fx.now);
    record.queue(fx.scheduler, company.id);
}
