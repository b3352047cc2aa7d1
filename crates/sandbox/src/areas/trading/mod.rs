//! Trading: quotes and orders (`spot/`), scheduled orders (`schedules.rs`)
//! and target orders (`targets/`), with thin handlers here.

pub mod schedule_book;
pub mod schedules;
pub mod spot;
pub mod targets;

use actix_web::http::StatusCode;
use actix_web::web::{Data, Path};
use chrono::{DateTime, Utc};
use paydesk_api::models::trading::{
    ExecutionList, NewSchedule, NewTargetOrder, OrderData, OrderPage, OrderRequest, QuoteData, QuoteRequest,
    ScheduleData, ScheduleList, ScheduleUpdate, TargetOrderData, TargetOrderList,
};
use uuid::Uuid;

use crate::error::ApiError;
use crate::pagination::paginate;
use crate::respond::{answer, parse_id, Caller, JsonAnswer, JsonBody, QueryParams};
use crate::state::{Shared, Store};

pub use schedule_book::ScheduleBook;
pub use spot::TradeBook;
pub use targets::book::TargetBook;

/// A market price moved: target orders it crossed trigger and resting
/// orders it reached fill, in every company.
pub fn prices_moved(store: &mut Store, now: DateTime<Utc>) {
    let Store {
        companies,
        market,
        scheduler,
        ..
    } = store;
    for company in companies.values_mut() {
        targets::check_triggers(company, market, scheduler, now);
        spot::fill_resting(company, market, now);
    }
    let ids: Vec<Uuid> = store.companies.keys().copied().collect();
    ids.into_iter().for_each(|id| store.touch(id));
}

/// `POST /api/trading/quotes`.
pub async fn create_quote(
    shared: Data<Shared>,
    caller: Caller,
    body: JsonBody<QuoteRequest>,
) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, fx) = store.company(caller.company_id, now)?;
    let quote = spot::create_quote(company, &body.value, &fx)?;
    Ok(answer(
        StatusCode::CREATED,
        "Quote created",
        QuoteData { quote },
        &caller,
        now,
    ))
}

/// `GET /api/trading/quotes/{id}`.
pub async fn get_quote(
    shared: Data<Shared>,
    caller: Caller,
    id: Path<String>,
) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let quote = company.trades.quote(id, now)?;
    Ok(answer(
        StatusCode::OK,
        "Quote retrieved",
        QuoteData { quote },
        &caller,
        now,
    ))
}

/// `POST /api/trading/orders`: idempotent by `reference` when one is sent.
pub async fn create_order(
    shared: Data<Shared>,
    caller: Caller,
    body: JsonBody<OrderRequest>,
) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let reference = body.value.reference.clone().unwrap_or_default();
    company.once("order", &reference, &body.canonical, |company| {
        let order = spot::place_order(company, &body.value, now)?;
        Ok(answer(
            StatusCode::CREATED,
            "Order filled",
            OrderData::new(order),
            &caller,
            now,
        ))
    })
}

/// `GET /api/trading/orders`, newest first, by `status`, with `limit`.
pub async fn list_orders(
    shared: Data<Shared>,
    caller: Caller,
    q: QueryParams,
) -> Result<JsonAnswer, ApiError> {
    q.known(&["status"])?;
    let limit = q.limit(20, 100)?;
    let status = q.one_of("status", &["pending", "filled", "rejected", "cancelled"])?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let page = paginate(
        company.trades.orders(),
        |r| status.as_deref().is_none_or(|s| r.order.status.as_str() == s),
        q.at()?,
        limit,
    )?;
    let data = OrderPage {
        orders: page.items.iter().map(|r| r.order.clone()).collect(),
        next_cursor: page.next_cursor,
        has_more: page.has_more,
        total: page.total as u64,
    };
    Ok(answer(StatusCode::OK, "Orders retrieved", data, &caller, now))
}

/// `GET /api/trading/orders/{id}`.
pub async fn get_order(
    shared: Data<Shared>,
    caller: Caller,
    id: Path<String>,
) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let order = company.trades.order(id)?.clone();
    Ok(answer(
        StatusCode::OK,
        "Order retrieved",
        OrderData::new(order),
        &caller,
        now,
    ))
}

/// `DELETE /api/trading/orders/{id}`.
pub async fn cancel_order(
    shared: Data<Shared>,
    caller: Caller,
    id: Path<String>,
) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let order = spot::cancel_order(company, id, now)?;
    Ok(answer(
        StatusCode::OK,
        "Order cancelled",
        OrderData::new(order),
        &caller,
        now,
    ))
}

const SCHEDULE_STATUSES: &[&str] = &["active", "paused", "cancelled", "completed"];

/// `POST /api/trading/scheduled-orders`: idempotent by `reference`.
pub async fn create_schedule(
    shared: Data<Shared>,
    caller: Caller,
    body: JsonBody<NewSchedule>,
) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, mut fx) = store.company(caller.company_id, now)?;
    let reference = body.value.reference.trim().to_owned();
    company.once("scheduled_order", &reference, &body.canonical, |company| {
        let schedule = schedules::create(company, &body.value, &mut fx)?;
        Ok(answer(
            StatusCode::CREATED,
            "Scheduled order created",
            ScheduleData { schedule },
            &caller,
            now,
        ))
    })
}

/// `GET /api/trading/scheduled-orders?status`.
pub async fn list_schedules(
    shared: Data<Shared>,
    caller: Caller,
    q: QueryParams,
) -> Result<JsonAnswer, ApiError> {
    q.only(&["status", "limit", "page"])?;
    let status = q.one_of("status", SCHEDULE_STATUSES)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let schedules = company
        .schedules
        .records
        .iter()
        .rev()
        .map(|r| &r.schedule)
        .filter(|s| status.as_deref().is_none_or(|st| s.status.as_str() == st))
        .cloned()
        .collect();
    let schedules = q.whole_or_page(schedules)?;
    Ok(answer(
        StatusCode::OK,
        "Scheduled orders retrieved",
        ScheduleList { schedules },
        &caller,
        now,
    ))
}

/// `GET /api/trading/scheduled-orders/{id}`.
pub async fn get_schedule(
    shared: Data<Shared>,
    caller: Caller,
    id: Path<String>,
) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let schedule = company.schedules.get(id)?.schedule.clone();
    Ok(answer(
        StatusCode::OK,
        "Scheduled order retrieved",
        ScheduleData { schedule },
        &caller,
        now,
    ))
}

/// `PUT /api/trading/scheduled-orders/{id}`.
pub async fn update_schedule(
    shared: Data<Shared>,
    caller: Caller,
    id: Path<String>,
    body: JsonBody<ScheduleUpdate>,
) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, mut fx) = store.company(caller.company_id, now)?;
    let schedule = schedules::update(company, id, &body.value, &mut fx)?;
    Ok(answer(
        StatusCode::OK,
        "Scheduled order updated",
        ScheduleData { schedule },
        &caller,
        now,
    ))
}

/// `DELETE /api/trading/scheduled-orders/{id}`.
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
        "Scheduled order cancelled",
        ScheduleData { schedule },
        &caller,
        now,
    ))
}

/// `GET /api/trading/scheduled-orders/{id}/executions`, newest first.
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
        .schedules
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
        ExecutionList { executions },
        &caller,
        now,
    ))
}

const TARGET_STATUSES: &[&str] = &["active", "triggered", "filled", "cancelled", "expired"];

/// `POST /api/trading/target-orders`: idempotent by `reference`.
pub async fn create_target(
    shared: Data<Shared>,
    caller: Caller,
    body: JsonBody<NewTargetOrder>,
) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, mut fx) = store.company(caller.company_id, now)?;
    let reference = body.value.reference.trim().to_owned();
    company.once("target_order", &reference, &body.canonical, |company| {
        let order = targets::create(company, &body.value, &mut fx)?;
        Ok(answer(
            StatusCode::CREATED,
            "Target order created",
            TargetOrderData { order },
            &caller,
            now,
        ))
    })
}

/// `GET /api/trading/target-orders?status`.
pub async fn list_targets(
    shared: Data<Shared>,
    caller: Caller,
    q: QueryParams,
) -> Result<JsonAnswer, ApiError> {
    q.only(&["status", "limit", "page"])?;
    let status = q.one_of("status", TARGET_STATUSES)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let orders = company
        .targets
        .records
        .iter()
        .rev()
        .map(|r| &r.order)
        .filter(|o| status.as_deref().is_none_or(|s| o.status.as_str() == s))
        .cloned()
        .collect();
    let orders = q.whole_or_page(orders)?;
    Ok(answer(
        StatusCode::OK,
        "Target orders retrieved",
        TargetOrderList { orders },
        &caller,
        now,
    ))
}

/// `GET /api/trading/target-orders/{id}`.
pub async fn get_target(
    shared: Data<Shared>,
    caller: Caller,
    id: Path<String>,
) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let order = company.targets.get(id)?.clone();
    Ok(answer(
        StatusCode::OK,
        "Target order retrieved",
        TargetOrderData { order },
        &caller,
        now,
    ))
}

/// `DELETE /api/trading/target-orders/{id}`: releases the escrow.
pub async fn cancel_target(
    shared: Data<Shared>,
    caller: Caller,
    id: Path<String>,
) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let order = targets::cancel(company, id, now)?;
    Ok(answer(
        StatusCode::OK,
        "Target order cancelled",
        TargetOrderData { order },
        &caller,
        now,
    ))
}
