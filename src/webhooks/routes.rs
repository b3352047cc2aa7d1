use actix_web::http::StatusCode;
use actix_web::web::{self, Bytes, Data, Path, Query};
use actix_web::{HttpRequest, HttpResponse};
use askama::Template;
use futures_util::Stream;
use paydesk_api::webhook::SIGNATURE_HEADER;
use serde::{Deserialize, Serialize};
use serde_json::json;
use uuid::Uuid;

use super::receiver::{self, Accepted, Rejected};
use super::store::{self, EventRow};
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::area::Area;
use crate::audit::{self, Actor};
use crate::state::AppState;
use crate::web::error::PortalError;
use crate::web::listing::{self, CsvRecord, Dates, Listing, Range};
use crate::web::menu::{MenuEntry, MenuGroup, ShownTo};
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
    .route("/events/export.csv", web::get().to(export))
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
    next: Option<String>,
}

#[derive(Template)]
#[template(path = "webhooks/list.html")]
struct ListPage {
    shell: Shell,
    filters: Filters,
    rows: Rows,
    export_query: String,
}

/// The list's filters; the cursor is the id of the last event shown.
#[derive(Debug, Default, Deserialize, Serialize)]
pub struct Filters {
    #[serde(flatten)]
    dates: Dates,
    #[serde(default)]
    cursor: String,
}

impl Filters {
    fn before(&self) -> Option<i64> {
        self.cursor.parse().ok()
    }
}

fn require_events(member: &Member) -> Result<(), PortalError> {
    match member.can(Permission::AuditRead) {
        true => Ok(()),
        false => member.require(Permission::WebhooksRead),
    }
}

async fn list(
    state: Data<AppState>,
    member: Member,
    req: HttpRequest,
    filters: Query<Filters>,
) -> Result<HttpResponse, PortalError> {
    require_events(&member)?;
    let filters = filters.into_inner();
    let range = filters.dates.range();
    let mut events = store::list(
        &state.pool,
        member.tenant_id,
        filters.before(),
        range,
        PAGE_SIZE + 1,
    )
    .await?;
    let more = events.len() as i64 > PAGE_SIZE;
    events.truncate(PAGE_SIZE as usize);
    let last = events.last().filter(|_| more).map(|e| e.id.to_string());
    let page = Listing::new(events, 0, last.as_deref(), &filters);
    let rows = Rows {
        events: page.rows,
        next: page.next,
    };
    if is_htmx(&req) && filters.before().is_some() {
        return html(&rows);
    }
    html(&ListPage {
        shell: Shell::new(&member, "/events"),
        export_query: listing::query(&filters, None),
        filters,
        rows,
    })
}

/// Every event the dates match, newest first, read 500 at a time.
fn every(
    state: &AppState,
    member: &Member,
    range: Range,
) -> impl Stream<Item = Result<EventRow, sqlx::Error>> {
    let (pool, tenant) = (state.pool.clone(), member.tenant_id);
    listing::all_pages(move |cursor| {
        let pool = pool.clone();
        async move {
            let before = cursor.and_then(|c| c.parse().ok());
            let rows = store::list(&pool, tenant, before, range, EXPORT_PAGE).await?;
            let next = rows.last().filter(|_| rows.len() as i64 == EXPORT_PAGE);
            let next = next.map(|e| e.id.to_string());
            Ok((rows, next))
        }
    })
}

const EXPORT_PAGE: i64 = 500;

impl CsvRecord for EventRow {
    const HEADER: &'static [&'static str] = &["received_at", "event_id", "event", "connection", "payload"];

    fn fields(self) -> Vec<String> {
        vec![
            self.received_at.to_rfc3339(),
            self.event_id.clone(),
            self.event.clone(),
            self.connection_name.clone(),
            self.payload.to_string(),
        ]
    }
}

/// Streams every event the dates match as CSV, on record.
async fn export(
    state: Data<AppState>,
    member: Member,
    filters: Query<Filters>,
) -> Result<HttpResponse, PortalError> {
    require_events(&member)?;
    let response = listing::export("events", every(&state, &member, filters.dates.range())).await?;
    audit::exported(&state.pool, &member, "events", &*filters).await?;
    Ok(response)
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
    require_events(&member)?;
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

/// The events the payments service sent.
pub const AREA: Area = Area {
    routes: configure,
    menu: &[MenuEntry::new(
        MenuGroup::Developers,
        "/events",
        "Events",
        ShownTo::Holding(&[Permission::WebhooksRead, Permission::AuditRead]),
    )],
    kinds: crate::area::no_kinds,
};
