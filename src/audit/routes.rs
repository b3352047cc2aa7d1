//! The auditors' pages: search with filters and keyset pagination, a
//! record's detail, a streamed CSV export, the signed bundle, the
//! checkpoints with the public key, "verify chain", and the platform log
//! for platform admins.

use actix_web::http::header;
use actix_web::web::{self, Bytes, Data, Form, Path, Query};
use actix_web::{HttpRequest, HttpResponse};
use askama::Template;
use chrono::{DateTime, NaiveDate, Utc};
use futures_util::{Stream, TryStreamExt};
use serde::Deserialize;
use sqlx::PgPool;

use super::checkpoint::Checkpoint;
use super::export::{self as bundle_export, Range};
use super::store::{self, AuditFilter, AuditRow, Log};
use super::verify::{self, Run};
use super::Event;
use crate::access::permissions::Permission;
use crate::access::{Member, PlatformAdmin};
use crate::area::Area;
use crate::state::AppState;
use crate::web::error::PortalError;
use crate::web::listing::{self, CsvRecord};
use crate::web::menu::{MenuEntry, MenuGroup, ShownTo};
use crate::web::page::{done, html, is_htmx, Shell};

const PAGE_SIZE: i64 = 50;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/audit", web::get().to(list))
        .route("/audit/export.csv", web::get().to(export))
        .route("/audit/export.jsonl", web::get().to(export_bundle))
        .route("/audit/verify", web::post().to(verify))
        .route("/audit/verify/{id}", web::get().to(verify_progress))
        .route("/audit/checkpoints", web::get().to(checkpoints_page))
        .route("/audit/checkpoints", web::post().to(sign_checkpoint))
        .route("/audit/checkpoints.json", web::get().to(checkpoints_json))
        .route("/audit/{id}", web::get().to(one))
        .route("/platform/audit", web::get().to(platform_log))
        .route("/platform/audit/export.jsonl", web::get().to(platform_bundle));
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
    /// The search, or a refusal for text no record can hold (the database
    /// refuses a NUL character outright).
    fn filter(&self) -> Result<AuditFilter, PortalError> {
        let fields = [
            &self.actor,
            &self.action,
            &self.target,
            &self.outcome,
            &self.from,
            &self.to,
        ];
        if fields.iter().any(|f| f.contains('\0')) {
            return Err(PortalError::BadRequest(
                "A filter contains a NUL character, which no record holds. Remove it and search again."
                    .to_owned(),
            ));
        }
        let text = |s: &str| Some(s.trim().to_owned()).filter(|s| !s.is_empty());
        Ok(AuditFilter {
            actor: text(&self.actor),
            action: text(&self.action),
            target: text(&self.target),
            outcome: text(&self.outcome),
            from: day(&self.from),
            to: day(&self.to).map(|t| t + chrono::Duration::days(1)),
            before_id: self.before.parse().ok(),
        })
    }

    /// A sentence for each date box that is not a date (and is left out).
    fn notes(&self) -> Vec<String> {
        crate::web::listing::Range::parse(&self.from, &self.to).1
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
    /// The page the rows belong to: `/audit` or `/platform/audit`.
    base: &'static str,
    records: Vec<AuditRow>,
    next: Option<String>,
    /// What the target filter matched, said under the filters.
    target_note: Option<String>,
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

async fn page_of(pool: &PgPool, log: Log, filters: &Filters) -> Result<Rows, PortalError> {
    let found = store::search(pool, log, &filters.filter()?, PAGE_SIZE + 1).await?;
    let mut records = found.records;
    let more = records.len() as i64 > PAGE_SIZE;
    records.truncate(PAGE_SIZE as usize);
    let next = more.then(|| filters.query_string(records.last().map(|r| r.id)));
    let base = match log {
        Log::Tenant(_) => "/audit",
        Log::Platform => "/platform/audit",
    };
    Ok(Rows {
        base,
        records,
        next,
        target_note: found.target.map(|t| t.describe()),
    })
}

async fn list(
    state: Data<AppState>,
    member: Member,
    req: HttpRequest,
    filters: Query<Filters>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::AuditRead)?;
    let filters = filters.into_inner();
    let rows = page_of(&state.pool, Log::Tenant(member.tenant_id), &filters).await?;
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
    let record = store::find(&state.pool, Log::Tenant(member.tenant_id), *id)
        .await?
        .ok_or_else(|| PortalError::NotFound("no such audit record".to_owned()))?;
    html(&DetailPage {
        shell: Shell::new(&member, "/audit"),
        details: serde_json::to_string_pretty(&record.details.value()).unwrap_or_default(),
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

    fn fields(self) -> Vec<String> {
        vec![
            self.id.to_string(),
            self.occurred_at.to_rfc3339(),
            self.actor_email,
            self.action,
            self.target,
            self.outcome,
            self.ip,
            self.user_agent,
            self.details.into_string(),
            hex_of(&self.hash),
        ]
    }
}

/// Lower-case hex through a table: `hex::encode` builds its string a char
/// at a time, which showed in a profile of a million-record export.
fn hex_of(bytes: &[u8]) -> String {
    let mut out = vec![0; bytes.len() * 2];
    hex::encode_to_slice(bytes, &mut out).expect("the buffer is twice the input");
    String::from_utf8(out).expect("hex is ASCII")
}

/// Streams every matching record as CSV (the export itself is audited).
async fn export(
    state: Data<AppState>,
    member: Member,
    filters: Query<Filters>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::AuditExport)?;
    let records = bundle_export::matching(
        state.pool.clone(),
        Log::Tenant(member.tenant_id),
        filters.filter()?,
    );
    let response = listing::export("audit", records).await?;
    let details = serde_json::json!({ "filters": filters.query_string(None) });
    super::member_did(&state.pool, &member, Event::AuditExported, "audit_log", details).await?;
    Ok(response)
}

#[derive(Template)]
#[template(path = "audit/verify.html")]
struct VerifyResult {
    run: Run,
}

#[derive(Template)]
#[template(path = "audit/verify_page.html")]
struct VerifyPage {
    shell: Shell,
    result: VerifyResult,
}

#[derive(Debug, Deserialize)]
struct VerifyForm {
    /// "last": from the last verified point; otherwise the whole chain.
    #[serde(default)]
    from: String,
}

/// Starts "verify chain": a small run answers with its finding, a large
/// one with its progress, which the page polls.
async fn verify(
    state: Data<AppState>,
    member: Member,
    req: HttpRequest,
    form: Form<VerifyForm>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::AuditRead)?;
    let run = super::verify_for(&state.pool, &member, form.from != "last").await?;
    verify_answer(&req, &member, run)
}

/// A run's progress, or its finding once it has ended.
async fn verify_progress(
    state: Data<AppState>,
    member: Member,
    req: HttpRequest,
    id: Path<i64>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::AuditRead)?;
    let run = verify::run_of(&state.pool, Log::Tenant(member.tenant_id), *id)
        .await?
        .ok_or_else(|| PortalError::NotFound("no such verification".to_owned()))?;
    verify_answer(&req, &member, run)
}

fn verify_answer(req: &HttpRequest, member: &Member, run: Run) -> Result<HttpResponse, PortalError> {
    let result = VerifyResult { run };
    if is_htmx(req) {
        return html(&result);
    }
    html(&VerifyPage {
        shell: Shell::new(member, "/audit"),
        result,
    })
}

/// The signed bundle of the records in the filter's date range (the other
/// filters would leave gaps the verifier must refuse, so they are ignored).
async fn export_bundle(
    state: Data<AppState>,
    member: Member,
    filters: Query<Filters>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::AuditExport)?;
    let filter = filters.filter()?;
    let range = Range {
        from: filter.from,
        to: filter.to,
    };
    let log = Log::Tenant(member.tenant_id);
    let lines = bundle_export::bundle_for(&state.pool, &state.key, log, &member.actor(), range).await?;
    Ok(download("audit", lines))
}

/// A bundle as a download named `<name>-<time>.jsonl`.
fn download(name: &str, lines: impl Stream<Item = Result<Bytes, sqlx::Error>> + 'static) -> HttpResponse {
    let filename = format!("{name}-{}.jsonl", Utc::now().format("%Y%m%d-%H%M%S"));
    HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "application/x-ndjson"))
        .insert_header((
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{filename}\""),
        ))
        .streaming(lines.map_err(PortalError::from))
}

/// The platform log's bundle, for platform admins (same format and key).
async fn platform_bundle(
    state: Data<AppState>,
    PlatformAdmin(admin): PlatformAdmin,
    filters: Query<Filters>,
) -> Result<HttpResponse, PortalError> {
    let filter = filters.filter()?;
    let range = Range {
        from: filter.from,
        to: filter.to,
    };
    let lines =
        bundle_export::bundle_for(&state.pool, &state.key, Log::Platform, &admin.actor(), range).await?;
    Ok(download("platform-audit", lines))
}

const CHECKPOINTS_SHOWN: i64 = 100;

#[derive(Template)]
#[template(path = "audit/checkpoints.html")]
struct CheckpointsPage {
    shell: Shell,
    public_key: String,
    checkpoints: Vec<Checkpoint>,
}

/// The tenant's latest checkpoints, newest first, with the public key.
async fn checkpoints_page(state: Data<AppState>, member: Member) -> Result<HttpResponse, PortalError> {
    member.require(Permission::AuditRead)?;
    let mut checkpoints = store::checkpoints(
        &state.pool,
        Log::Tenant(member.tenant_id),
        None,
        CHECKPOINTS_SHOWN,
    )
    .await?;
    checkpoints.reverse();
    html(&CheckpointsPage {
        shell: Shell::new(&member, "/audit"),
        public_key: hex::encode(state.key.derive_audit_signing_key().verifying_key().as_bytes()),
        checkpoints,
    })
}

/// The same, for machines: the key and the checkpoints, oldest first.
async fn checkpoints_json(state: Data<AppState>, member: Member) -> Result<HttpResponse, PortalError> {
    member.require(Permission::AuditRead)?;
    let checkpoints = store::checkpoints(
        &state.pool,
        Log::Tenant(member.tenant_id),
        None,
        CHECKPOINTS_SHOWN,
    )
    .await?;
    Ok(HttpResponse::Ok().json(serde_json::json!({
        "log": Log::Tenant(member.tenant_id).to_string(),
        "public_key": hex::encode(state.key.derive_audit_signing_key().verifying_key().as_bytes()),
        "checkpoints": checkpoints,
    })))
}

/// Signs the tenant's log now (auditors and admins: whoever reads it).
async fn sign_checkpoint(state: Data<AppState>, member: Member) -> Result<HttpResponse, PortalError> {
    member.require(Permission::AuditRead)?;
    let key = state.key.derive_audit_signing_key();
    let signed = super::checkpoint::sign(&state.pool, &key, Log::Tenant(member.tenant_id), None).await?;
    let notice = match signed {
        Some(c) => format!("Signed checkpoint {} over the first {} records.", c.id, c.length),
        None => "Nothing new to sign: the latest checkpoint covers every record.".to_owned(),
    };
    Ok(done("/audit/checkpoints", notice))
}

#[derive(Template)]
#[template(path = "audit/platform.html")]
struct PlatformPage {
    shell: Shell,
    filters: Filters,
    rows: Rows,
}

/// The platform log (tenants, the allow-list, sign-ins that chose no
/// tenant): platform admins only.
async fn platform_log(
    state: Data<AppState>,
    PlatformAdmin(admin): PlatformAdmin,
    req: HttpRequest,
    filters: Query<Filters>,
) -> Result<HttpResponse, PortalError> {
    let filters = filters.into_inner();
    let rows = page_of(&state.pool, Log::Platform, &filters).await?;
    if is_htmx(&req) && !filters.before.is_empty() {
        return html(&rows);
    }
    html(&PlatformPage {
        shell: Shell::for_platform_admin(&state.pool, &admin, "/platform").await?,
        filters,
        rows,
    })
}

/// The audit log: search, export and verification.
pub const AREA: Area = Area {
    routes: configure,
    menu: &[MenuEntry::new(
        MenuGroup::Controls,
        "/audit",
        "Audit log",
        ShownTo::Holding(&[Permission::AuditRead]),
    )],
    kinds: crate::area::no_kinds,
};
