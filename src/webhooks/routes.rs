use actix_web::web::{self, Bytes, Data, Path, Query};
use actix_web::{HttpRequest, HttpResponse};
use askama::Template;
use paydesk_api::models::events::WebhookEvent;
use paydesk_api::webhook::{verify_webhook, SIGNATURE_HEADER};
use secrecy::ExposeSecret;
use serde::Deserialize;
use serde_json::json;
use uuid::Uuid;

use super::store::{self, EventRow};
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::audit::Event;
use crate::audit::{self, outcome, Actor, NewRecord};
use crate::startup::AppState;
use crate::tenants::store as tenants;
use crate::web::error::PortalError;
use crate::web::middleware::{client_ip, user_agent};
use crate::web::page::{html, is_htmx, Shell};

const PAGE_SIZE: i64 = 50;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/hooks/{connection_id}")
            .app_data(web::PayloadConfig::new(1024 * 1024))
            .route(web::post().to(receive)),
    )
    .route("/events", web::get().to(list))
    .route("/events/{id}", web::get().to(one));
}

fn answer(status: actix_web::http::StatusCode, message: &str) -> HttpResponse {
    HttpResponse::build(status).json(json!({ "message": message }))
}

/// Verifies, stores once, answers 200. The secret is the connection's
/// webhook secret, or its client secret when it has none (the service
/// signs with that by default).
async fn receive(
    state: Data<AppState>,
    req: HttpRequest,
    id: Path<String>,
    body: Bytes,
) -> Result<HttpResponse, PortalError> {
    use actix_web::http::StatusCode;
    let Ok(connection_id) = Uuid::parse_str(&id) else {
        return Ok(answer(StatusCode::NOT_FOUND, "no such connection"));
    };
    let Some(connection) = tenants::connection_by_id(&state.pool, connection_id).await? else {
        return Ok(answer(StatusCode::NOT_FOUND, "no such connection"));
    };
    let sealed = connection
        .webhook_secret_enc
        .as_ref()
        .unwrap_or(&connection.client_secret_enc);
    let secret = state.key.open(sealed)?;
    let signature = req
        .headers()
        .get(SIGNATURE_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let actor = Actor {
        user_id: None,
        email: "webhook".to_owned(),
        ip: client_ip(&req),
        user_agent: user_agent(&req),
    };
    if !verify_webhook(secret.expose_secret(), &body, signature) {
        crate::metrics::webhook(false);
        audit::store::append(
            &state.pool,
            &[NewRecord::new(
                &actor,
                Some(connection.tenant_id),
                Event::WebhooksRejected,
                format!("connection:{connection_id}"),
                outcome::FAILURE,
            )
            .with_details(json!({ "reason": "bad signature", "bytes": body.len() }))],
        )
        .await?;
        return Ok(answer(
            StatusCode::UNAUTHORIZED,
            "the x-service-signature does not match the body",
        ));
    }
    let Ok(event) = serde_json::from_slice::<WebhookEvent>(&body) else {
        crate::metrics::webhook(false);
        return Ok(answer(StatusCode::BAD_REQUEST, "the body is not an event"));
    };
    crate::metrics::webhook(true);
    let payload: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let new = store::store_once(
        &state.pool,
        connection_id,
        connection.tenant_id,
        &event.event_id,
        &event.event,
        &payload,
    )
    .await?;
    if new && event.event.starts_with("payouts.") {
        if let Some(payout_id) = event.data["id"].as_str() {
            crate::payouts::action::on_event(&state.pool, connection.tenant_id, payout_id, &event.event)
                .await?;
        }
    }
    if new {
        audit::store::append(
            &state.pool,
            &[NewRecord::new(
                &actor,
                Some(connection.tenant_id),
                Event::WebhooksReceived,
                &event.event_id,
                outcome::SUCCESS,
            )
            .with_details(json!({ "event": event.event, "connection": connection_id }))],
        )
        .await?;
    }
    Ok(answer(
        StatusCode::OK,
        if new { "received" } else { "already received" },
    ))
}

#[derive(Template)]
#[template(path = "webhooks/rows.html")]
struct Rows {
    events: Vec<EventRow>,
    next: Option<i64>,
}

#[derive(Template)]
#[template(path = "webhooks/list.html")]
struct ListPage {
    shell: Shell,
    rows: Rows,
}

#[derive(Deserialize)]
pub struct Before {
    #[serde(default)]
    before: Option<i64>,
}

async fn list(
    state: Data<AppState>,
    member: Member,
    req: HttpRequest,
    q: Query<Before>,
) -> Result<HttpResponse, PortalError> {
    if !member.can(Permission::AuditRead) {
        member.require(Permission::WebhooksRead)?;
    }
    let mut events = store::list(&state.pool, member.tenant_id, q.before, PAGE_SIZE + 1).await?;
    let more = events.len() as i64 > PAGE_SIZE;
    events.truncate(PAGE_SIZE as usize);
    let next = if more { events.last().map(|e| e.id) } else { None };
    let rows = Rows { events, next };
    if is_htmx(&req) && q.before.is_some() {
        return html(&rows);
    }
    html(&ListPage {
        shell: Shell::new(&member, "/events"),
        rows,
    })
}

#[derive(Template)]
#[template(path = "webhooks/detail.html")]
struct DetailPage {
    shell: Shell,
    event: EventRow,
    payload: String,
}

async fn one(state: Data<AppState>, member: Member, id: Path<String>) -> Result<HttpResponse, PortalError> {
    if !member.can(Permission::AuditRead) {
        member.require(Permission::WebhooksRead)?;
    }
    let not_found = || PortalError::NotFound("no such event".to_owned());
    let id: i64 = id.parse().map_err(|_| not_found())?;
    let event = store::find(&state.pool, member.tenant_id, id)
        .await?
        .ok_or_else(not_found)?;
    html(&DetailPage {
        shell: Shell::new(&member, "/events"),
        payload: serde_json::to_string_pretty(&event.payload).unwrap_or_default(),
        event,
    })
}
