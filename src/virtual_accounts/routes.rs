//! `/virtual-accounts`: the list (by customer), an account's page with the
//! deposits it received (live), issuing one from a customer's page, and on
//! a sandbox a simulated bank transfer into it.

use actix_web::web::{self, Data, Form, Path, Query};
use actix_web::{HttpRequest, HttpResponse};
use askama::Template;
use paydesk_api::models::transactions::Transaction;
use paydesk_api::models::virtual_accounts::VirtualAccount;
use paydesk_api::units::Currency;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::accounts::{self, IssueForm, TransferForm};
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::startup::AppState;
use crate::web::error::PortalError;
use crate::web::form::{split, FieldErrors};
use crate::web::listing::{self, Listing, Problem};
use crate::web::page::{done, html, ok, unprocessable, Section, Shell};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/virtual-accounts", web::get().to(list))
        .route("/virtual-accounts/{id}", web::get().to(page))
        .route("/virtual-accounts/{id}/deposits", web::get().to(deposits))
        .route(
            "/virtual-accounts/{id}/transfers",
            web::post().to(simulate_transfer),
        )
        .route("/customers/{id}/virtual-accounts", web::post().to(issue));
}

#[derive(Debug, Default, Deserialize, Serialize)]
pub struct Filters {
    #[serde(default)]
    customer_id: String,
    #[serde(default)]
    cursor: String,
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
    error: Problem,
}

async fn list(
    state: Data<AppState>,
    member: Member,
    req: HttpRequest,
    filters: Query<Filters>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::VirtualAccountsRead).await?;
    let filters = filters.into_inner();
    let customer = Some(filters.customer_id.trim()).filter(|c| !c.is_empty());
    let cursor = Some(filters.cursor.clone()).filter(|c| !c.is_empty());
    let loaded = client
        .virtual_accounts(customer, cursor, Some(25))
        .await
        .map(|p| {
            let next = p.has_more.then_some(p.next_cursor.as_str());
            Listing::new(p.virtual_accounts, p.total, next, &filters)
        });
    listing::respond(
        &req,
        !filters.cursor.is_empty(),
        loaded,
        |l| rows(l).render(),
        |l, error| {
            let (shell, total) = (Shell::new(&member, "/virtual-accounts"), l.total);
            ListPage {
                shell,
                filters,
                rows: rows(l),
                total,
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
