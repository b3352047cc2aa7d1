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

pub async fn show(state: Data<AppState>, member: Member) -> Result<HttpResponse, PortalError> {
    let shell = Shell::new(&member, "/");
    let client = match state
        .upstreams
        .for_member(&state.pool, &state.key, &state.audit, &member)
        .await
    {
        Ok(client) => Some(client),
        Err(PortalError::NoConnection) => None,
        Err(e) => return Err(e),
    };
    let (mut balances, mut transactions) = (Section::Hidden, Section::Hidden);
    if let Some(client) = client {
        if member.can(Permission::BalancesRead) {
            balances = Section::from_result(client.balances().await.map(|b| b.accounts));
        }
        if member.can(Permission::TransactionsRead) {
            let latest = TransactionQuery {
                limit: Some(5),
                ..Default::default()
            };
            transactions = Section::from_result(client.transactions(&latest).await.map(|p| p.transactions));
        }
    }
    let approves = state.gate.kinds().any(|k| member.can(k.approve_permission));
    let pending_approvals = if approves {
        Some(
            crate::approvals::routes::waiting_for_me(&state, &member)
                .await?
                .len(),
        )
    } else {
        None
    };
    html(&Dashboard {
        shell,
        balances,
        transactions,
        pending_approvals,
    })
}
