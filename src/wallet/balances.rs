use actix_web::web::{Data, Path};
use actix_web::HttpResponse;
use askama::Template;
use paydesk_api::models::balances::{Balance, BalanceAccount};
use paydesk_api::units::Currency;

use crate::access::permissions::Permission;
use crate::access::Member;
use crate::state::AppState;
use crate::web::error::PortalError;
use crate::web::page::{html, Section, Shell};

#[derive(Template)]
#[template(path = "wallet/balances.html")]
struct BalancesPage {
    shell: Shell,
    accounts: Section<Vec<BalanceAccount>>,
}

pub async fn list(state: Data<AppState>, member: Member) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::BalancesRead).await?;
    let accounts = Section::from_result(client.balances().await.map(|b| b.accounts));
    html(&BalancesPage {
        shell: Shell::new(&member, "/balances"),
        accounts,
    })
}

#[derive(Template)]
#[template(path = "wallet/balance.html")]
struct BalancePage {
    shell: Shell,
    balance: Balance,
    available: String,
    pending: String,
    total: String,
}

pub async fn one(
    state: Data<AppState>,
    member: Member,
    currency: Path<String>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::BalancesRead).await?;
    let code =
        Currency::parse(&currency).map_err(|_| PortalError::NotFound("no such currency".to_owned()))?;
    let balance = client.balance(code.code()).await?;
    html(&BalancePage {
        shell: Shell::new(&member, "/balances"),
        available: balance.available_balance.formatted(&balance.currency),
        pending: balance.pending_balance.formatted(&balance.currency),
        total: balance.total_balance.formatted(&balance.currency),
        balance,
    })
}
