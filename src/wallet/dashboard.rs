use actix_web::web::Data;
use actix_web::HttpResponse;
use askama::Template;
use paydesk_api::models::balances::BalanceAccount;
use paydesk_api::models::transactions::{Transaction, TransactionQuery};

use crate::access::permissions::Permission;
use crate::access::Member;
use crate::startup::AppState;
use crate::web::error::PortalError;
use crate::web::page::{html, Section, Shell};

#[derive(Template)]
#[template(path = "wallet/dashboard.html")]
struct Dashboard {
    shell: Shell,
    balances: Section<Vec<BalanceAccount>>,
    transactions: Section<Vec<Transaction>>,
    /// Requests waiting for this member's decision, when they approve.
    pending_approvals: Option<usize>,
}

/// The balances and latest transactions the member may read, each loaded
/// or with the reason it did not; hidden without a connection.
async fn sections(
    state: &AppState,
    member: &Member,
) -> Result<(Section<Vec<BalanceAccount>>, Section<Vec<Transaction>>), PortalError> {
    let client = match state
        .upstreams
        .for_member(&state.pool, &state.key, &state.audit, member)
        .await
    {
        Ok(client) => client,
        Err(PortalError::NoConnection) => return Ok((Section::Hidden, Section::Hidden)),
        Err(e) => return Err(e),
    };
    let balances = match member.can(Permission::BalancesRead) {
        true => Section::from_result(client.balances().await.map(|b| b.accounts)),
        false => Section::Hidden,
    };
    let latest = TransactionQuery {
        limit: Some(5),
        ..Default::default()
    };
    let transactions = match member.can(Permission::TransactionsRead) {
        true => Section::from_result(client.transactions(&latest).await.map(|p| p.transactions)),
        false => Section::Hidden,
    };
    Ok((balances, transactions))
}

pub async fn show(state: Data<AppState>, member: Member) -> Result<HttpResponse, PortalError> {
    let (balances, transactions) = sections(&state, &member).await?;
    let approves = state.gate.kinds().any(|k| member.can(k.approve_permission));
    let pending_approvals = match approves {
        true => Some(
            crate::approvals::routes::waiting_for_me(&state, &member)
                .await?
                .len(),
        ),
        false => None,
    };
    html(&Dashboard {
        shell: Shell::new(&member, "/"),
        balances,
        transactions,
        pending_approvals,
    })
}
