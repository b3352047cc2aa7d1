use actix_web::http::StatusCode;
use actix_web::web::{self, Bytes, Data, Path, Query};
use actix_web::{HttpRequest, HttpResponse};
use askama::Template;
use paydesk_api::webhook::SIGNATURE_HEADER;
use serde::Deserialize;
use serde_json::json;
use uuid::Uuid;

use super::receiver::{self, Accepted, Rejected};
use super::store::{self, EventRow};
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::audit::Actor;
use crate::startup::AppState;
use crate::web::error::PortalError;
use crate::web::middleware::{client_ip, user_agent};
use crate::web::page::{done, html, is_htmx, Shell};

const PAGE_SIZE: i64 = 50;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::resource("/hooks/{connection_id}")
            .app_data(web::PayloadConfig::new(1024 * 1024))
            .route(web::post().to(receive)),
    )
    .route("/events", web::get().to(list))
    .route("/events/{id}", web::get().to(one))
    .route("/events/{id}/replay", web::post().to(replay));
}

fn answer(status: StatusCode, message: &str) -> HttpResponse {
    HttpResponse::build(status).json(json!({ "message": message }))
}

/// Verifies, stores once, answers 200 (see `receiver`).
async fn receive(
    state: Data<AppState>,
    req: HttpRequest,
    id: Path<String>,
    body: Bytes,
) -> Result<HttpResponse, PortalError> {
    let Ok(connection_id) = Uuid::parse_str(&id) else {
        return Ok(answer(
            StatusCode::NOT_FOUND,
            &Rejected::UnknownConnection.to_string(),
        ));
    };
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
    Ok(
        match receiver::accept(&state, connection_id, signature, &body, &actor).await {
            Ok(Accepted::New) => answer(StatusCode::OK, "received"),
            Ok(Accepted::AlreadyReceived) => answer(StatusCode::OK, "already received"),
            Err(Rejected::Portal(e)) => return Err(e),
            Err(e @ Rejected::UnknownConnection) => answer(StatusCode::NOT_FOUND, &e.to_string()),
            Err(e @ Rejected::BadSignature) => answer(StatusCode::UNAUTHORIZED, &e.to_string()),
            Err(e @ Rejected::NotAnEvent) => answer(StatusCode::BAD_REQUEST, &e.to_string()),
        },
    )
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
    can_replay: bool,
}

async fn one(state: Data<AppState>, member: Member, id: Path<i64>) -> Result<HttpResponse, PortalError> {
    if !member.can(Permission::AuditRead) {
        member.require(Permission::WebhooksRead)?;
    }
    let event = store::find(&state.pool, member.tenant_id, *id)
        .await?
        .ok_or_else(|| PortalError::NotFound("no such event".to_owned()))?;
    html(&DetailPage {
        shell: Shell::new(&member, "/events"),
        payload: serde_json::to_string_pretty(&event.payload).unwrap_or_default(),
        event,
        can_replay: member.can(Permission::ConnectionsManage),
    })
}

/// Runs a received event through the receiver again (connections admins).
async fn replay(state: Data<AppState>, member: Member, id: Path<i64>) -> Result<HttpResponse, PortalError> {
    member.require(Permission::ConnectionsManage)?;
    let notice = receiver::replay(&state, &member, *id).await?;
    Ok(done(&format!("/events/{id}"), notice))
}
