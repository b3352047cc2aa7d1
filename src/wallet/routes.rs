use actix_web::web::{self, Data};
use actix_web::HttpResponse;
use askama::Template;
use paydesk_api::models::balances::BalanceAccount;
use paydesk_api::models::transactions::{Transaction, TransactionQuery};

use crate::access::Member;
use crate::startup::AppState;
use crate::web::error::{describe_upstream, PortalError};
use crate::web::page::{html, Shell};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/", web::get().to(dashboard));
}

/// A section that loaded, or the readable reason it did not.
pub enum Section<T> {
    Hidden,
    Loaded(T),
    Failed {
        message: String,
        correlation_id: Option<String>,
    },
}

impl<T> Section<T> {
    fn from(result: Result<T, paydesk_api::ApiError>) -> Self {
        match result {
            Ok(v) => Section::Loaded(v),
            Err(e) => {
                let (message, correlation_id) = describe_upstream(&e);
                Section::Failed {
                    message,
                    correlation_id,
                }
            }
        }
    }
}

#[derive(Template)]
#[template(path = "wallet/dashboard.html")]
struct Dashboard {
    shell: Shell,
    balances: Section<Vec<BalanceAccount>>,
    transactions: Section<Vec<Transaction>>,
}

async fn dashboard(state: Data<AppState>, member: Member) -> Result<HttpResponse, PortalError> {
    let shell = Shell::new(&state.pool, &member, "/").await?;
    let client = match state
        .upstreams
        .for_member(&state.pool, &state.key, &state.audit, &member)
        .await
    {
        Ok(client) => Some(client),
        Err(PortalError::NoConnection) => None,
        Err(e) => return Err(e),
    };
    let (balances, transactions) = match client {
        None => (Section::Hidden, Section::Hidden),
        Some(client) => {
            let balances = if member.can("balances.read") {
                Section::from(client.balances().await.map(|b| b.accounts))
            } else {
                Section::Hidden
            };
            let transactions = if member.can("transactions.read") {
                let latest = TransactionQuery {
                    limit: Some(5),
                    ..Default::default()
                };
                Section::from(client.transactions(&latest).await.map(|p| p.transactions))
            } else {
                Section::Hidden
            };
            (balances, transactions)
        }
    };
    html(&Dashboard {
        shell,
        balances,
        transactions,
    })
}
