//! The auditors' pages: search with filters and keyset pagination, a
//! record's detail, a streamed CSV export and "verify chain".

use actix_web::http::header;
use actix_web::web::{self, Bytes, Data, Path, Query};
use actix_web::{HttpRequest, HttpResponse};
use askama::Template;
use chrono::{DateTime, NaiveDate, Utc};
use futures_util::stream;
use serde::Deserialize;

use super::store::{self, AuditFilter, AuditRow, ChainReport};
use super::Event;
use super::{outcome, NewRecord};
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::startup::AppState;
use crate::web::csv;
use crate::web::error::PortalError;
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

async fn one(state: Data<AppState>, member: Member, id: Path<String>) -> Result<HttpResponse, PortalError> {
    member.require(Permission::AuditRead)?;
    let not_found = || PortalError::NotFound("no such audit record".to_owned());
    let id: i64 = id.parse().map_err(|_| not_found())?;
    let record = store::find(&state.pool, member.tenant_id, id)
        .await?
        .ok_or_else(not_found)?;
    html(&DetailPage {
        shell: Shell::new(&member, "/audit"),
        details: serde_json::to_string_pretty(&record.details).unwrap_or_default(),
        hash: hex::encode(&record.hash),
        prev_hash: hex::encode(&record.prev_hash),
        record,
    })
}

fn csv_row(r: &AuditRow) -> Bytes {
    csv::line(&[
        r.id.to_string(),
        r.occurred_at.to_rfc3339(),
        csv::safe(&r.actor_email),
        r.action.clone(),
        csv::safe(&r.target),
        r.outcome.clone(),
        r.ip.clone(),
        csv::safe(&r.user_agent),
        csv::safe(&r.details.to_string()),
        hex::encode(&r.hash),
    ])
}

/// Streams every matching record, newest first, fetched in keyset batches.
async fn export(
    state: Data<AppState>,
    member: Member,
    filters: Query<Filters>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::AuditExport)?;
    let filter = filters.filter();
    super::store::append(
        &state.pool,
        &[NewRecord::new(
            &member.actor(),
            Some(member.tenant_id),
            Event::AuditExported,
            "audit_log",
            outcome::SUCCESS,
        )
        .with_details(serde_json::json!({ "filters": filters.query_string(None) }))],
    )
    .await?;
    let header_line = csv::line(
        &[
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
        ]
        .map(str::to_owned),
    );
    let pool = state.pool.clone();
    let tenant = member.tenant_id;
    let batches = stream::unfold(Some(filter), move |cursor| {
        let pool = pool.clone();
        async move {
            let filter = cursor?;
            match store::search(&pool, tenant, &filter, 500).await {
                Ok(rows) if rows.is_empty() => None,
                Ok(rows) => {
                    let mut chunk = Vec::new();
                    for r in &rows {
                        chunk.extend_from_slice(&csv_row(r));
                    }
                    let next = AuditFilter {
                        before_id: rows.last().map(|r| r.id),
                        ..filter
                    };
                    Some((Ok::<_, actix_web::Error>(Bytes::from(chunk)), Some(next)))
                }
                Err(e) => {
                    tracing::error!(error = %e, "audit export stopped");
                    Some((
                        Ok(Bytes::from_static(b"# export incomplete: the database failed\n")),
                        None,
                    ))
                }
            }
        }
    });
    let body = futures_util::StreamExt::chain(stream::iter([Ok(header_line)]), batches);
    let filename = format!("audit-{}.csv", Utc::now().format("%Y%m%d-%H%M%S"));
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "text/csv; charset=utf-8"))
        .insert_header((
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{filename}\""),
        ))
        .streaming(body))
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
    let report = store::verify(&state.pool).await?;
    let result = match report {
        ChainReport::Intact { records } => VerifyResult {
            intact: true,
            records,
            broken_id: None,
            reason: "",
        },
        ChainReport::Broken { id, reason, checked } => VerifyResult {
            intact: false,
            records: checked,
            broken_id: store::in_scope(&state.pool, member.tenant_id, id)
                .await?
                .then_some(id),
            reason,
        },
    };
    super::store::append(
        &state.pool,
        &[NewRecord::new(
            &member.actor(),
            Some(member.tenant_id),
            Event::AuditVerified,
            "audit_log",
            if result.intact {
                outcome::SUCCESS
            } else {
                outcome::FAILURE
            },
        )
        .with_details(serde_json::json!({ "records_checked": result.records }))],
    )
    .await?;
    if is_htmx(&req) {
        html(&result)
    } else {
        html(&VerifyPage {
            shell: Shell::new(&member, "/audit"),
            result,
        })
    }
}
