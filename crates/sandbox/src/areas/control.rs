//! The sandbox's control API (DESIGN.md): the clock, the company's webhook
//! setting, injected faults, reset, the request journal and the webhook
//! deliveries. Signed like every call; acts on the
//! caller's company (the clock is the process's one clock).

use actix_web::http::StatusCode;
use actix_web::web::Data;
use actix_web::web::Path;
use paydesk_api::models::control::{
    AddWebhookFault, AdvanceClock, ArmedFault, ClockNow, DeliveryList, FaultList, RequestJournal, ResetDone,
    SetWebhook, WebhookFaultList, WebhookSetting,
};

use crate::error::ApiError;
use crate::faults::{Chance, Fault};
use crate::journal::KEPT_PER_COMPANY;
use crate::respond::{envelope, Caller, JsonAnswer, JsonBody, QueryParams};
use crate::state::{Company, Shared};
use crate::webhooks;
use crate::webhooks::DeliveryFault;

/// Ten years: enough for any test, far from overflowing the clock.
const MAX_ADVANCE_SECS: u64 = 10 * 366 * 24 * 3600;

/// `GET /sandbox/clock`.
pub async fn clock(shared: Data<Shared>, caller: Caller) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    Ok(envelope(
        StatusCode::OK,
        "Sandbox clock",
        ClockNow { now },
        &caller.request_id,
        now,
    ))
}

/// `POST /sandbox/clock/advance`: runs every transition that falls due,
/// including first webhook attempts, before answering.
pub async fn advance(
    shared: Data<Shared>,
    caller: Caller,
    body: JsonBody<AdvanceClock>,
) -> Result<JsonAnswer, ApiError> {
    let seconds = body.value.seconds;
    if seconds > MAX_ADVANCE_SECS {
        return Err(ApiError::field(
            "seconds",
            format!("must be at most {MAX_ADVANCE_SECS}"),
        ));
    }
    let now = shared.advance(seconds as i64, super::jobs::run).await;
    Ok(envelope(
        StatusCode::OK,
        "Sandbox clock advanced",
        ClockNow { now },
        &caller.request_id,
        now,
    ))
}

/// Sets the webhook URL and, optionally, the secret that signs events.
pub fn set_webhook(company: &mut Company, request: &SetWebhook) -> Result<WebhookSetting, ApiError> {
    webhooks::check_url(&request.url).map_err(|reason| ApiError::field("url", reason))?;
    if let Some(secret) = &request.secret {
        if secret.is_empty() {
            return Err(ApiError::field(
                "secret",
                "must not be empty; omit it to keep the current secret",
            ));
        }
        company.webhook_secret = secret.clone();
    }
    company.webhook_url = Some(request.url.clone());
    Ok(WebhookSetting {
        url: request.url.clone(),
    })
}

/// `PUT /sandbox/webhook`.
pub async fn webhook(
    shared: Data<Shared>,
    caller: Caller,
    body: JsonBody<SetWebhook>,
) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let setting = set_webhook(company, &body.value)?;
    Ok(envelope(
        StatusCode::OK,
        "Webhook URL updated",
        setting,
        &caller.request_id,
        now,
    ))
}

fn fault_list(company: &Company) -> FaultList {
    FaultList {
        faults: company
            .faults
            .iter()
            .map(|f| ArmedFault {
                method: f.method.clone(),
                path_prefix: f.path_prefix.clone(),
                mode: f.mode.name(),
                count: f.remaining,
                probability: f.chance.as_ref().map(|c| c.probability),
                seed: f.chance.as_ref().map(|c| c.seed),
            })
            .collect(),
    }
}

/// The body of `POST /sandbox/faults`: a fault on the next `count` matching
/// calls, or, with `probability` (and `seed`), on matching calls drawn
/// by a seeded chance.
#[derive(serde::Deserialize, utoipa::ToSchema)]
pub struct FaultRequest {
    method: String,
    path_prefix: String,
    mode: String,
    count: u32,
    #[serde(default)]
    probability: Option<f64>,
    #[serde(default)]
    seed: Option<u64>,
}

/// `POST /sandbox/faults`.
pub async fn add_fault(
    shared: Data<Shared>,
    caller: Caller,
    body: JsonBody<FaultRequest>,
) -> Result<JsonAnswer, ApiError> {
    let request = &body.value;
    let fault = Fault::with_chance(
        &request.method,
        &request.path_prefix,
        &request.mode,
        request.count,
        Chance::new(request.probability, request.seed)?,
    )?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    company.faults.push(fault);
    Ok(envelope(
        StatusCode::CREATED,
        "Fault armed",
        fault_list(company),
        &caller.request_id,
        now,
    ))
}

/// `DELETE /sandbox/faults`.
pub async fn clear_faults(shared: Data<Shared>, caller: Caller) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    company.faults.clear();
    Ok(envelope(
        StatusCode::OK,
        "Faults cleared",
        fault_list(company),
        &caller.request_id,
        now,
    ))
}

/// `POST /sandbox/reset`: the caller's company as its fixture made it.
pub async fn reset(shared: Data<Shared>, caller: Caller) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    shared.store().reset_company(caller.company_id, now)?;
    Ok(envelope(
        StatusCode::OK,
        "Company reset to its fixture state",
        ResetDone {
            company_id: caller.company_id,
            reset_at: now,
        },
        &caller.request_id,
        now,
    ))
}

/// `GET /sandbox/requests?limit`: the company's latest calls, newest first
/// (the journal's own reads are not journaled).
pub async fn requests(shared: Data<Shared>, caller: Caller, q: QueryParams) -> Result<JsonAnswer, ApiError> {
    q.only(&["limit"])?;
    let limit = q.limit(50, KEPT_PER_COMPANY)?;
    let requests = shared.journal().latest(caller.company_id, limit);
    Ok(envelope(
        StatusCode::OK,
        "Requests retrieved",
        RequestJournal { requests },
        &caller.request_id,
        shared.clock.now(),
    ))
}

/// `GET /sandbox/webhooks/deliveries?limit`: newest first.
pub async fn deliveries(
    shared: Data<Shared>,
    caller: Caller,
    q: QueryParams,
) -> Result<JsonAnswer, ApiError> {
    q.only(&["limit"])?;
    let limit = q.limit(50, 1_000)?;
    let deliveries = shared
        .store()
        .outbox
        .of_company(caller.company_id)
        .into_iter()
        .take(limit)
        .map(|d| d.wire())
        .collect();
    Ok(envelope(
        StatusCode::OK,
        "Webhook deliveries retrieved",
        DeliveryList { deliveries },
        &caller.request_id,
        shared.clock.now(),
    ))
}

/// `POST /sandbox/webhooks/deliveries/{id}/resend`: one more attempt now,
/// made before answering (the answer shows it); a failed resend is not
/// retried.
pub async fn resend(shared: Data<Shared>, caller: Caller, id: Path<String>) -> Result<JsonAnswer, ApiError> {
    let missing = || ApiError::NotFound(format!("no webhook delivery {id}"));
    let delivery_id = id.parse::<u64>().map_err(|_| missing())?;
    let delivery = shared
        .resend(caller.company_id, delivery_id)
        .await
        .map(|d| d.wire())
        .ok_or_else(missing)?;
    Ok(envelope(
        StatusCode::OK,
        "Webhook delivery resent",
        delivery,
        &caller.request_id,
        shared.clock.now(),
    ))
}

fn webhook_fault_list(faults: &[DeliveryFault]) -> WebhookFaultList {
    WebhookFaultList {
        faults: faults
            .iter()
            .map(|f| AddWebhookFault {
                mode: f.mode.name(),
                event: Some(f.event_prefix.clone()).filter(|e| !e.is_empty()),
                count: f.remaining,
                probability: f.chance.as_ref().map(|c| c.probability),
                seed: f.chance.as_ref().map(|c| c.seed),
            })
            .collect(),
    }
}

/// `POST /sandbox/webhooks/faults`: a fault on the company's next matching
/// webhook deliveries.
pub async fn add_webhook_fault(
    shared: Data<Shared>,
    caller: Caller,
    body: JsonBody<AddWebhookFault>,
) -> Result<JsonAnswer, ApiError> {
    let request = &body.value;
    let fault = DeliveryFault::new(
        request.event.as_deref().unwrap_or_default(),
        &request.mode,
        request.count,
        Chance::new(request.probability, request.seed)?,
    )?;
    let now = shared.clock.now();
    let mut store = shared.store();
    store.outbox.add_fault(caller.company_id, fault);
    Ok(envelope(
        StatusCode::CREATED,
        "Webhook fault armed",
        webhook_fault_list(store.outbox.faults_of(caller.company_id)),
        &caller.request_id,
        now,
    ))
}

/// `GET /sandbox/webhooks/faults`.
pub async fn webhook_faults(shared: Data<Shared>, caller: Caller) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let store = shared.store();
    Ok(envelope(
        StatusCode::OK,
        "Webhook faults retrieved",
        webhook_fault_list(store.outbox.faults_of(caller.company_id)),
        &caller.request_id,
        now,
    ))
}

/// `DELETE /sandbox/webhooks/faults`.
pub async fn clear_webhook_faults(shared: Data<Shared>, caller: Caller) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let mut store = shared.store();
    store.outbox.clear_faults(caller.company_id);
    Ok(envelope(
        StatusCode::OK,
        "Webhook faults cleared",
        webhook_fault_list(&[]),
        &caller.request_id,
        now,
    ))
}
