//! `/trading/scheduled`: the schedules with the form for a new one, a
//! schedule's page with its executions and totals, pause, resume, cancel.

use actix_web::web::{self, Data, Form, Path, Query};
use actix_web::HttpResponse;
use askama::Template;
use paydesk_api::models::trading::{Execution, Schedule, ScheduleStatus};
use paydesk_api::{ApiError, Client};
use uuid::Uuid;

use super::schedules::{self, cadence, whole, Change, ScheduleForm, ASSETS, QUOTE_CURRENCIES, WEEKDAYS};
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::approvals::ActionRequest;
use crate::approvals::{answer_gate, Submission};
use crate::audit;
use crate::state::AppState;
use crate::web::error::PortalError;
use crate::web::form::{FieldErrors, Refusal};
use crate::web::listing::{self, CsvRecord, Dates, Range};
use crate::web::page::{done, ok, unprocessable, Shell};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/trading/scheduled", web::get().to(list))
        .route("/trading/scheduled/export.csv", web::get().to(export))
        .route("/trading/scheduled", web::post().to(create))
        .route("/trading/scheduled/{id}", web::get().to(page))
        .route("/trading/scheduled/{id}/{change}", web::post().to(change));
}

#[derive(Template)]
#[template(path = "trading/scheduled.html")]
struct ListPage {
    shell: Shell,
    dates: Dates,
    export_query: String,
    schedules: Vec<Schedule>,
    form: ScheduleForm,
    errors: FieldErrors,
    can_request: bool,
    assets: &'static [&'static str],
    quote_currencies: &'static [&'static str],
    weekdays: &'static [&'static str],
}

impl ListPage {
    fn cadence(&self, s: &Schedule) -> String {
        cadence(&s.frequency, s.day_of_week, s.day_of_month, &s.execution_time)
    }

    fn per_tick(&self, s: &Schedule) -> String {
        format!("{} {}", whole(s.amount, &s.quote_currency), s.quote_currency)
    }
}

async fn render_list(
    state: &AppState,
    member: &Member,
    (form, errors): (ScheduleForm, FieldErrors),
    dates: Dates,
) -> Result<String, PortalError> {
    let client = state.client_for(member, Permission::TradingRead).await?;
    let form = match form.reference.is_empty() {
        true => ScheduleForm {
            reference: format!("paydesk-dca-{}", Uuid::new_v4().simple()),
            ..form
        },
        false => form,
    };
    Ok(ListPage {
        shell: Shell::new(member, "/trading"),
        schedules: created_within(&client, dates.range()).await?,
        export_query: listing::query(&dates, None),
        dates,
        form,
        errors,
        can_request: member.can(Permission::TradingRequest),
        assets: ASSETS,
        quote_currencies: QUOTE_CURRENCIES,
        weekdays: WEEKDAYS,
    }
    .render()?)
}

/// The schedules created on the days of `created`.
async fn created_within(client: &Client, created: Range) -> Result<Vec<Schedule>, ApiError> {
    let all = client.scheduled_orders(None).await?;
    Ok(all
        .into_iter()
        .filter(|s| created.contains(s.created_at))
        .collect())
}

impl CsvRecord for Schedule {
    const HEADER: &'static [&'static str] = &[
        "created_at",
        "id",
        "buys",
        "with",
        "amount_each",
        "frequency",
        "execution_time",
        "status",
        "next_execution_at",
        "executions",
        "spent",
        "acquired",
        "reference",
    ];

    fn fields(self) -> Vec<String> {
        vec![
            self.created_at.to_rfc3339(),
            self.id.to_string(),
            self.currency.clone(),
            self.quote_currency.clone(),
            self.amount.to_string(),
            self.frequency.clone(),
            self.execution_time.clone(),
            self.status.to_string(),
            self.next_execution_at.map(|t| t.to_rfc3339()).unwrap_or_default(),
            self.total_executions.to_string(),
            self.total_amount_spent.to_string(),
            self.total_quantity_acquired.to_string(),
            self.reference.clone(),
        ]
    }
}

/// The schedules created on the dates chosen, as CSV, on record.
async fn export(
    state: Data<AppState>,
    member: Member,
    dates: Query<Dates>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::TradingRead).await?;
    let rows = created_within(&client, dates.range()).await?;
    audit::exported(&state.pool, &member, "scheduled_orders", &*dates).await?;
    listing::export_rows("scheduled-orders", rows).await
}

async fn list(
    state: Data<AppState>,
    member: Member,
    dates: Query<Dates>,
) -> Result<HttpResponse, PortalError> {
    let form = ScheduleForm {
        currency: "BTC".into(),
        quote_currency: "USDT".into(),
        frequency: "daily".into(),
        execution_time: "09:00".into(),
        ..ScheduleForm::default()
    };
    Ok(ok(render_list(
        &state,
        &member,
        (form, FieldErrors::default()),
        dates.into_inner(),
    )
    .await?))
}

/// Creates a schedule after a confirmation that shows the per-tick amount
/// and the cadence, through the gate.
async fn create(
    state: Data<AppState>,
    member: Member,
    form: Form<Vec<(String, String)>>,
) -> Result<HttpResponse, PortalError> {
    let submission = Submission(form.into_inner());
    let typed: ScheduleForm = submission.draft()?;
    let gated = schedules::create(&state, &member, &typed, submission.confirmed()).await;
    let ran = |request: Box<ActionRequest>| match request
        .progress_as::<super::schedules::ScheduleProgress>()
        .schedule_id
    {
        Some(id) => Ok(done(&format!("/trading/scheduled/{id}"), "Schedule created.")),
        None => Err(Refusal::form("The schedule was not created; try again.")),
    };
    let confirm = (
        "Create a scheduled order",
        "/trading/scheduled",
        "/trading/scheduled",
    );
    match answer_gate(&member, gated, confirm, &submission, ran)? {
        Ok(answer) => Ok(answer),
        Err(refusal) => Ok(unprocessable(
            render_list(&state, &member, (typed, refusal.into()), Dates::default()).await?,
        )),
    }
}

#[derive(Template)]
#[template(path = "trading/schedule.html")]
struct SchedulePage {
    shell: Shell,
    cadence: String,
    per_tick: String,
    spent: String,
    acquired: String,
    schedule: Schedule,
    executions: Vec<Execution>,
    can_request: bool,
    error: Option<String>,
}

impl SchedulePage {
    fn spent_in(&self, e: &Execution) -> String {
        format!(
            "{} {}",
            whole(e.quote_amount, &self.schedule.quote_currency),
            self.schedule.quote_currency
        )
    }

    fn acquired_in(&self, e: &Execution) -> String {
        format!(
            "{} {}",
            whole(e.base_amount, &self.schedule.currency),
            self.schedule.currency
        )
    }
}

async fn render_page(
    state: &AppState,
    member: &Member,
    id: Uuid,
    error: Option<String>,
) -> Result<String, PortalError> {
    let client = state.client_for(member, Permission::TradingRead).await?;
    let s = client.scheduled_order(&id.to_string()).await?;
    Ok(SchedulePage {
        shell: Shell::new(member, "/trading"),
        cadence: cadence(&s.frequency, s.day_of_week, s.day_of_month, &s.execution_time),
        per_tick: format!("{} {}", whole(s.amount, &s.quote_currency), s.quote_currency),
        spent: format!(
            "{} {}",
            whole(s.total_amount_spent, &s.quote_currency),
            s.quote_currency
        ),
        acquired: format!("{} {}", whole(s.total_quantity_acquired, &s.currency), s.currency),
        executions: client.scheduled_order_executions(&id.to_string()).await?,
        can_request: member.can(Permission::TradingRequest),
        schedule: s,
        error,
    }
    .render()?)
}

async fn page(state: Data<AppState>, member: Member, id: Path<Uuid>) -> Result<HttpResponse, PortalError> {
    Ok(ok(render_page(&state, &member, *id, None).await?))
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
    let client = state.client_for(&member, Permission::TradingRequest).await?;
    let schedule = client.scheduled_order(&id.to_string()).await?;
    let submission = Submission(form.into_inner());
    let gated = schedules::change(&state, &member, &schedule, change, submission.confirmed()).await;
    let back = format!("/trading/scheduled/{id}");
    let (title, action) = (
        format!("{} the schedule", change.verb()),
        format!("{back}/{}", change.verb().to_lowercase()),
    );
    let ran = |_| Ok(done(&back, change.done()));
    match answer_gate(&member, gated, (&title, &action, &back), &submission, ran)? {
        Ok(answer) => Ok(answer),
        Err(refusal) => Ok(unprocessable(
            render_page(&state, &member, id, Some(refusal.message)).await?,
        )),
    }
}
