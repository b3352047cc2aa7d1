//! The auditors' pages: search with filters and keyset pagination, a
//! record's detail, a streamed CSV export and "verify chain".

use actix_web::web::{self, Data, Path, Query};
use actix_web::{HttpRequest, HttpResponse};
use askama::Template;
use chrono::{DateTime, NaiveDate, Utc};
use futures_util::{stream, Stream, TryStreamExt};
use serde::Deserialize;
use sqlx::PgPool;
use uuid::Uuid;

use super::store::{self, AuditFilter, AuditRow};
use super::Event;
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::startup::AppState;
use crate::web::error::PortalError;
use crate::web::listing::{self, CsvRecord};
use crate::web::page::{html, is_htmx, Shell};

const PAGE_SIZE: i64 = 50;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/audit", web::get().to(list))
        .route("/audit/export.csv", web::get().to(export))
        .route("/audit/verify", web::post().to(verify))
        .route("/audit/{id}", web::get().to(one));
}

#[derive(Debug, Default, Deserialize)]
pub struct Filters {
    #[serde(default)]
    actor: String,
    #[serde(default)]
    action: String,
    #[serde(default)]
    target: String,
    #[serde(default)]
    outcome: String,
    /// YYYY-MM-DD, inclusive.
    #[serde(default)]
    from: String,
    /// YYYY-MM-DD, inclusive.
    #[serde(default)]
    to: String,
    #[serde(default)]
    before: String,
}

fn day(raw: &str) -> Option<DateTime<Utc>> {
    NaiveDate::parse_from_str(raw.trim(), "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc())
}

impl Filters {
    fn filter(&self) -> AuditFilter {
        let text = |s: &str| Some(s.trim().to_owned()).filter(|s| !s.is_empty());
        AuditFilter {
            actor: text(&self.actor),
            action: text(&self.action),
            target: text(&self.target),
            outcome: text(&self.outcome),
            from: day(&self.from),
            to: day(&self.to).map(|t| t + chrono::Duration::days(1)),
            before_id: self.before.parse().ok(),
        }
    }

    fn query_string(&self, before: Option<i64>) -> String {
        let before = before.map(|b| b.to_string()).unwrap_or_default();
        serde_urlencoded::to_string([
            ("actor", self.actor.as_str()),
            ("action", self.action.as_str()),
            ("target", self.target.as_str()),
            ("outcome", self.outcome.as_str()),
            ("from", self.from.as_str()),
            ("to", self.to.as_str()),
            ("before", before.as_str()),
        ])
        .unwrap_or_default()
    }
}

#[derive(Template)]
#[template(path = "audit/rows.html")]
struct Rows {
    records: Vec<AuditRow>,
    next: Option<String>,
}

#[derive(Template)]
#[template(path = "audit/list.html")]
struct ListPage {
    shell: Shell,
    filters: Filters,
    rows: Rows,
    can_export: bool,
    export_query: String,
}

async fn page_of(state: &AppState, member: &Member, filters: &Filters) -> Result<Rows, PortalError> {
    let mut records = store::search(&state.pool, member.tenant_id, &filters.filter(), PAGE_SIZE + 1).await?;
    let more = records.len() as i64 > PAGE_SIZE;
    records.truncate(PAGE_SIZE as usize);
    let next = more.then(|| filters.query_string(records.last().map(|r| r.id)));
    Ok(Rows { records, next })
}

async fn list(
    state: Data<AppState>,
    member: Member,
    req: HttpRequest,
    filters: Query<Filters>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::AuditRead)?;
    let filters = filters.into_inner();
    let rows = page_of(&state, &member, &filters).await?;
    if is_htmx(&req) && !filters.before.is_empty() {
        return html(&rows);
    }
    html(&ListPage {
        shell: Shell::new(&member, "/audit"),
        export_query: filters.query_string(None),
        filters,
        rows,
        can_export: member.can(Permission::AuditExport),
    })
}

#[derive(Template)]
#[template(path = "audit/detail.html")]
struct DetailPage {
    shell: Shell,
    record: AuditRow,
    details: String,
    hash: String,
    prev_hash: String,
}

async fn one(state: Data<AppState>, member: Member, id: Path<i64>) -> Result<HttpResponse, PortalError> {
    member.require(Permission::AuditRead)?;
    let record = store::find(&state.pool, member.tenant_id, *id)
        .await?
        .ok_or_else(|| PortalError::NotFound("no such audit record".to_owned()))?;
    html(&DetailPage {
        shell: Shell::new(&member, "/audit"),
        details: serde_json::to_string_pretty(&record.details).unwrap_or_default(),
        hash: hex::encode(&record.hash),
        prev_hash: hex::encode(&record.prev_hash),
        record,
    })
}

impl CsvRecord for AuditRow {
    const HEADER: &'static [&'static str] = &[
        "id",
        "occurred_at",
        "actor",
        "action",
        "target",
        "outcome",
        "ip",
        "user_agent",
        "details",
        "hash",
    ];

    fn fields(&self) -> Vec<String> {
        vec![
            self.id.to_string(),
            self.occurred_at.to_rfc3339(),
            self.actor_email.clone(),
            self.action.clone(),
            self.target.clone(),
            self.outcome.clone(),
            self.ip.clone(),
            self.user_agent.clone(),
            self.details.to_string(),
            hex::encode(&self.hash),
        ]
    }
}

/// Every record matching `filter`, newest first, read in keyset batches.
fn matching(
    pool: PgPool,
    tenant: Uuid,
    filter: AuditFilter,
) -> impl Stream<Item = Result<AuditRow, sqlx::Error>> {
    stream::try_unfold(Some(filter), move |cursor| {
        let pool = pool.clone();
        async move {
            let Some(filter) = cursor else {
                return Ok::<_, sqlx::Error>(None);
            };
            let rows = store::search(&pool, tenant, &filter, 500).await?;
            let next = rows.last().map(|r| AuditFilter {
                before_id: Some(r.id),
                ..filter.clone()
            });
            Ok(Some((stream::iter(rows.into_iter().map(Ok)), next)))
        }
    })
    .try_flatten()
}

/// Streams every matching record as CSV (the export itself is audited).
async fn export(
    state: Data<AppState>,
    member: Member,
    filters: Query<Filters>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::AuditExport)?;
    let records = matching(state.pool.clone(), member.tenant_id, filters.filter());
    let response = listing::export("audit", records).await?;
    let details = serde_json::json!({ "filters": filters.query_string(None) });
    super::member_did(&state.pool, &member, Event::AuditExported, "audit_log", details).await?;
    Ok(response)
}

#[derive(Template)]
#[template(path = "audit/verify.html")]
struct VerifyResult {
    intact: bool,
    records: u64,
    broken_id: Option<i64>,
    reason: &'static str,
}

#[derive(Template)]
#[template(path = "audit/verify_page.html")]
struct VerifyPage {
    shell: Shell,
    result: VerifyResult,
}

/// Walks the whole chain and reports the first broken link; a record of
/// another tenant is named only by its position.
async fn verify(
    state: Data<AppState>,
    member: Member,
    req: HttpRequest,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::AuditRead)?;
    let v = super::verify_for(&state.pool, &member).await?;
    let result = VerifyResult {
        intact: v.intact,
        records: v.records,
        broken_id: v.broken_id,
        reason: v.reason,
    };
    if is_htmx(&req) {
        return html(&result);
    }
    html(&VerifyPage {
        shell: Shell::new(&member, "/audit"),
        result,
    })
}
