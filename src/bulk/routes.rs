//! The bulk transfer pages: the upload form with the batches below it (and
//! the requests still waiting for approval), the CSV template, and a
//! batch's page whose items update by themselves while any is on the way.

use std::future::Future;

use actix_web::http::header;
use actix_web::web::{self, Data, Form, Path, Query};
use actix_web::{HttpRequest, HttpResponse};
use askama::Template;

use chrono::{DateTime, Utc};
use paydesk_api::models::bulk::{Batch, BulkItem, BulkItemStatus};
use paydesk_api::{ApiError, Client};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::action::{batch_of, BulkTransferAction, RetryAction};
use super::sheet::{self, Draft};
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::approvals::Action;
use crate::approvals::Gated;
use crate::approvals::{self, ActionRequest};
use crate::approvals::{confirm_page, Submission};
use crate::area::Area;
use crate::audit;
use crate::state::AppState;
use crate::web::error::PortalError;
use crate::web::form::{split, FieldErrors};
use crate::web::listing::{self, CsvRecord, Dates, Listing, Range};
use crate::web::menu::{MenuEntry, MenuGroup, ShownTo};
use crate::web::page::{done, html, is_htmx, ok, redirect, unprocessable, Section, Shell};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/bulk-transfers", web::get().to(index))
        .route("/bulk-transfers", web::post().to(file))
        .route("/bulk-transfers/template.csv", web::get().to(template))
        .route("/bulk-transfers/export.csv", web::get().to(export))
        .route("/bulk-transfers/{id}", web::get().to(detail))
        .route("/bulk-transfers/{id}/live", web::get().to(live))
        .route("/bulk-transfers/{id}/retry", web::post().to(retry));
}

#[derive(Template)]
#[template(path = "bulk/index.html")]
struct IndexPage {
    shell: Shell,
    draft: Draft,
    errors: FieldErrors,
    can_request: bool,
    filters: Filters,
    batches: Section<BatchRows>,
    capped: bool,
    export_query: String,
    waiting: Vec<ActionRequest>,
}

/// The batch list's filters, as they appear in the query string.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct Filters {
    #[serde(default)]
    status: String,
    #[serde(flatten)]
    dates: Dates,
    #[serde(default)]
    cursor: String,
}

impl Filters {
    fn status(&self) -> Option<String> {
        Some(self.status.clone()).filter(|s| !s.is_empty())
    }
}

/// The batches' rows and the "load more" link.
#[derive(Template)]
#[template(path = "bulk/batch_rows.html")]
struct BatchRows {
    batches: Vec<Batch>,
    next: Option<String>,
}

impl BatchRows {
    fn total(&self, b: &Batch) -> String {
        sheet::shown(b.totals.total, &b.currency)
    }
}

impl listing::Cursored for Filters {
    type Row = Batch;

    fn fetch(
        &self,
        client: &Client,
        cursor: Option<String>,
        limit: u32,
    ) -> impl Future<Output = Result<listing::Page<Batch>, ApiError>> + Send + use<> {
        let (client, status) = (client.clone(), self.status());
        async move {
            let p = client
                .bulk_transfers(status.as_deref(), cursor, Some(limit))
                .await?;
            let next = p.has_more.then_some(p.next_cursor);
            Ok(listing::Page {
                rows: p.batches,
                total: p.total,
                next,
            })
        }
    }

    fn cursor(&self) -> Option<String> {
        Some(self.cursor.clone()).filter(|c| !c.is_empty())
    }

    fn range(&self) -> Range {
        self.dates.range()
    }

    fn created(row: &Batch) -> DateTime<Utc> {
        row.created_at
    }
}

fn rows(l: Listing<Batch>) -> BatchRows {
    BatchRows {
        batches: l.rows,
        next: l.next,
    }
}

async fn render_index(
    state: &AppState,
    member: &Member,
    (draft, errors): (Draft, FieldErrors),
    filters: Filters,
) -> Result<String, PortalError> {
    let client = state.client_for(member, Permission::BulkRead).await?;
    let loaded = listing::load(&client, &filters).await;
    let capped = loaded.as_ref().is_ok_and(|l| l.capped);
    let kinds = [BulkTransferAction::KIND, RetryAction::KIND];
    let waiting = approvals::pending_of(&state.pool, member.tenant_id, &kinds).await?;
    Ok(IndexPage {
        shell: Shell::new(member, "/bulk-transfers"),
        can_request: member.can(Permission::BulkRequest),
        draft,
        errors,
        batches: Section::from_result(loaded.map(rows)),
        capped,
        export_query: listing::query(&filters, None),
        filters,
        waiting,
    }
    .render()?)
}

/// The form and the batches; an htmx "load more" gets the next rows only.
async fn index(
    state: Data<AppState>,
    member: Member,
    req: HttpRequest,
    filters: Query<Filters>,
) -> Result<HttpResponse, PortalError> {
    let filters = filters.into_inner();
    if is_htmx(&req) && !filters.cursor.is_empty() {
        let client = state.client_for(&member, Permission::BulkRead).await?;
        return html(&rows(listing::load(&client, &filters).await?));
    }
    let form = (Draft::fresh(), FieldErrors::default());
    Ok(ok(render_index(&state, &member, form, filters).await?))
}

impl CsvRecord for Batch {
    const HEADER: &'static [&'static str] = &[
        "created_at",
        "id",
        "status",
        "currency",
        "payments",
        "invalid_rows",
        "amount",
        "fees",
        "total",
        "reference",
        "description",
        "confirmed_at",
    ];

    fn fields(self) -> Vec<String> {
        vec![
            self.created_at.to_rfc3339(),
            self.id.to_string(),
            self.status.to_string(),
            self.currency.clone(),
            self.totals.valid_items.to_string(),
            self.totals.invalid_items.to_string(),
            self.totals.amount.to_string(),
            self.totals.fees.to_string(),
            self.totals.total.to_string(),
            self.reference.clone(),
            self.description.clone(),
            self.confirmed_at.map(|t| t.to_rfc3339()).unwrap_or_default(),
        ]
    }
}

/// Streams every batch the filters match as CSV (one line a batch), on
/// record.
async fn export(
    state: Data<AppState>,
    member: Member,
    filters: Query<Filters>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::BulkRead).await?;
    let rows = filters
        .dates
        .range()
        .within(listing::every(&client, &*filters), |b| b.created_at);
    let response = listing::export("bulk-transfers", rows).await?;
    audit::exported(&state.pool, &member, "bulk_transfers", &*filters).await?;
    Ok(response)
}

/// The file's header and an example row.
async fn template(member: Member) -> Result<HttpResponse, PortalError> {
    member.require(Permission::BulkRead)?;
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "text/csv; charset=utf-8"))
        .insert_header((
            header::CONTENT_DISPOSITION,
            "attachment; filename=\"bulk-transfers.csv\"",
        ))
        .body(sheet::TEMPLATE))
}

/// Checks every row, shows the batch, then files it for approval.
async fn file(
    state: Data<AppState>,
    member: Member,
    form: Form<Vec<(String, String)>>,
) -> Result<HttpResponse, PortalError> {
    let submission = Submission(form.into_inner());
    let draft: Draft = submission.draft()?;
    let gated = sheet::file(&state, &member, &draft, submission.confirmed()).await;
    match split(gated)? {
        Ok(Gated::Confirm(preview)) => confirm_page(
            &member,
            "Send a bulk transfer",
            preview,
            ("/bulk-transfers", "/bulk-transfers"),
            &submission,
        ),
        Ok(Gated::Waiting(request)) => Ok(redirect(&format!("/approvals/{request}"))),
        Ok(Gated::Done(request)) => Ok(match batch_of(&request) {
            Some(id) => done(
                &format!("/bulk-transfers/{id}"),
                "Batch sent; its payments update here.",
            ),
            None => done(
                &format!("/approvals/{}", request.id),
                "Batch approved; it is being sent.",
            ),
        }),
        Err(refusal) => Ok(unprocessable(
            render_index(&state, &member, (draft, refusal.into()), Filters::default()).await?,
        )),
    }
}

// --- One batch -------------------------------------------------------------------

/// The part of the page that changes by itself; it polls while any item
/// is on the way.
#[derive(Template)]
#[template(path = "bulk/live.html")]
struct Live {
    b: Batch,
}

impl Live {
    fn polling(&self) -> bool {
        self.b
            .items
            .iter()
            .any(|i| matches!(i.status, BulkItemStatus::Pending | BulkItemStatus::Processing))
    }

    fn amount(&self, i: &BulkItem) -> String {
        sheet::shown(i.amount, &self.b.currency)
    }

    fn short(&self, i: &BulkItem) -> String {
        sheet::short(&i.address)
    }

    fn total(&self) -> String {
        sheet::shown(self.b.totals.total, &self.b.currency)
    }

    fn failed(&self) -> usize {
        self.b
            .items
            .iter()
            .filter(|i| i.status == BulkItemStatus::Failed)
            .count()
    }
}

#[derive(Template)]
#[template(path = "bulk/detail.html")]
struct DetailPage {
    shell: Shell,
    live: Live,
    can_request: bool,
    errors: FieldErrors,
}

async fn render_detail(
    state: &AppState,
    member: &Member,
    id: Uuid,
    errors: FieldErrors,
) -> Result<String, PortalError> {
    let client = state.client_for(member, Permission::BulkRead).await?;
    let b = client.bulk_transfer(&id.to_string()).await?;
    Ok(DetailPage {
        shell: Shell::new(member, "/bulk-transfers"),
        can_request: member.can(Permission::BulkRequest),
        live: Live { b },
        errors,
    }
    .render()?)
}

async fn detail(state: Data<AppState>, member: Member, id: Path<Uuid>) -> Result<HttpResponse, PortalError> {
    Ok(ok(
        render_detail(&state, &member, *id, FieldErrors::default()).await?
    ))
}

/// The live part of the batch's page, for htmx polling.
async fn live(state: Data<AppState>, member: Member, id: Path<Uuid>) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::BulkRead).await?;
    html(&Live {
        b: client.bulk_transfer(&id.to_string()).await?,
    })
}

/// Files a retry of the batch's failed items through the gate.
async fn retry(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
    form: Form<Vec<(String, String)>>,
) -> Result<HttpResponse, PortalError> {
    let submission = Submission(form.into_inner());
    let id = id.into_inner();
    let back = format!("/bulk-transfers/{id}");
    let gated = sheet::file_retry(&state, &member, id, submission.confirmed()).await;
    match split(gated)? {
        Ok(Gated::Confirm(preview)) => confirm_page(
            &member,
            "Retry the failed payments",
            preview,
            (&format!("{back}/retry"), &back),
            &submission,
        ),
        Ok(Gated::Waiting(request)) => Ok(redirect(&format!("/approvals/{request}"))),
        Ok(Gated::Done(_)) => Ok(done(&back, "Failed payments sent again; they update here.")),
        Err(refusal) => Ok(unprocessable(
            render_detail(&state, &member, id, refusal.into()).await?,
        )),
    }
}

/// Bulk transfers, their retries and schedules, through the gate.
pub const AREA: Area = Area {
    routes: |cfg| {
        super::schedule_routes::configure(cfg);
        configure(cfg);
    },
    menu: &[MenuEntry::new(
        MenuGroup::Money,
        "/bulk-transfers",
        "Bulk transfers",
        ShownTo::Holding(&[
            Permission::BulkRead,
            Permission::BulkRequest,
            Permission::BulkApprove,
        ]),
    )],
    kinds: |gate| {
        gate.with(super::action::BulkTransferAction)
            .with(super::action::RetryAction)
            .with(super::schedules::BulkScheduleAction)
            .with(super::schedules::BulkScheduleChangeAction)
    },
};
