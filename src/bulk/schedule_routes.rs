//! The recurring batches page: the service's bulk schedules with their
//! pause, resume and cancel buttons, and the form for a new one. Every
//! change goes through the gate.

use actix_web::web::{self, Data, Form, Path};
use actix_web::HttpResponse;
use askama::Template;
use paydesk_api::models::bulk::BulkSchedule;
use uuid::Uuid;

use super::schedules::{self, BulkScheduleAction, BulkScheduleChangeAction, ScheduleDraft};
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::approvals::action::Action;
use crate::approvals::executor::Gated;
use crate::approvals::routes::{confirm_page, Submission};
use crate::approvals::store::{self as approvals, ActionRequest};
use crate::startup::AppState;
use crate::trading::schedules::{Change, WEEKDAYS};
use crate::web::error::PortalError;
use crate::web::form::{split, FieldErrors};
use crate::web::page::{done, ok, redirect, unprocessable, Shell};

/// Registered before `/bulk-transfers/{id}`, which would take "schedules".
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/bulk-transfers/schedules", web::get().to(list))
        .route("/bulk-transfers/schedules", web::post().to(create))
        .route("/bulk-transfers/schedules/{id}/{change}", web::post().to(change));
}

#[derive(Template)]
#[template(path = "bulk/schedules.html")]
struct ListPage {
    shell: Shell,
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
    draft: ScheduleDraft,
    errors: FieldErrors,
) -> Result<String, PortalError> {
    let client = state.client_for(member, Permission::BulkRead).await?;
    let kinds = [BulkScheduleAction::KIND, BulkScheduleChangeAction::KIND];
    Ok(ListPage {
        shell: Shell::new(member, "/bulk-transfers"),
        schedules: client.bulk_schedules().await?,
        waiting: approvals::pending_of(&state.pool, member.tenant_id, &kinds).await?,
        can_request: member.can(Permission::BulkRequest),
        weekdays: WEEKDAYS,
        draft,
        errors,
    }
    .render()?)
}

async fn list(state: Data<AppState>, member: Member) -> Result<HttpResponse, PortalError> {
    Ok(ok(render_list(
        &state,
        &member,
        ScheduleDraft::fresh(),
        FieldErrors::default(),
    )
    .await?))
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
            render_list(&state, &member, draft, refusal.into()).await?,
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
            render_list(&state, &member, ScheduleDraft::fresh(), refusal.into()).await?,
        )),
    }
}
