//! `/virtual-accounts`: the list (by customer), an account's page with the
//! deposits it received (live), issuing one from a customer's page, and on
//! a sandbox a simulated bank transfer into it.

use std::future::Future;

use actix_web::web::{self, Data, Form, Path, Query};
use actix_web::{HttpRequest, HttpResponse};
use askama::Template;

use chrono::{DateTime, Utc};
use paydesk_api::models::transactions::Transaction;
use paydesk_api::models::virtual_accounts::VirtualAccount;
use paydesk_api::units::Currency;
use paydesk_api::{ApiError, Client};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::accounts::{self, IssueForm, TransferForm};
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::area::Area;
use crate::audit;
use crate::state::AppState;
use crate::web::error::PortalError;
use crate::web::form::{split, FieldErrors};
use crate::web::listing::{self, CsvRecord, Dates, Listing, Problem, Range};
use crate::web::menu::{MenuEntry, MenuGroup, ShownTo};
use crate::web::page::{done, html, ok, unprocessable, Section, Shell};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/virtual-accounts", web::get().to(list))
        .route("/virtual-accounts/export.csv", web::get().to(export))
        .route("/virtual-accounts/{id}", web::get().to(page))
        .route("/virtual-accounts/{id}/deposits", web::get().to(deposits))
        .route(
            "/virtual-accounts/{id}/transfers",
            web::post().to(simulate_transfer),
        )
        .route("/customers/{id}/virtual-accounts", web::post().to(issue));
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct Filters {
    #[serde(default)]
    customer_id: String,
    #[serde(flatten)]
    dates: Dates,
    #[serde(default)]
    cursor: String,
}

impl Filters {
    fn customer(&self) -> Option<String> {
        Some(self.customer_id.trim().to_owned()).filter(|c| !c.is_empty())
    }
}

#[derive(Template)]
#[template(path = "virtual_accounts/rows.html")]
struct Rows {
    accounts: Vec<VirtualAccount>,
    next: Option<String>,
}

fn rows(l: Listing<VirtualAccount>) -> Rows {
    Rows {
        accounts: l.rows,
        next: l.next,
    }
}

#[derive(Template)]
#[template(path = "virtual_accounts/list.html")]
struct ListPage {
    shell: Shell,
    filters: Filters,
    rows: Rows,
    total: u64,
    capped: bool,
    error: Problem,
    export_query: String,
}

impl listing::Cursored for Filters {
    type Row = VirtualAccount;

    fn fetch(
        &self,
        client: &Client,
        cursor: Option<String>,
        limit: u32,
    ) -> impl Future<Output = Result<listing::Page<VirtualAccount>, ApiError>> + Send + use<> {
        let (client, customer) = (client.clone(), self.customer());
        async move {
            let p = client
                .virtual_accounts(customer.as_deref(), cursor, Some(limit))
                .await?;
            let next = p.has_more.then_some(p.next_cursor);
            Ok(listing::Page {
                rows: p.virtual_accounts,
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

    fn created(row: &VirtualAccount) -> DateTime<Utc> {
        row.created_at
    }
}

impl CsvRecord for VirtualAccount {
    const HEADER: &'static [&'static str] = &[
        "created_at",
        "id",
        "customer_id",
        "account_number",
        "account_name",
        "bank_name",
        "bank_code",
        "currency",
        "status",
        "reference",
        "total_received",
    ];

    fn fields(self) -> Vec<String> {
        vec![
            self.created_at.to_rfc3339(),
            self.id.to_string(),
            self.customer_id.to_string(),
            self.account_number.clone(),
            self.account_name.clone(),
            self.bank_name.clone(),
            self.bank_code.clone(),
            self.currency.clone(),
            self.status.to_string(),
            self.reference.clone(),
            self.total_received.to_string(),
        ]
    }
}

/// Streams every account the filters match as CSV, on record.
async fn export(
    state: Data<AppState>,
    member: Member,
    filters: Query<Filters>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::VirtualAccountsRead).await?;
    let rows = filters
        .dates
        .range()
        .within(listing::every(&client, &*filters), |a| a.created_at);
    let response = listing::export("virtual-accounts", rows).await?;
    audit::exported(&state.pool, &member, "virtual_accounts", &*filters).await?;
    Ok(response)
}

async fn list(
    state: Data<AppState>,
    member: Member,
    req: HttpRequest,
    filters: Query<Filters>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::VirtualAccountsRead).await?;
    let filters = filters.into_inner();
    let loaded = listing::load(&client, &filters).await;
    listing::respond(
        &req,
        !filters.cursor.is_empty(),
        loaded,
        |l| rows(l).render(),
        |l, error| {
            let (shell, total, capped) = (Shell::new(&member, "/virtual-accounts"), l.total, l.capped);
            ListPage {
                shell,
                export_query: listing::query(&filters, None),
                filters,
                rows: rows(l),
                total,
                capped,
                error,
            }
            .render()
        },
    )
}

/// The deposits panel, which refreshes itself while the page is open.
#[derive(Template)]
#[template(path = "virtual_accounts/deposits.html")]
struct Deposits {
    account_id: Uuid,
    deposits: Section<Vec<Transaction>>,
}

#[derive(Template)]
#[template(path = "virtual_accounts/detail.html")]
struct DetailPage {
    shell: Shell,
    account: VirtualAccount,
    received: String,
    deposits: Deposits,
    /// On a sandbox, for those who may use its tools.
    can_simulate: bool,
    errors: FieldErrors,
}

async fn load_deposits(client: &paydesk_api::Client, account: &VirtualAccount) -> Deposits {
    Deposits {
        account_id: account.id,
        deposits: Section::from_result(accounts::deposits(client, account).await),
    }
}

async fn render_detail(
    state: &AppState,
    member: &Member,
    id: Uuid,
    errors: FieldErrors,
) -> Result<String, PortalError> {
    let client = state.client_for(member, Permission::VirtualAccountsRead).await?;
    let account = client.virtual_account(&id.to_string()).await?;
    let naira = Currency::parse("NGN").expect("NGN is a currency");
    Ok(DetailPage {
        shell: Shell::new(member, "/virtual-accounts"),
        received: account.total_received.formatted(&naira),
        deposits: load_deposits(&client, &account).await,
        can_simulate: crate::sandbox_tools::routes::offered(member),
        account,
        errors,
    }
    .render()?)
}

async fn page(state: Data<AppState>, member: Member, id: Path<Uuid>) -> Result<HttpResponse, PortalError> {
    Ok(ok(
        render_detail(&state, &member, *id, FieldErrors::default()).await?
    ))
}

async fn deposits(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::VirtualAccountsRead).await?;
    let account = client.virtual_account(&id.to_string()).await?;
    html(&load_deposits(&client, &account).await)
}

/// Issues an account for the customer, from the customer's page.
async fn issue(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
    form: Form<IssueForm>,
) -> Result<HttpResponse, PortalError> {
    match split(accounts::issue(&state, &member, *id, &form).await)? {
        Ok(account) => Ok(done(
            &format!("/virtual-accounts/{}", account.id),
            format!(
                "Virtual account {} at {} issued.",
                account.account_number, account.bank_name
            ),
        )),
        Err(refusal) => Err(PortalError::BadRequest(refusal.message)),
    }
}

/// On a sandbox: a bank transfer arrives in the account.
async fn simulate_transfer(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
    form: Form<TransferForm>,
) -> Result<HttpResponse, PortalError> {
    if !crate::sandbox_tools::routes::offered(&member) {
        member.require(Permission::ConnectionsManage)?;
        return Err(PortalError::NotFound(
            "transfers can be simulated only on a sandbox connection".to_owned(),
        ));
    }
    match split(accounts::simulate_transfer(&state, &member, *id, &form).await)? {
        Ok(notice) => Ok(done(&format!("/virtual-accounts/{id}"), notice)),
        Err(refusal) => Ok(unprocessable(
            render_detail(&state, &member, *id, refusal.into()).await?,
        )),
    }
}

/// Virtual accounts issued to customers and what they received.
pub const AREA: Area = Area {
    routes: configure,
    menu: &[MenuEntry::new(
        MenuGroup::Money,
        "/virtual-accounts",
        "Virtual accounts",
        ShownTo::Holding(&[Permission::VirtualAccountsRead]),
    )],
    kinds: crate::area::no_kinds,
};
