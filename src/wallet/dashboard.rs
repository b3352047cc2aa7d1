//! The first page: balances with their total in the tenant's reporting
//! currency, what waits for me (kept current by polling), and what failed
//! in the last 24 hours, both on the service and at the gate.

use actix_web::web::Data;
use actix_web::HttpResponse;
use askama::Template;
use chrono::{Duration, Utc};
use futures_util::future::join_all;
use paydesk_api::models::balances::BalanceAccount;
use paydesk_api::models::transactions::{Transaction, TransactionQuery, TransactionState};
use paydesk_api::Client;
use rust_decimal::Decimal;

use crate::access::permissions::Permission;
use crate::access::Member;
use crate::approvals::RequestStatus;
use crate::approvals::{self as requests, ActionRequest};
use crate::state::AppState;
use crate::web::error::PortalError;
use crate::web::page::{html, Section, Shell};

/// The balances added up in the reporting currency at the service's mid
/// rates; currencies whose rate could not be read are named, not guessed.
pub struct Total {
    pub amount: String,
    pub unpriced: Vec<String>,
}

#[derive(Template)]
#[template(path = "wallet/dashboard.html")]
struct Dashboard {
    shell: Shell,
    balances: Section<Vec<BalanceAccount>>,
    total: Option<Total>,
    transactions: Section<Vec<Transaction>>,
    failed_transactions: Section<Vec<Transaction>>,
    failed_requests: Vec<ActionRequest>,
    /// Requests waiting for this member's decision, when they approve.
    pending_approvals: Option<usize>,
}

struct Sections {
    balances: Section<Vec<BalanceAccount>>,
    total: Option<Total>,
    latest: Section<Vec<Transaction>>,
    failed: Section<Vec<Transaction>>,
}

impl Sections {
    fn hidden() -> Self {
        Sections {
            balances: Section::Hidden,
            total: None,
            latest: Section::Hidden,
            failed: Section::Hidden,
        }
    }
}

/// Available balances in `reporting`, at each currency's mid rate.
async fn total(client: &Client, accounts: &[BalanceAccount], reporting: &str) -> Total {
    let rates = join_all(
        accounts
            .iter()
            .map(|a| crate::rates::board::mid_rate(client, a.currency.code(), reporting)),
    )
    .await;
    let mut sum = Decimal::ZERO;
    let mut unpriced = Vec::new();
    for (a, rate) in accounts.iter().zip(rates) {
        match (rate, a.currency.decimals()) {
            (Ok(rate), Some(decimals)) => sum += Decimal::new(a.available_balance.0, decimals) * rate,
            _ => unpriced.push(a.currency.to_string()),
        }
    }
    Total {
        amount: format!("{} {reporting}", crate::web::show::grouped(sum.round_dp(2))),
        unpriced,
    }
}

/// What the member may read of the service, each loaded or with the reason
/// it did not; hidden without a connection.
async fn sections(state: &AppState, member: &Member) -> Result<Sections, PortalError> {
    let client = match state
        .upstreams
        .for_member(&state.pool, &state.key, &state.audit, member)
        .await
    {
        Ok(client) => client,
        Err(PortalError::NoConnection) => return Ok(Sections::hidden()),
        Err(e) => return Err(e),
    };
    let mut out = Sections::hidden();
    if member.can(Permission::BalancesRead) {
        let accounts = client.balances().await.map(|b| b.accounts);
        if let Ok(list) = &accounts {
            let reporting = requests::reporting_currency(&state.pool, member.tenant_id).await?;
            out.total = Some(total(&client, list, &reporting).await);
        }
        out.balances = Section::from_result(accounts);
    }
    if member.can(Permission::TransactionsRead) {
        let latest = TransactionQuery {
            limit: Some(5),
            ..Default::default()
        };
        let failed = TransactionQuery {
            status: Some(TransactionState::Failed),
            limit: Some(20),
            ..Default::default()
        };
        let since = Utc::now() - Duration::hours(24);
        out.latest = Section::from_result(client.transactions(&latest).await.map(|p| p.transactions));
        out.failed = Section::from_result(client.transactions(&failed).await.map(|p| {
            p.transactions
                .into_iter()
                .filter(|t| t.updated_at >= since)
                .collect()
        }));
    }
    Ok(out)
}

/// Requests the member may read that failed at execution in the last day.
async fn failed_requests(state: &AppState, member: &Member) -> Result<Vec<ActionRequest>, PortalError> {
    let reads = state.gate.kinds().any(|k| k.readable_by(|p| member.can(p)));
    if !reads {
        return Ok(Vec::new());
    }
    let filter = requests::ListFilter {
        status: Some(RequestStatus::Failed),
        ..Default::default()
    };
    let since = Utc::now() - Duration::hours(24);
    let list = requests::list_filtered(&state.pool, member.tenant_id, &filter, 20).await?;
    Ok(list.into_iter().filter(|r| r.updated_at >= since).collect())
}

pub async fn show(state: Data<AppState>, member: Member) -> Result<HttpResponse, PortalError> {
    let s = sections(&state, &member).await?;
    let approves = state.gate.kinds().any(|k| member.can(k.approve_permission));
    let pending_approvals = match approves {
        true => Some(crate::approvals::waiting_for_me(&state, &member).await?.len()),
        false => None,
    };
    html(&Dashboard {
        shell: Shell::new(&member, "/"),
        balances: s.balances,
        total: s.total,
        transactions: s.latest,
        failed_transactions: s.failed,
        failed_requests: failed_requests(&state, &member).await?,
        pending_approvals,
    })
}
