//! Bulk transfers: batches (`model.rs`, their statuses' moves in
//! `lifecycle.rs`) and their recurring schedules (`schedules.rs`), with
//! thin handlers here.

pub mod book;
mod lifecycle;
pub mod model;
pub mod schedule_book;
pub mod schedules;

use actix_web::http::StatusCode;
use actix_web::web::{Data, Path};
use paydesk_api::models::bulk::{
    BatchData, BatchPage, BulkExecutionList, BulkScheduleData, BulkScheduleList, BulkScheduleUpdate,
    NewBatch, NewBulkSchedule,
};

use crate::error::ApiError;
use crate::pagination::paginate;
use crate::respond::{answer, parse_id, Caller, JsonAnswer, JsonBody, QueryParams};
use crate::state::Shared;

pub use book::BatchBook;
pub use schedule_book::BulkScheduleBook;

/// `POST /api/bulk-transfers/previews`: per-item errors and totals; stores
/// nothing.
pub async fn preview(
    shared: Data<Shared>,
    caller: Caller,
    body: JsonBody<NewBatch>,
) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let data = model::preview(company, &body.value)?;
    Ok(answer(
        StatusCode::OK,
        "Bulk transfer preview",
        data,
        &caller,
        now,
    ))
}

/// `POST /api/bulk-transfers`: a draft; idempotent by `reference`.
pub async fn create(
    shared: Data<Shared>,
    caller: Caller,
    body: JsonBody<NewBatch>,
) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let reference = body.value.reference.trim().to_owned();
    company.once("bulk_transfer", &reference, &body.canonical, |company| {
        let batch = model::create(company, &body.value, now, None)?;
        Ok(answer(
            StatusCode::CREATED,
            "Bulk transfer drafted",
            BatchData { batch },
            &caller,
            now,
        ))
    })
}

/// `GET /api/bulk-transfers` by `status`, newest first.
pub async fn list(shared: Data<Shared>, caller: Caller, q: QueryParams) -> Result<JsonAnswer, ApiError> {
    q.known(&["status"])?;
    let limit = q.limit(20, 100)?;
    let status = q.one_of(
        "status",
        &["draft", "processing", "completed", "partially_failed", "failed"],
    )?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    for index in 0..company.batches.records.len() {
        model::refresh(company, index);
    }
    let page = paginate(
        &company.batches.records,
        |r| status.as_deref().is_none_or(|s| r.batch.status.as_str() == s),
        q.at()?,
        limit,
    )?;
    let data = BatchPage {
        batches: page.items.iter().map(|r| r.batch.clone()).collect(),
        next_cursor: page.next_cursor,
        has_more: page.has_more,
        total: page.total as u64,
    };
    Ok(answer(
        StatusCode::OK,
        "Bulk transfers retrieved",
        data,
        &caller,
        now,
    ))
}

/// `GET /api/bulk-transfers/{batchId}`: items with their current status.
pub async fn get(shared: Data<Shared>, caller: Caller, id: Path<String>) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let batch = model::get(company, id)?;
    Ok(answer(
        StatusCode::OK,
        "Bulk transfer retrieved",
        BatchData { batch },
        &caller,
        now,
    ))
}

/// `POST /api/bulk-transfers/{batchId}/confirm`.
pub async fn confirm(shared: Data<Shared>, caller: Caller, id: Path<String>) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, mut fx) = store.company(caller.company_id, now)?;
    let batch = model::confirm(company, id, &mut fx)?;
    Ok(answer(
        StatusCode::OK,
        "Bulk transfer confirmed",
        BatchData { batch },
        &caller,
        now,
    ))
}

/// `POST /api/bulk-transfers/{batchId}/retry`: failed items only.
pub async fn retry(shared: Data<Shared>, caller: Caller, id: Path<String>) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, mut fx) = store.company(caller.company_id, now)?;
    let batch = model::retry(company, id, &mut fx)?;
    Ok(answer(
        StatusCode::OK,
        "Failed items sent again",
        BatchData { batch },
        &caller,
        now,
    ))
}

/// `POST /api/bulk-transfers/schedules`: idempotent by `reference`.
pub async fn create_schedule(
    shared: Data<Shared>,
    caller: Caller,
    body: JsonBody<NewBulkSchedule>,
) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, mut fx) = store.company(caller.company_id, now)?;
    let reference = body.value.reference.trim().to_owned();
    company.once("bulk_schedule", &reference, &body.canonical, |company| {
        let schedule = schedules::create(company, &body.value, &mut fx)?;
        Ok(answer(
            StatusCode::CREATED,
            "Bulk transfer schedule created",
            BulkScheduleData { schedule },
            &caller,
            now,
        ))
    })
}

/// `GET /api/bulk-transfers/schedules`.
pub async fn list_schedules(
    shared: Data<Shared>,
    caller: Caller,
    q: QueryParams,
) -> Result<JsonAnswer, ApiError> {
    q.only(&["limit", "page"])?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let schedules = company
        .bulk_schedules
        .records
        .iter()
        .rev()
        .map(|r| r.schedule.clone())
        .collect();
    let schedules = q.whole_or_page(schedules)?;
    Ok(answer(
        StatusCode::OK,
        "Bulk transfer schedules retrieved",
        BulkScheduleList { schedules },
        &caller,
        now,
    ))
}

/// `PUT /api/bulk-transfers/schedules/{id}`.
pub async fn update_schedule(
    shared: Data<Shared>,
    caller: Caller,
    id: Path<String>,
    body: JsonBody<BulkScheduleUpdate>,
) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, mut fx) = store.company(caller.company_id, now)?;
    let schedule = schedules::update(company, id, &body.value, &mut fx)?;
    Ok(answer(
        StatusCode::OK,
        "Bulk transfer schedule updated",
        BulkScheduleData { schedule },
        &caller,
        now,
    ))
}

/// `DELETE /api/bulk-transfers/schedules/{id}`.
pub async fn cancel_schedule(
    shared: Data<Shared>,
    caller: Caller,
    id: Path<String>,
) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let schedule = schedules::cancel(company, id, now)?;
    Ok(answer(
        StatusCode::OK,
        "Bulk transfer schedule cancelled",
        BulkScheduleData { schedule },
        &caller,
        now,
    ))
}

/// `GET /api/bulk-transfers/schedules/{id}/executions`, newest first.
pub async fn executions(
    shared: Data<Shared>,
    caller: Caller,
    id: Path<String>,
    q: QueryParams,
) -> Result<JsonAnswer, ApiError> {
    q.only(&["limit", "page"])?;
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let executions = company
        .bulk_schedules
        .get(id)?
        .executions
        .iter()
        .rev()
        .cloned()
        .collect();
    let executions = q.whole_or_page(executions)?;
    Ok(answer(
        StatusCode::OK,
        "Executions retrieved",
        BulkExecutionList { executions },
        &caller,
        now,
    ))
}
