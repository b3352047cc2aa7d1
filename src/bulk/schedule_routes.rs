//! The recurring batches page: the service's bulk schedules with their
//! pause, resume and cancel buttons, and the form for a new one. Every
//! change goes through the gate.

use actix_web::web::{self, Data, Form, Path, Query};
use actix_web::HttpResponse;
use askama::Template;
use paydesk_api::models::bulk::{BulkSchedule, ScheduleStatus};
use paydesk_api::{ApiError, Client};
use uuid::Uuid;

use super::schedules::{self, BulkScheduleAction, BulkScheduleChangeAction, ScheduleDraft};
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::approvals::Action;
use crate::approvals::Gated;
use crate::approvals::{self, ActionRequest};
use crate::approvals::{confirm_page, Submission};
use crate::audit;
use crate::state::AppState;
use crate::trading::schedules::{Change, WEEKDAYS};
use crate::web::error::PortalError;
use crate::web::form::{split, FieldErrors};
use crate::web::listing::{self, CsvRecord, Dates, Range};
use crate::web::page::{done, ok, redirect, unprocessable, Shell};

/// Registered before `/bulk-transfers/{id}`, which would take "schedules".
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/bulk-transfers/schedules", web::get().to(list))
        .route("/bulk-transfers/schedules/export.csv", web::get().to(export))
        .route("/bulk-transfers/schedules", web::post().to(create))
        .route("/bulk-transfers/schedules/{id}/{change}", web::post().to(change));
}

#[derive(Template)]
#[template(path = "bulk/schedules.html")]
struct ListPage {
    shell: Shell,
    dates: Dates,
    export_query: String,
    schedules: Vec<BulkSchedule>,
    waiting: Vec<ActionRequest>,
    draft: ScheduleDraft,
    errors: FieldErrors,
    can_request: bool,
    weekdays: &'static [&'static str],
}

impl ListPage {
    fn when(&self, s: &BulkSchedule) -> String {
        schedules::when(s)
    }

    fn per_run(&self, s: &BulkSchedule) -> String {
        schedules::per_run(s)
    }
}

async fn render_list(
    state: &AppState,
    member: &Member,
    (draft, errors): (ScheduleDraft, FieldErrors),
    dates: Dates,
) -> Result<String, PortalError> {
    let client = state.client_for(member, Permission::BulkRead).await?;
    let kinds = [BulkScheduleAction::KIND, BulkScheduleChangeAction::KIND];
    Ok(ListPage {
        shell: Shell::new(member, "/bulk-transfers"),
        schedules: created_within(&client, dates.range()).await?,
        export_query: listing::query(&dates, None),
        dates,
        waiting: approvals::pending_of(&state.pool, member.tenant_id, &kinds).await?,
        can_request: member.can(Permission::BulkRequest),
        weekdays: WEEKDAYS,
        draft,
        errors,
    }
    .render()?)
}

/// The recurring batches created on the days of `created`.
async fn created_within(client: &Client, created: Range) -> Result<Vec<BulkSchedule>, ApiError> {
    let all = client.bulk_schedules().await?;
    Ok(all
        .into_iter()
        .filter(|s| created.contains(s.created_at))
        .collect())
}

impl CsvRecord for BulkSchedule {
    const HEADER: &'static [&'static str] = &[
        "created_at",
        "id",
        "name",
        "currency",
        "payments",
        "each_run",
        "frequency",
        "execution_time",
        "status",
        "next_execution_at",
        "runs",
        "reference",
    ];

    fn fields(self) -> Vec<String> {
        vec![
            self.created_at.to_rfc3339(),
            self.id.to_string(),
            self.name.clone(),
            self.currency.clone(),
            self.items.len().to_string(),
            schedules::per_run(&self),
            self.frequency.clone(),
            self.execution_time.clone(),
            self.status.to_string(),
            self.next_execution_at.map(|t| t.to_rfc3339()).unwrap_or_default(),
            self.total_executions.to_string(),
            self.reference.clone(),
        ]
    }
}

/// The recurring batches created on the dates chosen, as CSV, on record.
async fn export(
    state: Data<AppState>,
    member: Member,
    dates: Query<Dates>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::BulkRead).await?;
    let rows = created_within(&client, dates.range()).await?;
    audit::exported(&state.pool, &member, "bulk_schedules", &*dates).await?;
    listing::export_rows("recurring-batches", rows).await
}

async fn list(
    state: Data<AppState>,
    member: Member,
    dates: Query<Dates>,
) -> Result<HttpResponse, PortalError> {
    let form = (ScheduleDraft::fresh(), FieldErrors::default());
    Ok(ok(render_list(&state, &member, form, dates.into_inner()).await?))
}

/// Checks the form, shows what will be approved, then files it.
async fn create(
    state: Data<AppState>,
    member: Member,
    form: Form<Vec<(String, String)>>,
) -> Result<HttpResponse, PortalError> {
    let submission = Submission(form.into_inner());
    let draft: ScheduleDraft = submission.draft()?;
    let gated = schedules::create(&state, &member, &draft, submission.confirmed()).await;
    let back = "/bulk-transfers/schedules";
    match split(gated)? {
        Ok(Gated::Confirm(preview)) => confirm_page(
            &member,
            "Create a recurring batch",
            preview,
            (back, back),
            &submission,
        ),
        Ok(Gated::Waiting(request)) => Ok(redirect(&format!("/approvals/{request}"))),
        Ok(Gated::Done(_)) => Ok(done(back, "Recurring batch created; it runs on the service.")),
        Err(refusal) => Ok(unprocessable(
            render_list(&state, &member, (draft, refusal.into()), Dates::default()).await?,
        )),
    }
}

/// Pauses, resumes or cancels, after a confirmation, through the gate.
async fn change(
    state: Data<AppState>,
    member: Member,
    path: Path<(Uuid, String)>,
    form: Form<Vec<(String, String)>>,
) -> Result<HttpResponse, PortalError> {
    let (id, change) = path.into_inner();
    let change = Change::parse(&change)
        .ok_or_else(|| PortalError::NotFound("there is no page at this address".to_owned()))?;
    let client = state.client_for(&member, Permission::BulkRequest).await?;
    let schedule = schedules::find(&client, id)
        .await?
        .ok_or_else(|| PortalError::NotFound("no such recurring batch".to_owned()))?;
    let submission = Submission(form.into_inner());
    let back = "/bulk-transfers/schedules";
    let gated = schedules::change(&state, &member, &schedule, change, submission.confirmed()).await;
    match split(gated)? {
        Ok(Gated::Confirm(preview)) => {
            let action = format!("{back}/{id}/{}", change.verb().to_lowercase());
            let title = format!("{} the recurring batch", change.verb());
            confirm_page(&member, &title, preview, (&action, back), &submission)
        }
        Ok(Gated::Waiting(request)) => Ok(redirect(&format!("/approvals/{request}"))),
        Ok(Gated::Done(_)) => Ok(done(
            back,
            format!("The recurring batch: {}d.", change.verb().to_lowercase()),
        )),
        Err(refusal) => Ok(unprocessable(
            render_list(
                &state,
                &member,
                (ScheduleDraft::fresh(), refusal.into()),
                Dates::default(),
            )
            .await?,
        )),
    }
}
