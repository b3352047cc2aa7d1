//! The withdrawals pages: the list (newest first, with the requests still
//! waiting for approval above it), the form, and a withdrawal's page whose
//! on-chain status updates by itself while it is pending.

use std::future::Future;

use actix_web::web::{self, Data, Form, Path, Query};
use actix_web::{HttpRequest, HttpResponse};
use askama::Template;

use chrono::{DateTime, Utc};
use paydesk_api::models::transactions::Transaction;
use paydesk_api::models::withdrawals::{Withdrawal, WithdrawalStatus};
use paydesk_api::units::format_decimal;
use paydesk_api::{ApiError, Client};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::action::{request_for, WithdrawalAction};
use super::filing::{self, assets_of, Draft};
use super::{explorer_url, needs_memo, short_address};
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::approvals::Action;
use crate::approvals::{self, ActionRequest};
use crate::approvals::{answer_gate, Submission};
use crate::area::Area;
use crate::audit;
use crate::state::AppState;
use crate::web::error::PortalError;
use crate::web::form::FieldErrors;
use crate::web::listing::{self, CsvRecord, Dates, Listing, Problem, Range};
use crate::web::menu::{MenuEntry, MenuGroup, ShownTo};
use crate::web::page::{done, html, ok, unprocessable, Shell};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/withdrawals", web::get().to(list))
        .route("/withdrawals", web::post().to(file))
        .route("/withdrawals/export.csv", web::get().to(export))
        .route("/withdrawals/new", web::get().to(new_form))
        .route("/withdrawals/check", web::get().to(check))
        .route("/withdrawals/{id}", web::get().to(detail))
        .route("/withdrawals/{id}/live", web::get().to(live));
}

fn withdrawal_id(raw: &str) -> Result<String, PortalError> {
    Uuid::parse_str(raw)
        .map(|id| id.to_string())
        .map_err(|_| PortalError::NotFound("no such withdrawal".to_owned()))
}

/// An amount in base units as people read it.
fn shown(units: paydesk_api::units::BaseUnits, currency: &str) -> String {
    let decimals = paydesk_api::units::Currency::parse(currency)
        .ok()
        .and_then(|c| c.decimals())
        .unwrap_or(0);
    format!("{} {currency}", format_decimal(units.value(), decimals))
}

// --- List ----------------------------------------------------------------------

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

#[derive(Template)]
#[template(path = "withdrawals/rows.html")]
struct Rows {
    withdrawals: Vec<Withdrawal>,
    next: Option<String>,
}

impl Rows {
    fn amount(&self, w: &Withdrawal) -> String {
        shown(w.amount, &w.currency)
    }

    fn short(&self, w: &Withdrawal) -> String {
        short_address(&w.to_address)
    }
}

#[derive(Template)]
#[template(path = "withdrawals/list.html")]
struct ListPage {
    shell: Shell,
    filters: Filters,
    rows: Rows,
    total: u64,
    capped: bool,
    error: Problem,
    export_query: String,
    /// Requests still waiting for approval: not sent yet.
    waiting: Vec<ActionRequest>,
    can_request: bool,
}

impl listing::Cursored for Filters {
    type Row = Withdrawal;

    fn fetch(
        &self,
        client: &Client,
        cursor: Option<String>,
        limit: u32,
    ) -> impl Future<Output = Result<listing::Page<Withdrawal>, ApiError>> + Send + use<> {
        let (client, status) = (client.clone(), self.status());
        async move {
            let p = client.withdrawals(status.as_deref(), cursor, Some(limit)).await?;
            let next = p.has_more.then_some(p.next_cursor);
            Ok(listing::Page {
                rows: p.withdrawals,
                total: p.total_count,
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

    fn created(w: &Withdrawal) -> DateTime<Utc> {
        w.created_at
    }
}

async fn list(
    state: Data<AppState>,
    member: Member,
    req: HttpRequest,
    filters: Query<Filters>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::WithdrawalsRead).await?;
    let filters = filters.into_inner();
    let loaded = listing::load(&client, &filters).await;
    let waiting = approvals::pending_of(&state.pool, member.tenant_id, &[WithdrawalAction::KIND]).await?;
    let rows = |l: Listing<Withdrawal>| Rows {
        withdrawals: l.rows,
        next: l.next,
    };
    listing::respond(
        &req,
        !filters.cursor.is_empty(),
        loaded,
        |l| rows(l).render(),
        |l, error| {
            ListPage {
                shell: Shell::new(&member, "/withdrawals"),
                can_request: member.can(Permission::WithdrawalsRequest),
                export_query: listing::query(&filters, None),
                total: l.total,
                capped: l.capped,
                rows: rows(l),
                filters,
                error,
                waiting,
            }
            .render()
        },
    )
}

impl CsvRecord for Withdrawal {
    const HEADER: &'static [&'static str] = &[
        "created_at",
        "id",
        "status",
        "currency",
        "amount",
        "fee",
        "chain",
        "to_address",
        "memo",
        "tx_hash",
        "reference",
        "completed_at",
        "failure_reason",
    ];

    fn fields(self) -> Vec<String> {
        vec![
            self.created_at.to_rfc3339(),
            self.id.to_string(),
            self.status.to_string(),
            self.currency.clone(),
            self.amount.to_string(),
            self.fee.to_string(),
            self.chain.clone(),
            self.to_address.clone(),
            self.memo.clone(),
            self.tx_hash.clone(),
            self.reference.clone(),
            self.completed_at.map(|t| t.to_rfc3339()).unwrap_or_default(),
            self.failure_reason.clone().unwrap_or_default(),
        ]
    }
}

/// Streams every withdrawal the filters match as CSV, on record.
async fn export(
    state: Data<AppState>,
    member: Member,
    filters: Query<Filters>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::WithdrawalsRead).await?;
    let rows = filters
        .dates
        .range()
        .within(listing::every(&client, &*filters), |w| w.created_at);
    let response = listing::export("withdrawals", rows).await?;
    audit::exported(&state.pool, &member, "withdrawals", &*filters).await?;
    Ok(response)
}

// --- Form ----------------------------------------------------------------------

#[derive(Template)]
#[template(path = "withdrawals/new.html")]
struct NewPage {
    shell: Shell,
    /// (chain, assets it sends, whether it needs a memo)
    chains: Vec<(String, Vec<String>, bool)>,
    /// Saved crypto payees: (id, label).
    saved: Vec<(String, String)>,
    draft: Draft,
    errors: FieldErrors,
}

async fn render_new(
    state: &AppState,
    member: &Member,
    draft: Draft,
    errors: FieldErrors,
) -> Result<String, PortalError> {
    let client = state.client_for(member, Permission::WithdrawalsRequest).await?;
    let chains = client
        .supported_chains()
        .await?
        .chains
        .iter()
        .map(|c| (c.chain.clone(), assets_of(c), needs_memo(&c.chain)))
        .filter(|(_, assets, _)| !assets.is_empty())
        .collect();
    Ok(NewPage {
        shell: Shell::new(member, "/withdrawals"),
        saved: filing::crypto_payees(&client).await?,
        chains,
        draft,
        errors,
    }
    .render()?)
}

async fn new_form(state: Data<AppState>, member: Member) -> Result<HttpResponse, PortalError> {
    let page = render_new(&state, &member, Draft::fresh(), FieldErrors::default()).await?;
    Ok(ok(page))
}

#[derive(Debug, Deserialize)]
pub struct CheckQuery {
    #[serde(default)]
    chain: String,
    #[serde(default)]
    to_address: String,
}

#[derive(Template)]
#[template(path = "withdrawals/check.html")]
struct CheckAnswer {
    chain: String,
    found: Result<(), String>,
}

/// The service's verdict on the address while the maker types it.
async fn check(
    state: Data<AppState>,
    member: Member,
    q: Query<CheckQuery>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::WithdrawalsRequest).await?;
    let (chain, address) = (q.chain.trim().to_ascii_lowercase(), q.to_address.trim());
    let found = if chain.is_empty() || address.len() < 20 {
        Err(String::new())
    } else {
        filing::check_address(&client, &chain, address).await?
    };
    html(&CheckAnswer { chain, found })
}

/// Checks the form, shows what will happen, then files it for approval.
async fn file(
    state: Data<AppState>,
    member: Member,
    form: Form<Vec<(String, String)>>,
) -> Result<HttpResponse, PortalError> {
    let submission = Submission(form.into_inner());
    let draft: Draft = submission.draft()?;
    let gated = filing::file(&state, &member, &draft, submission.confirmed()).await;
    let ran = |request: Box<ActionRequest>| {
        Ok(match filing::withdrawal_of(&request) {
            Some(id) => done(
                &format!("/withdrawals/{id}"),
                "Withdrawal sent; its status updates here.",
            ),
            None => done(
                &format!("/approvals/{}", request.id),
                "Withdrawal approved; it is being sent.",
            ),
        })
    };
    let confirm = ("Withdraw on chain", "/withdrawals", "/withdrawals/new");
    match answer_gate(&member, gated, confirm, &submission, ran)? {
        Ok(answer) => Ok(answer),
        Err(refusal) => Ok(unprocessable(
            render_new(&state, &member, draft, refusal.into()).await?,
        )),
    }
}

// --- One withdrawal -------------------------------------------------------------

/// The part of the page that changes by itself: status, tx hash and the
/// wallet transaction. It polls while the withdrawal is not final.
#[derive(Template)]
#[template(path = "withdrawals/live.html")]
struct Live {
    w: Withdrawal,
    /// The wallet transaction it made, where the service links it.
    transaction: Option<Transaction>,
    explorer: Option<String>,
    sandbox: bool,
}

impl Live {
    fn polling(&self) -> bool {
        matches!(
            self.w.status,
            WithdrawalStatus::Pending | WithdrawalStatus::Processing
        )
    }

    fn amount(&self) -> String {
        shown(self.w.amount, &self.w.currency)
    }

    fn fee(&self) -> String {
        shown(self.w.fee, &self.w.currency)
    }
}

async fn load_live(client: &Client, member: &Member, id: &str) -> Result<Live, PortalError> {
    let w = client.withdrawal(id).await?;
    let transaction = client.transaction(&w.transaction_id.to_string()).await.ok();
    Ok(Live {
        explorer: explorer_url(&w.chain, &w.tx_hash),
        sandbox: member.environment.as_deref() == Some("sandbox"),
        transaction,
        w,
    })
}

#[derive(Template)]
#[template(path = "withdrawals/detail.html")]
struct DetailPage {
    shell: Shell,
    live: Live,
    short: String,
    /// The approval request that sent it, when the portal filed it.
    request: Option<ActionRequest>,
}

async fn render_detail(state: &AppState, member: &Member, id: &str) -> Result<String, PortalError> {
    let client = state.client_for(member, Permission::WithdrawalsRead).await?;
    let live = load_live(&client, member, id).await?;
    let request = match request_for(&state.pool, member.tenant_id, &live.w.reference).await? {
        Some(id) => approvals::find(&state.pool, member.tenant_id, id).await?,
        None => None,
    };
    Ok(DetailPage {
        shell: Shell::new(member, "/withdrawals"),
        short: short_address(&live.w.to_address),
        live,
        request,
    }
    .render()?)
}

async fn detail(
    state: Data<AppState>,
    member: Member,
    id: Path<String>,
) -> Result<HttpResponse, PortalError> {
    let id = withdrawal_id(&id)?;
    Ok(ok(render_detail(&state, &member, &id).await?))
}

/// The live part of the withdrawal's page, for htmx polling.
async fn live(state: Data<AppState>, member: Member, id: Path<String>) -> Result<HttpResponse, PortalError> {
    let id = withdrawal_id(&id)?;
    let client = state.client_for(&member, Permission::WithdrawalsRead).await?;
    html(&load_live(&client, &member, &id).await?)
}

/// On-chain withdrawals, through the gate.
pub const AREA: Area = Area {
    routes: configure,
    menu: &[MenuEntry::new(
        MenuGroup::Money,
        "/withdrawals",
        "Withdrawals",
        ShownTo::Holding(&[
            Permission::WithdrawalsRead,
            Permission::WithdrawalsRequest,
            Permission::WithdrawalsApprove,
        ]),
    )],
    kinds: |gate| gate.with(super::action::WithdrawalAction),
};
