//! `/trading`: the quote form and its live quote, placing an order from
//! it, the orders with their fills, and cancelling one that rests.

use actix_web::web::{self, Data, Form, Path, Query};
use actix_web::{HttpRequest, HttpResponse};
use askama::Template;
use chrono::Utc;
use futures_util::{Stream, TryStreamExt};
use paydesk_api::models::trading::{Order, OrderStatus, Quote};
use paydesk_api::{ApiError, Client};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::spot::{self, OrderForm, QuoteForm};
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::approvals::ActionRequest;
use crate::approvals::{answer_gate, Submission};
use crate::area::Area;
use crate::audit;
use crate::state::AppState;
use crate::web::error::{describe_upstream, PortalError};
use crate::web::form::{split, FieldErrors, Refusal};
use crate::web::listing::{self, CsvRecord, Dates, Listing, Problem};
use crate::web::menu::{MenuEntry, MenuGroup, ShownTo};
use crate::web::page::{done, html, is_htmx, ok, unprocessable, Shell};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/trading", web::get().to(page))
        .route("/trading/export.csv", web::get().to(export))
        .route("/trading/quotes", web::post().to(new_quote))
        .route("/trading/quotes/{id}", web::get().to(quote_panel))
        .route("/trading/orders", web::post().to(place_order))
        .route("/trading/orders/{id}", web::get().to(order_page))
        .route("/trading/orders/{id}/cancel", web::post().to(cancel_order));
}

/// The live quote: its countdown refreshes every second until it expires.
#[derive(Template)]
#[template(path = "trading/quote.html")]
struct QuotePanel {
    quote: Quote,
    seconds_left: i64,
    csrf_token: String,
    can_order: bool,
}

impl QuotePanel {
    fn new(quote: Quote, member: &Member) -> Self {
        let seconds_left = (quote.expires_at - Utc::now()).num_seconds().max(0);
        QuotePanel {
            seconds_left: if quote.is_expired || quote.is_exhausted {
                0
            } else {
                seconds_left
            },
            quote,
            csrf_token: member.user.csrf_token.clone(),
            can_order: member.can(Permission::TradingRequest),
        }
    }
}

/// The quote form with what was typed, what was refused, and the quote.
#[derive(Template)]
#[template(path = "trading/quoting.html")]
struct Quoting {
    pairs: Vec<String>,
    form: QuoteForm,
    errors: FieldErrors,
    quote: Option<QuotePanel>,
    csrf_token: String,
}

#[derive(Debug, Default, Deserialize, Serialize)]
pub struct OrderFilters {
    #[serde(default)]
    status: String,
    /// `BASE/QUOTE`; with side and date, read from each page loaded (the
    /// service's list filters by status only).
    #[serde(default)]
    pair: String,
    #[serde(default)]
    side: String,
    #[serde(flatten)]
    dates: Dates,
    #[serde(default)]
    cursor: String,
}

impl OrderFilters {
    /// Whether the pair and side, which the service doesn't filter by,
    /// keep `o`.
    fn keeps(pair: &str, side: &str, o: &Order) -> bool {
        (pair.is_empty() || pair == format!("{}/{}", o.base_currency, o.quote_currency))
            && (side.is_empty() || o.side.eq_ignore_ascii_case(side))
    }

    fn status(&self) -> Option<String> {
        Some(self.status.clone()).filter(|s| !s.is_empty())
    }

    /// Filters read from the page need bigger pages to fill one.
    fn page_size(&self) -> u32 {
        match self.pair.is_empty() && self.side.is_empty() {
            true => 25,
            false => 100,
        }
    }
}

#[derive(Template)]
#[template(path = "trading/order_rows.html")]
struct Rows {
    orders: Vec<Order>,
    next: Option<String>,
}

#[derive(Template)]
#[template(path = "trading/page.html")]
struct Page {
    shell: Shell,
    /// None only for "load more", which renders the rows alone.
    quoting: Option<Quoting>,
    filters: OrderFilters,
    rows: Rows,
    capped: bool,
    error: Problem,
    export_query: String,
}

fn rows(l: Listing<Order>) -> Rows {
    Rows {
        orders: l.rows,
        next: l.next,
    }
}

/// The quoting part for `member`, with the form as typed.
async fn quoting(
    state: &AppState,
    member: &Member,
    form: QuoteForm,
    errors: FieldErrors,
    quote: Option<Quote>,
) -> Result<Quoting, PortalError> {
    let client = state.client_for(member, Permission::TradingRead).await?;
    Ok(Quoting {
        pairs: spot::pairs(&client, true).await?,
        form,
        errors,
        quote: quote.map(|q| QuotePanel::new(q, member)),
        csrf_token: member.user.csrf_token.clone(),
    })
}

/// The quote form, empty.
async fn blank_quoting(state: &AppState, member: &Member) -> Result<Quoting, PortalError> {
    quoting(state, member, QuoteForm::default(), FieldErrors::default(), None).await
}

/// Every order the filters match (dates aside), newest first, a page at a
/// time.
fn every(client: &Client, filters: &OrderFilters) -> impl Stream<Item = Result<Order, ApiError>> + 'static {
    let (client, status) = (client.clone(), filters.status());
    let (pair, side) = (filters.pair.clone(), filters.side.clone());
    listing::all_pages(move |cursor| {
        let (client, status) = (client.clone(), status.clone());
        async move {
            let p = client.orders(status.as_deref(), cursor, Some(100)).await?;
            Ok((p.orders, p.has_more.then_some(p.next_cursor)))
        }
    })
    .try_filter(move |o| std::future::ready(OrderFilters::keeps(&pair, &side, o)))
}

/// The orders the filters ask for (see `listing::page_or_range`).
async fn orders(client: &Client, filters: &OrderFilters) -> Result<Listing<Order>, ApiError> {
    let page = async {
        let cursor = Some(filters.cursor.clone()).filter(|c| !c.is_empty());
        let page = client
            .orders(filters.status().as_deref(), cursor, Some(filters.page_size()))
            .await?;
        let next = page.has_more.then_some(page.next_cursor.as_str());
        let kept = page
            .orders
            .into_iter()
            .filter(|o| OrderFilters::keeps(&filters.pair, &filters.side, o))
            .collect();
        Ok(Listing::new(kept, page.total, next, filters))
    };
    let all = every(client, filters);
    listing::page_or_range(filters.dates.range(), page, all, |o| o.created_at, filters).await
}

impl CsvRecord for Order {
    const HEADER: &'static [&'static str] = &[
        "created_at",
        "id",
        "pair",
        "side",
        "type",
        "quantity",
        "price",
        "filled_quantity",
        "status",
        "exchange",
        "reference",
        "updated_at",
    ];

    fn fields(self) -> Vec<String> {
        vec![
            self.created_at.to_rfc3339(),
            self.id.to_string(),
            format!("{}/{}", self.base_currency, self.quote_currency),
            self.side.clone(),
            self.order_type.clone(),
            self.quantity.to_string(),
            self.price.to_string(),
            self.filled_quantity.to_string(),
            self.status.to_string(),
            self.exchange.clone().unwrap_or_default(),
            self.reference.clone(),
            self.updated_at.to_rfc3339(),
        ]
    }
}

/// Streams every order the filters match as CSV, on record.
async fn export(
    state: Data<AppState>,
    member: Member,
    filters: Query<OrderFilters>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::TradingRead).await?;
    let rows = filters
        .dates
        .range()
        .within(every(&client, &filters), |o| o.created_at);
    let response = listing::export("orders", rows).await?;
    audit::exported(&state.pool, &member, "orders", &*filters).await?;
    Ok(response)
}

/// The trading page, the quoting part as given, the first orders below.
async fn whole_page(state: &AppState, member: &Member, quoting: Quoting) -> Result<String, PortalError> {
    let client = state.client_for(member, Permission::TradingRead).await?;
    let filters = OrderFilters::default();
    let (listing, error) = match orders(&client, &filters).await {
        Ok(listing) => (listing, None),
        Err(e) => (
            Listing::new(Vec::new(), 0, None, &filters),
            Some(describe_upstream(&e)),
        ),
    };
    let (shell, capped) = (Shell::new(member, "/trading"), listing.capped);
    Ok(Page {
        shell,
        quoting: Some(quoting),
        export_query: listing::query(&filters, None),
        filters,
        rows: rows(listing),
        capped,
        error,
    }
    .render()?)
}

async fn page(
    state: Data<AppState>,
    member: Member,
    req: HttpRequest,
    filters: Query<OrderFilters>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::TradingRead).await?;
    let filters = filters.into_inner();
    let loaded = orders(&client, &filters).await;
    let more = !filters.cursor.is_empty();
    // "Load more" needs only the rows, not the quoting part's pairs.
    let quoting = match is_htmx(&req) && more {
        true => None,
        false => Some(blank_quoting(&state, &member).await?),
    };
    listing::respond(
        &req,
        more,
        loaded,
        |l| rows(l).render(),
        |l, error| {
            let (shell, capped) = (Shell::new(&member, "/trading"), l.capped);
            Page {
                shell,
                quoting,
                export_query: listing::query(&filters, None),
                filters,
                rows: rows(l),
                capped,
                error,
            }
            .render()
        },
    )
}

async fn new_quote(
    state: Data<AppState>,
    member: Member,
    req: HttpRequest,
    form: Form<QuoteForm>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::TradingRequest).await?;
    let form = form.into_inner();
    let (quote, errors, refused) = match split(spot::quote(&client, &form).await)? {
        Ok(quote) => (Some(quote), FieldErrors::default(), false),
        Err(refusal) => (None, refusal.into(), true),
    };
    let part = quoting(&state, &member, form, errors, quote).await?;
    let body = match is_htmx(&req) {
        true => part.render()?,
        false => whole_page(&state, &member, part).await?,
    };
    Ok(if refused { unprocessable(body) } else { ok(body) })
}

/// The quote panel again, for its countdown.
async fn quote_panel(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::TradingRead).await?;
    let quote = client.trading_quote(&id.to_string()).await?;
    html(&QuotePanel::new(quote, &member))
}

/// Places the order from the quote: a confirmation that says what is sent
/// and received first, then the gate.
async fn place_order(
    state: Data<AppState>,
    member: Member,
    form: Form<Vec<(String, String)>>,
) -> Result<HttpResponse, PortalError> {
    let submission = Submission(form.into_inner());
    let order: OrderForm = submission.draft()?;
    let gated = spot::place(&state, &member, &order, submission.confirmed()).await;
    let ran =
        |request: Box<ActionRequest>| match request.progress_as::<super::action::OrderProgress>().order_id {
            Some(id) => Ok(done(&format!("/trading/orders/{id}"), "Order placed.")),
            None => Err(Refusal::form("The order was not placed; get a new quote.")),
        };
    let confirm = ("Place an order", "/trading/orders", "/trading");
    match answer_gate(&member, gated, confirm, &submission, ran)? {
        Ok(answer) => Ok(answer),
        Err(refusal) => {
            let part = quoting(&state, &member, QuoteForm::default(), refusal.into(), None).await?;
            Ok(unprocessable(whole_page(&state, &member, part).await?))
        }
    }
}

#[derive(Template)]
#[template(path = "trading/order.html")]
struct OrderPage {
    shell: Shell,
    order: Order,
    can_cancel: bool,
    error: Option<String>,
}

fn order_body(member: &Member, order: Order, error: Option<String>) -> Result<String, PortalError> {
    Ok(OrderPage {
        shell: Shell::new(member, "/trading"),
        can_cancel: order.status == OrderStatus::Pending && member.can(Permission::TradingRequest),
        order,
        error,
    }
    .render()?)
}

async fn order_page(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::TradingRead).await?;
    let order = client.order(&id.to_string()).await?;
    Ok(ok(order_body(&member, order, None)?))
}

async fn cancel_order(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
    form: Form<Vec<(String, String)>>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::TradingRequest).await?;
    let order = client.order(&id.to_string()).await?;
    let submission = Submission(form.into_inner());
    let back = format!("/trading/orders/{}", order.id);
    let gated = spot::cancel(&state, &member, &order, submission.confirmed()).await;
    let ran = |_| Ok(done(&back, "The order is cancelled; what it held is released."));
    let action = format!("{back}/cancel");
    match answer_gate(
        &member,
        gated,
        ("Cancel the order", &action, &back),
        &submission,
        ran,
    )? {
        Ok(answer) => Ok(answer),
        Err(refusal) => Ok(unprocessable(order_body(&member, order, Some(refusal.message))?)),
    }
}

/// Spot, scheduled and target orders, through the gate.
pub const AREA: Area = Area {
    routes: |cfg| {
        configure(cfg);
        super::scheduled_routes::configure(cfg);
        super::target_routes::configure(cfg);
    },
    menu: &[MenuEntry::new(
        MenuGroup::Money,
        "/trading",
        "Trading",
        ShownTo::Holding(&[Permission::TradingRead]),
    )],
    kinds: |gate| {
        gate.with(super::action::OrderAction)
            .with(super::action::CancelAction)
            .with(super::schedules::ScheduleAction)
            .with(super::schedules::ScheduleChangeAction)
            .with(super::targets::TargetAction)
            .with(super::targets::TargetCancelAction)
    },
};
