use actix_web::web::{self, Data, Form, Query};
use actix_web::HttpResponse;
use askama::Template;
use paydesk_api::models::beneficiaries::Destination;
use paydesk_api::models::payouts::{Corridor, Country, PayoutChain};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::action::PayoutAction;
use super::filing::{self, account_holder, Draft, Filed};
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::approvals::Action;
use crate::approvals::RequestStatus;
use crate::approvals::{self, ActionRequest};
use crate::area::Area;
use crate::state::AppState;
use crate::web::error::PortalError;
use crate::web::form::{split, FieldErrors, Refusal};
use crate::web::listing::{self, Dates};
use crate::web::menu::{MenuEntry, MenuGroup, ShownTo};
use crate::web::page::{html, ok, redirect, unprocessable, Shell};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/payouts", web::get().to(list))
        .route("/payouts", web::post().to(file))
        .route("/payouts/new", web::get().to(new_form))
        .route("/payouts/lookup", web::get().to(lookup));
}

fn require_payouts(member: &Member) -> Result<(), PortalError> {
    if [
        Permission::PayoutsRead,
        Permission::PayoutsRequest,
        Permission::PayoutsApprove,
    ]
    .iter()
    .any(|p| member.can(*p))
    {
        Ok(())
    } else {
        Err(PortalError::Forbidden(Permission::PayoutsRead.name().to_owned()))
    }
}

/// The most payouts the page shows; the export has up to 10,000.
const SHOWN: i64 = 100;

/// The list's filters, as they appear in the query string. The export is
/// the approvals export narrowed to payouts, with the same names.
#[derive(Debug, Default, Deserialize, Serialize)]
pub struct Filters {
    #[serde(default)]
    status: String,
    #[serde(flatten)]
    dates: Dates,
}

#[derive(Template)]
#[template(path = "payouts/list.html")]
struct ListPage {
    shell: Shell,
    filters: Filters,
    statuses: &'static [RequestStatus],
    requests: Vec<ActionRequest>,
    can_request: bool,
    export_query: String,
}

impl ListPage {
    fn capped(&self) -> bool {
        self.requests.len() as i64 >= SHOWN
    }
}

async fn list(
    state: Data<AppState>,
    member: Member,
    filters: Query<Filters>,
) -> Result<HttpResponse, PortalError> {
    require_payouts(&member)?;
    let filters = filters.into_inner();
    let filter = approvals::ListFilter {
        kind: Some(PayoutAction::KIND.key),
        status: RequestStatus::parse(&filters.status),
        filed: filters.dates.range(),
        ..Default::default()
    };
    html(&ListPage {
        shell: Shell::new(&member, "/payouts"),
        requests: approvals::list_filtered(&state.pool, member.tenant_id, &filter, SHOWN).await?,
        can_request: member.can(Permission::PayoutsRequest),
        export_query: format!(
            "kind={}&{}",
            PayoutAction::KIND.key,
            listing::query(&filters, None)
        ),
        statuses: RequestStatus::ALL,
        filters,
    })
}

#[derive(Template)]
#[template(path = "payouts/new.html")]
struct NewPage {
    shell: Shell,
    countries: Vec<Country>,
    corridor: Option<Corridor>,
    banks: Vec<(String, String, String)>,
    /// Saved bank and mobile-money beneficiaries of this country: (id, label).
    saved: Vec<(String, String)>,
    draft: Draft,
    errors: FieldErrors,
    pending_link: Option<String>,
    /// The chains an onchain deposit may come on.
    chains: &'static [PayoutChain],
}

impl NewPage {
    /// The assets a deposit on `chain` may be made in, for its option.
    fn assets_on(&self, chain: &PayoutChain) -> String {
        let assets: Vec<&str> = self
            .corridor
            .iter()
            .flat_map(|c| &c.from_assets)
            .map(String::as_str)
            .filter(|a| chain.carries(a))
            .collect();
        assets.join(", ")
    }

    fn onchain(&self) -> bool {
        self.draft.source == "onchain"
    }
}

async fn render_new(
    state: &AppState,
    member: &Member,
    draft: Draft,
    errors: FieldErrors,
    pending: Option<Uuid>,
) -> Result<String, PortalError> {
    let client = state
        .upstreams
        .for_member(&state.pool, &state.key, &state.audit, member)
        .await?;
    let countries = client.payout_countries().await?.countries;
    let (corridor, banks, saved) = if draft.country.is_empty() {
        (None, Vec::new(), Vec::new())
    } else {
        let corridor = client.payout_corridor(&draft.country).await?;
        let banks = client
            .payout_banks(&draft.country)
            .await?
            .banks
            .into_iter()
            .map(|b| (b.code, b.name, b.kind))
            .collect();
        let saved = client
            .beneficiaries(Some(100), None)
            .await?
            .beneficiaries
            .into_iter()
            .filter(|b| b.is_active && !b.is_blacklisted)
            .filter_map(|b| match b.destination {
                Destination::Account {
                    account_number,
                    country,
                    ..
                } if country.as_deref().is_none_or(|c| c == draft.country) => {
                    Some((b.id.to_string(), format!("{} (account {account_number})", b.name)))
                }
                _ => None,
            })
            .collect();
        (Some(corridor), banks, saved)
    };
    Ok(NewPage {
        shell: Shell::new(member, "/payouts"),
        countries,
        corridor,
        banks,
        saved,
        draft,
        errors,
        pending_link: pending.map(|id| format!("/approvals/{id}")),
        chains: PayoutChain::ALL,
    }
    .render()?)
}

#[derive(Debug, Deserialize)]
pub struct LookupQuery {
    #[serde(default)]
    country: String,
    #[serde(default)]
    bank_code: String,
    #[serde(default)]
    account_number: String,
}

#[derive(Template)]
#[template(path = "payouts/lookup.html")]
struct LookupAnswer {
    found: Result<String, String>,
}

/// The account holder's name as the bank knows it, while the maker types.
async fn lookup(
    state: Data<AppState>,
    member: Member,
    q: Query<LookupQuery>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::PayoutsRequest).await?;
    let found = if q.account_number.trim().len() < 6 {
        Err(String::new())
    } else {
        account_holder(&client, &q.country, &q.bank_code, &q.account_number, "bank").await?
    };
    html(&LookupAnswer { found })
}

async fn new_form(
    state: Data<AppState>,
    member: Member,
    draft: Query<Draft>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::PayoutsRequest)?;
    Ok(ok(render_new(
        &state,
        &member,
        draft.into_inner(),
        FieldErrors::default(),
        None,
    )
    .await?))
}

/// Takes an indicative quote and files the payout for approval.
async fn file(state: Data<AppState>, member: Member, form: Form<Draft>) -> Result<HttpResponse, PortalError> {
    member.require(Permission::PayoutsRequest)?;
    let (errors, pending) = match split(filing::file(&state, &member, &form).await)? {
        Ok(Filed::Filed(id)) => return Ok(redirect(&format!("/approvals/{id}"))),
        Ok(Filed::AlreadyWaiting(id)) => (
            Refusal::form("A payout to this account is already waiting for approval.").into(),
            Some(id),
        ),
        Err(refusal) => (refusal.into(), None),
    };
    Ok(unprocessable(
        render_new(&state, &member, form.into_inner(), errors, pending).await?,
    ))
}

/// Payouts to bank accounts and mobile money, through the gate.
pub const AREA: Area = Area {
    routes: configure,
    menu: &[MenuEntry::new(
        MenuGroup::Money,
        "/payouts",
        "Payouts",
        ShownTo::Holding(&[Permission::PayoutsRead]),
    )],
    kinds: |gate| gate.with(super::action::PayoutAction),
};
