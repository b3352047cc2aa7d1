//! The payees' pages: list, page with its edit form, new, delete.

use actix_web::web::{self, Data, Form, Path, Query};
use actix_web::HttpResponse;
use askama::Template;
use futures_util::TryStreamExt;
use paydesk_api::models::beneficiaries::Beneficiary;
use paydesk_api::{ApiError, Client};
use uuid::Uuid;

use super::action::{describe_destination, Payee, PayeeChangeAction};
use super::payees::{self, PayeeDraft};
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::approvals::Action;
use crate::approvals::{self, ActionRequest, ApprovalError, Filing};
use crate::approvals::{confirm_page, submit_control, Submission};
use crate::area::Area;
use crate::audit;
use crate::state::AppState;
use crate::web::error::PortalError;
use crate::web::form::{split, FieldErrors, Refusal};
use crate::web::listing::{self, CsvRecord, Dates, Range};
use crate::web::menu::{MenuEntry, MenuGroup, ShownTo};
use crate::web::page::{done, ok, unprocessable, Shell};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/beneficiaries", web::get().to(list))
        .route("/beneficiaries/export.csv", web::get().to(export))
        .route("/beneficiaries", web::post().to(create))
        .route("/beneficiaries/new", web::get().to(new_form))
        .route("/beneficiaries/{id}", web::get().to(detail))
        .route("/beneficiaries/{id}", web::post().to(update))
        .route("/beneficiaries/{id}/delete", web::post().to(delete));
}

/// A payee row as the list shows it.
pub struct Row {
    pub beneficiary: Beneficiary,
    pub destination: String,
    /// Saved less than 24 hours ago: payouts to it always wait.
    pub new: bool,
}

fn row(beneficiary: Beneficiary) -> Row {
    Row {
        destination: describe_destination(&beneficiary.destination),
        new: chrono::Utc::now() - beneficiary.created_at < chrono::Duration::hours(24),
        beneficiary,
    }
}

#[derive(Template)]
#[template(path = "beneficiaries/list.html")]
struct ListPage {
    shell: Shell,
    dates: Dates,
    export_query: String,
    rows: Vec<Row>,
    total: u64,
    can_manage: bool,
    error: Option<String>,
    pending: Vec<ActionRequest>,
}

/// Every payee saved on the days of `saved`, as the service lists them (a
/// company keeps tens of payees, not thousands: all are read).
async fn saved_within(client: &Client, saved: Range) -> Result<Vec<Beneficiary>, ApiError> {
    let client = client.clone();
    listing::all_pages(move |offset| {
        let client = client.clone();
        let offset: u32 = offset.and_then(|o| o.parse().ok()).unwrap_or(0);
        async move {
            let p = client.beneficiaries(Some(100), Some(offset)).await?;
            let read = offset + p.beneficiaries.len() as u32;
            let more = !p.beneficiaries.is_empty() && u64::from(read) < p.total;
            Ok((p.beneficiaries, more.then(|| read.to_string())))
        }
    })
    .try_filter(|b| std::future::ready(saved.contains(b.created_at)))
    .try_collect()
    .await
}

async fn render_list(
    state: &AppState,
    member: &Member,
    error: Option<String>,
    dates: Dates,
) -> Result<String, PortalError> {
    let client = state.client_for(member, Permission::BeneficiariesRead).await?;
    let payees = saved_within(&client, dates.range()).await?;
    Ok(ListPage {
        shell: Shell::new(member, "/beneficiaries"),
        total: payees.len() as u64,
        rows: payees.into_iter().map(row).collect(),
        export_query: listing::query(&dates, None),
        dates,
        can_manage: member.can(Permission::BeneficiariesManage),
        error,
        pending: approvals::pending_of(&state.pool, member.tenant_id, &[PayeeChangeAction::KIND]).await?,
    }
    .render()?)
}

async fn list(
    state: Data<AppState>,
    member: Member,
    dates: Query<Dates>,
) -> Result<HttpResponse, PortalError> {
    Ok(ok(render_list(&state, &member, None, dates.into_inner()).await?))
}

impl CsvRecord for Beneficiary {
    const HEADER: &'static [&'static str] = &[
        "created_at",
        "id",
        "name",
        "type",
        "paid_to",
        "status",
        "created_by",
    ];

    fn fields(self) -> Vec<String> {
        let status = match (self.is_blacklisted, self.is_active) {
            (true, _) => "blacklisted",
            (false, true) => "active",
            (false, false) => "inactive",
        };
        vec![
            self.created_at.to_rfc3339(),
            self.id.to_string(),
            self.name.clone(),
            self.kind.clone(),
            describe_destination(&self.destination),
            status.to_owned(),
            self.created_by.clone(),
        ]
    }
}

/// The payees saved on the dates chosen, as CSV, on record.
async fn export(
    state: Data<AppState>,
    member: Member,
    dates: Query<Dates>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::BeneficiariesRead).await?;
    let payees = saved_within(&client, dates.range()).await?;
    audit::exported(&state.pool, &member, "payees", &*dates).await?;
    listing::export_rows("payees", payees).await
}

#[derive(Template)]
#[template(path = "beneficiaries/form.html")]
struct FormPage {
    shell: Shell,
    /// None for a new payee.
    id: Option<String>,
    draft: PayeeDraft,
    beneficiary: Option<Row>,
    can_manage: bool,
    errors: FieldErrors,
    pending: Vec<ActionRequest>,
}

async fn render_form(
    state: &AppState,
    member: &Member,
    id: Option<String>,
    draft: Option<PayeeDraft>,
    errors: FieldErrors,
) -> Result<String, PortalError> {
    let (beneficiary, draft) = match &id {
        Some(id) => {
            let client = state.client_for(member, Permission::BeneficiariesRead).await?;
            let b = client.beneficiary(id).await?;
            let saved = PayeeDraft::from_payee(&Payee::of(&b));
            (Some(row(b)), draft.unwrap_or(saved))
        }
        None => (None, draft.unwrap_or_default()),
    };
    let pending = approvals::pending_of(&state.pool, member.tenant_id, &[PayeeChangeAction::KIND])
        .await?
        .into_iter()
        .filter(|r| id.as_ref().is_some_and(|id| r.target == format!("payee:{id}")))
        .collect();
    Ok(FormPage {
        shell: Shell::new(member, "/beneficiaries"),
        id,
        draft,
        beneficiary,
        can_manage: member.can(Permission::BeneficiariesManage),
        errors,
        pending,
    }
    .render()?)
}

/// The form again with what was refused beside its field (422).
async fn refuse_form(
    state: &AppState,
    member: &Member,
    id: Option<String>,
    draft: Option<PayeeDraft>,
    refusal: Refusal,
) -> Result<HttpResponse, PortalError> {
    Ok(unprocessable(
        render_form(state, member, id, draft, refusal.into()).await?,
    ))
}

async fn new_form(state: Data<AppState>, member: Member) -> Result<HttpResponse, PortalError> {
    member.require(Permission::BeneficiariesManage)?;
    let draft = PayeeDraft {
        kind: "bank".to_owned(),
        country: "NG".to_owned(),
        ..PayeeDraft::default()
    };
    Ok(ok(render_form(
        &state,
        &member,
        None,
        Some(draft),
        FieldErrors::default(),
    )
    .await?))
}

async fn detail(state: Data<AppState>, member: Member, id: Path<Uuid>) -> Result<HttpResponse, PortalError> {
    let id = id.to_string();
    Ok(ok(render_form(
        &state,
        &member,
        Some(id),
        None,
        FieldErrors::default(),
    )
    .await?))
}

async fn create(
    state: Data<AppState>,
    member: Member,
    form: Form<PayeeDraft>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::BeneficiariesManage)?;
    match split(payees::create(&state, &member, &form).await)? {
        Ok(notice) => Ok(done("/beneficiaries", notice)),
        Err(refusal) => refuse_form(&state, &member, None, Some(form.into_inner()), refusal).await,
    }
}

async fn update(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
    form: Form<PayeeDraft>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::BeneficiariesManage)?;
    let id = id.to_string();
    match split(payees::update(&state, &member, &id, &form).await)? {
        Ok(notice) => Ok(done("/beneficiaries", notice)),
        Err(refusal) => refuse_form(&state, &member, Some(id), Some(form.into_inner()), refusal).await,
    }
}

/// Deleting asks for confirmation first, on a page that says what goes.
async fn delete(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
    form: Form<Vec<(String, String)>>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::BeneficiariesManage)?;
    let id = id.to_string();
    let (target, summary, change) = split(payees::deletion(&state, &member, &id).await)?
        .map_err(|r| PortalError::BadRequest(r.message))?;
    let submission = Submission(form.into_inner());
    if submission.confirmed() {
        return match split(
            submit_control::<PayeeChangeAction>(&state, &member, &target, &summary, change).await,
        )? {
            Ok(notice) => Ok(done("/beneficiaries", notice)),
            Err(refusal) => Ok(unprocessable(
                render_list(&state, &member, Some(refusal.message), Dates::default()).await?,
            )),
        };
    }
    let filing = Filing::control(&target, &summary, change);
    match approvals::preview::<PayeeChangeAction>(&state, &member, &filing).await {
        Ok(preview) => {
            let back = format!("/beneficiaries/{id}");
            confirm_page(
                &member,
                "Delete a payee",
                preview,
                (&format!("{back}/delete"), &back),
                &submission,
            )
        }
        Err(ApprovalError::Db(e)) => Err(e.into()),
        Err(e) => refuse_form(&state, &member, Some(id), None, Refusal::form(e.to_string())).await,
    }
}

/// Saved payees; changes to them pass the gate.
pub const AREA: Area = Area {
    routes: configure,
    menu: &[MenuEntry::new(
        MenuGroup::Money,
        "/beneficiaries",
        "Payees",
        ShownTo::Holding(&[Permission::BeneficiariesRead]),
    )],
    kinds: |gate| gate.with(super::action::PayeeChangeAction),
};
