//! `/trading/targets`: target orders with the form for a new one (its
//! escrow shown before confirming), an order's page, and cancelling.

use actix_web::web::{self, Data, Form, Path, Query};
use actix_web::HttpResponse;
use askama::Template;
use paydesk_api::models::trading::TargetOrder;
use paydesk_api::{ApiError, Client};
use uuid::Uuid;

use super::spot::pairs;
use super::targets::{self, TargetForm};
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
    cfg.route("/trading/targets", web::get().to(list))
        .route("/trading/targets/export.csv", web::get().to(export))
        .route("/trading/targets", web::post().to(create))
        .route("/trading/targets/{id}", web::get().to(page))
        .route("/trading/targets/{id}/cancel", web::post().to(cancel));
}

#[derive(Template)]
#[template(path = "trading/targets.html")]
struct ListPage {
    shell: Shell,
    dates: Dates,
    export_query: String,
    orders: Vec<TargetOrder>,
    pairs: Vec<String>,
    form: TargetForm,
    errors: FieldErrors,
    can_request: bool,
}

async fn render_list(
    state: &AppState,
    member: &Member,
    (form, errors): (TargetForm, FieldErrors),
    dates: Dates,
) -> Result<String, PortalError> {
    let client = state.client_for(member, Permission::TradingRead).await?;
    let form = match form.reference.is_empty() {
        true => TargetForm {
            reference: format!("paydesk-target-{}", Uuid::new_v4().simple()),
            ..form
        },
        false => form,
    };
    Ok(ListPage {
        shell: Shell::new(member, "/trading"),
        orders: created_within(&client, dates.range()).await?,
        export_query: listing::query(&dates, None),
        dates,
        pairs: pairs(&client, false).await?,
        form,
        errors,
        can_request: member.can(Permission::TradingRequest),
    }
    .render()?)
}

/// The target orders created on the days of `created`.
async fn created_within(client: &Client, created: Range) -> Result<Vec<TargetOrder>, ApiError> {
    let all = client.target_orders(None).await?;
    Ok(all
        .into_iter()
        .filter(|o| created.contains(o.created_at))
        .collect())
}

impl CsvRecord for TargetOrder {
    const HEADER: &'static [&'static str] = &[
        "created_at",
        "id",
        "pair",
        "side",
        "quantity",
        "target_price",
        "filled_quantity",
        "average_fill_price",
        "locked",
        "still_locked",
        "locked_currency",
        "status",
        "expires_at",
        "reference",
    ];

    fn fields(self) -> Vec<String> {
        vec![
            self.created_at.to_rfc3339(),
            self.id.to_string(),
            format!("{}/{}", self.base_currency, self.quote_currency),
            self.side.clone(),
            self.quantity.to_string(),
            self.target_price.to_string(),
            self.filled_quantity.to_string(),
            self.average_fill_price.clone(),
            self.locked_amount.to_string(),
            self.remaining_locked.to_string(),
            self.locked_currency.clone(),
            self.status.to_string(),
            self.expires_at.clone(),
            self.reference.clone(),
        ]
    }
}

/// The target orders created on the dates chosen, as CSV, on record.
async fn export(
    state: Data<AppState>,
    member: Member,
    dates: Query<Dates>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::TradingRead).await?;
    let rows = created_within(&client, dates.range()).await?;
    audit::exported(&state.pool, &member, "target_orders", &*dates).await?;
    listing::export_rows("target-orders", rows).await
}

async fn list(
    state: Data<AppState>,
    member: Member,
    dates: Query<Dates>,
) -> Result<HttpResponse, PortalError> {
    let form = TargetForm {
        side: "buy".into(),
        pair: "BTC/USDT".into(),
        ..TargetForm::default()
    };
    Ok(ok(render_list(
        &state,
        &member,
        (form, FieldErrors::default()),
        dates.into_inner(),
    )
    .await?))
}

/// Creates a target order after a confirmation that shows what it locks.
async fn create(
    state: Data<AppState>,
    member: Member,
    form: Form<Vec<(String, String)>>,
) -> Result<HttpResponse, PortalError> {
    let submission = Submission(form.into_inner());
    let typed: TargetForm = submission.draft()?;
    let gated = targets::create(&state, &member, &typed, submission.confirmed()).await;
    let ran = |request: Box<ActionRequest>| match request
        .progress_as::<super::targets::TargetProgress>()
        .order_id
    {
        Some(id) => Ok(done(&format!("/trading/targets/{id}"), "Target order created.")),
        None => Err(Refusal::form("The target order was not created; try again.")),
    };
    let confirm = ("Create a target order", "/trading/targets", "/trading/targets");
    match answer_gate(&member, gated, confirm, &submission, ran)? {
        Ok(answer) => Ok(answer),
        Err(refusal) => Ok(unprocessable(
            render_list(&state, &member, (typed, refusal.into()), Dates::default()).await?,
        )),
    }
}

#[derive(Template)]
#[template(path = "trading/target.html")]
struct TargetPage {
    shell: Shell,
    order: TargetOrder,
    can_cancel: bool,
    error: Option<String>,
}

fn target_body(member: &Member, order: TargetOrder, error: Option<String>) -> Result<String, PortalError> {
    let open = targets::is_open(&order);
    Ok(TargetPage {
        shell: Shell::new(member, "/trading"),
        can_cancel: open && member.can(Permission::TradingRequest),
        order,
        error,
    }
    .render()?)
}

async fn page(state: Data<AppState>, member: Member, id: Path<Uuid>) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::TradingRead).await?;
    Ok(ok(target_body(
        &member,
        client.target_order(&id.to_string()).await?,
        None,
    )?))
}

async fn cancel(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
    form: Form<Vec<(String, String)>>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::TradingRequest).await?;
    let order = client.target_order(&id.to_string()).await?;
    let submission = Submission(form.into_inner());
    let back = format!("/trading/targets/{}", order.id);
    let gated = targets::cancel(&state, &member, &order, submission.confirmed()).await;
    let action = format!("{back}/cancel");
    let ran = |_| {
        Ok(done(
            &back,
            "The target order is cancelled; what it locked is released.",
        ))
    };
    match answer_gate(
        &member,
        gated,
        ("Cancel the target order", &action, &back),
        &submission,
        ran,
    )? {
        Ok(answer) => Ok(answer),
        Err(refusal) => Ok(unprocessable(target_body(&member, order, Some(refusal.message))?)),
    }
}
