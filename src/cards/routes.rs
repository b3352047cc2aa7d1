use std::future::Future;

use actix_web::web::{self, Data, Form, Path, Query};
use actix_web::{HttpRequest, HttpResponse};
use askama::Template;

use chrono::{DateTime, Utc};
use paydesk_api::models::cards::{Card, CardQuery, CardState, CardTransaction, CardTransactionStatus};
use paydesk_api::models::customers::{Customer, CustomerQuery};
use paydesk_api::{ApiError, Client};
use serde::{Deserialize, Serialize};
use serde_json::json;
use uuid::Uuid;

use super::operations;
use super::rules::{self, CardDraft};
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::approvals::ActionRequest;
use crate::approvals::{answer_gate, Submission};
use crate::audit::{self, Event};
use crate::sandbox_tools::clock::service_now;
use crate::state::AppState;
use crate::web::error::PortalError;
use crate::web::form::Refusal;
use crate::web::listing::{self, CsvRecord, Dates, Listing, Problem, Range};
use crate::web::page::{done, html, ok, unprocessable, Shell};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/cards", web::get().to(list))
        .route("/cards/export.csv", web::get().to(export))
        .route("/cards", web::post().to(create))
        .route("/cards/new", web::get().to(new_form))
        .route("/cards/{id}", web::get().to(detail))
        .route("/cards/{id}/live", web::get().to(live));
}

// --- List --------------------------------------------------------------

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct Filters {
    #[serde(default)]
    card_type: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    search: String,
    #[serde(flatten)]
    dates: Dates,
    #[serde(default)]
    cursor: String,
}

impl Filters {
    fn query(&self) -> CardQuery {
        let some = |s: &str| Some(s.trim().to_owned()).filter(|s| !s.is_empty());
        CardQuery {
            card_type: some(&self.card_type),
            status: some(&self.status),
            search: some(&self.search),
            cursor: some(&self.cursor),
            limit: Some(25),
        }
    }
}

#[derive(Template)]
#[template(path = "cards/rows.html")]
struct Rows {
    cards: Vec<Card>,
    next: Option<String>,
}

#[derive(Template)]
#[template(path = "cards/list.html")]
struct ListPage {
    shell: Shell,
    filters: Filters,
    rows: Rows,
    total: u64,
    capped: bool,
    error: Problem,
    can_issue: bool,
    export_query: String,
}

impl listing::Cursored for Filters {
    type Row = Card;

    fn fetch(
        &self,
        client: &Client,
        cursor: Option<String>,
        limit: u32,
    ) -> impl Future<Output = Result<listing::Page<Card>, ApiError>> + Send + use<> {
        let client = client.clone();
        let query = CardQuery {
            cursor,
            limit: Some(limit),
            ..self.query()
        };
        async move {
            let p = client.cards(&query).await?;
            let next = p.page_info.has_next_page.then_some(p.page_info.next_cursor);
            Ok(listing::Page {
                rows: p.cards,
                total: p.page_info.total,
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

    fn created(row: &Card) -> DateTime<Utc> {
        row.created_at
    }
}

async fn list(
    state: Data<AppState>,
    member: Member,
    req: HttpRequest,
    filters: Query<Filters>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::CardsRead).await?;
    let filters = filters.into_inner();
    let loaded = listing::load(&client, &filters).await;
    let rows = |l: Listing<Card>| Rows {
        cards: l.rows,
        next: l.next,
    };
    listing::respond(
        &req,
        !filters.cursor.is_empty(),
        loaded,
        |l| rows(l).render(),
        |l, error| {
            ListPage {
                shell: Shell::new(&member, "/cards"),
                can_issue: member.can(Permission::CardsManage),
                export_query: listing::query(&filters, None),
                total: l.total,
                capped: l.capped,
                rows: rows(l),
                filters,
                error,
            }
            .render()
        },
    )
}

impl CsvRecord for Card {
    const HEADER: &'static [&'static str] = &[
        "card_id",
        "created_at",
        "customer_id",
        "type",
        "brand",
        "status",
        "name",
        "last_four",
        "balance",
        "currency",
    ];

    fn fields(self) -> Vec<String> {
        vec![
            self.id.to_string(),
            self.created_at.to_rfc3339(),
            self.customer_id.to_string(),
            self.card_type.clone(),
            self.card_brand.clone(),
            self.status.to_string(),
            self.name.clone(),
            self.last_four_digit.clone(),
            self.balance_amount.display(),
            self.balance_currency.clone(),
        ]
    }
}

/// Every card matching the filters, as CSV (never the card numbers).
async fn export(
    state: Data<AppState>,
    member: Member,
    filters: Query<Filters>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::CardsRead).await?;
    let rows = filters
        .dates
        .range()
        .within(listing::every(&client, &*filters), |c| c.created_at);
    let response = listing::export("cards", rows).await?;
    let details = json!({ "filters": listing::query(&*filters, None) });
    audit::member_did(
        &state.pool,
        &member,
        Event::CardsExported,
        "cards".to_owned(),
        details,
    )
    .await?;
    Ok(response)
}

// --- New card ------------------------------------------------------------

#[derive(Template)]
#[template(path = "cards/new.html")]
struct NewPage {
    shell: Shell,
    customers: Vec<Customer>,
    draft: CardDraft,
    today: String,
    error: Option<String>,
}

async fn render_new(
    client: &Client,
    member: &Member,
    draft: CardDraft,
    error: Option<String>,
) -> Result<String, PortalError> {
    let customers = client
        .customers(&CustomerQuery {
            is_active: Some(true),
            limit: Some(100),
            ..CustomerQuery::default()
        })
        .await?
        .customers;
    Ok(NewPage {
        shell: Shell::new(member, "/cards"),
        customers,
        today: service_now(client, member).await.date_naive().to_string(),
        draft,
        error,
    }
    .render()?)
}

#[derive(Debug, Default, Deserialize)]
pub struct NewQuery {
    #[serde(default)]
    customer_id: String,
    #[serde(default)]
    card_type: String,
}

async fn new_form(
    state: Data<AppState>,
    member: Member,
    q: Query<NewQuery>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::CardsManage).await?;
    let draft = CardDraft {
        card_type: if q.card_type == "lite" { "lite" } else { "virtual" }.to_owned(),
        customer_id: q.customer_id.clone(),
        card_brand: "visa".to_owned(),
        reference: format!("paydesk-card-{}", Uuid::new_v4().simple()),
        ..CardDraft::default()
    };
    let body = render_new(&client, &member, draft, None).await?;
    Ok(HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(body))
}

/// Issues a card after a confirmation that shows the load, the fee and
/// the total debit, through the approval gate.
async fn create(
    state: Data<AppState>,
    member: Member,
    form: Form<Vec<(String, String)>>,
) -> Result<HttpResponse, PortalError> {
    let submission = Submission(form.into_inner());
    let draft: CardDraft = submission.draft()?;
    let gated = operations::issue(&state, &member, &draft, submission.confirmed()).await;
    let ran = |request: Box<ActionRequest>| match request
        .progress_as::<crate::cards::money::IssueProgress>()
        .card_id
    {
        Some(card) => Ok(done(&format!("/cards/{card}"), "Card issued.")),
        None => Err(Refusal::form("The card was not issued.")),
    };
    match answer_gate(
        &member,
        gated,
        ("Issue a card", "/cards", "/cards/new"),
        &submission,
        ran,
    )? {
        Ok(answer) => Ok(answer),
        Err(refusal) => {
            let client = state.client_for(&member, Permission::CardsManage).await?;
            Ok(unprocessable(
                render_new(&client, &member, draft, Some(refusal.message)).await?,
            ))
        }
    }
}

// --- Card page -------------------------------------------------------------

/// The part of the card page that changes by itself: status, balance and
/// transactions. It polls while anything is pending.
#[derive(Template)]
#[template(path = "cards/live.html")]
pub(super) struct Live {
    pub card: Card,
    pub transactions: Vec<CardTransaction>,
}

impl Live {
    fn polling(&self) -> bool {
        self.card.status == CardState::Pending
            || self
                .transactions
                .iter()
                .any(|t| t.status == CardTransactionStatus::Pending)
    }
}

pub(super) async fn load_live(client: &Client, id: &str) -> Result<Live, PortalError> {
    let card = client.card(id).await?;
    let transactions = client.card_transactions(id, None, Some(50)).await?.transactions;
    Ok(Live { card, transactions })
}

/// Messages shown on the card page after an action.
#[derive(Default)]
pub(super) struct Notes {
    pub notice: Option<String>,
    pub error: Option<String>,
    /// The card is too young to terminate: offer to freeze it instead.
    pub offer_freeze: bool,
}

#[derive(Template)]
#[template(path = "cards/detail.html")]
struct DetailPage {
    shell: Shell,
    live: Live,
    customer_name: String,
    notes: Notes,
    /// Fixed when the page is shown, so a double submit moves money once.
    balance_reference: String,
    can_manage: bool,
    can_reveal: bool,
    /// Revealing asks for a code: the last proof is over 5 minutes old.
    step_up: bool,
    can_request_termination: bool,
    termination_opens: Option<String>,
    limits: rules::LimitsDraft,
    /// On a sandbox connection: offer to simulate purchases.
    sandbox: bool,
    /// May move the sandbox's clock (see Sandbox tools).
    can_move_clock: bool,
}

pub(super) async fn render_detail(
    state: &AppState,
    member: &Member,
    id: &str,
    notes: Notes,
) -> Result<String, PortalError> {
    let client = state.client_for(member, Permission::CardsRead).await?;
    let live = load_live(&client, id).await?;
    let customer_name = match client.customer(&live.card.customer_id.to_string()).await {
        Ok(c) if !c.full_name().is_empty() => c.full_name(),
        Ok(c) => c.email,
        Err(_) => live.card.customer_id.to_string(),
    };
    let now = service_now(&client, member).await;
    let termination_opens = rules::termination_opens_at(live.card.created_at, now)
        .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string());
    let open = live.card.status != CardState::Terminated;
    Ok(DetailPage {
        shell: Shell::new(member, "/cards"),
        customer_name,
        notes,
        balance_reference: format!("paydesk-card-balance-{}", Uuid::new_v4().simple()),
        can_manage: open && member.can(Permission::CardsManage),
        can_reveal: open && member.can(Permission::CardsSecureView),
        step_up: crate::auth::two_factor::needs_step_up(&member.user),
        can_request_termination: open && member.can(Permission::CardsTerminateRequest),
        termination_opens,
        limits: rules::LimitsDraft::from_limits(&live.card.card_limits),
        sandbox: member.environment.as_deref() == Some("sandbox"),
        can_move_clock: crate::sandbox_tools::routes::offered(member),
        live,
    }
    .render()?)
}

async fn detail(state: Data<AppState>, member: Member, id: Path<Uuid>) -> Result<HttpResponse, PortalError> {
    let id = id.to_string();
    Ok(ok(render_detail(&state, &member, &id, Notes::default()).await?))
}

#[derive(Debug, Default, Deserialize)]
pub struct Shown {
    /// The card's status when the page was drawn.
    #[serde(default)]
    status: String,
}

/// The live part of the card page. When the card's status changed since
/// the page was drawn (provisioning done, or another member froze it), the
/// whole page is reloaded, since what may be done with the card changed.
async fn live(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
    shown: Query<Shown>,
) -> Result<HttpResponse, PortalError> {
    let id = id.to_string();
    let client = state.client_for(&member, Permission::CardsRead).await?;
    let live = load_live(&client, &id).await?;
    if !shown.status.is_empty() && CardState::from(shown.status.as_str()) != live.card.status {
        return Ok(HttpResponse::Ok().insert_header(("HX-Refresh", "true")).finish());
    }
    html(&live)
}
