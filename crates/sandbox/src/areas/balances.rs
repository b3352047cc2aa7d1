use actix_web::http::StatusCode;
use actix_web::web::{Data, Path};
use paydesk_api::models::balances::BalanceList;
use paydesk_api::units::Currency;

use crate::error::ApiError;
use crate::respond::{envelope, Caller, JsonAnswer, QueryParams};
use crate::state::Shared;

/// `GET /api/balances`: every wallet of the company.
pub async fn list(shared: Data<Shared>, caller: Caller, q: QueryParams) -> Result<JsonAnswer, ApiError> {
    q.only(&["limit", "page"])?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let accounts = company
        .ledger
        .accounts()
        .iter()
        .map(|a| company.ledger.balance_account(a))
        .collect();
    let accounts = q.whole_or_page(accounts)?;
    let data = BalanceList {
        company_id: company.id,
        accounts,
    };
    Ok(envelope(
        StatusCode::OK,
        "Balances retrieved successfully",
        data,
        &caller.request_id,
        now,
    ))
}

/// `GET /api/balances/{currency}`: 404 when the company holds no wallet for it.
pub async fn one(
    shared: Data<Shared>,
    caller: Caller,
    currency: Path<String>,
) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let no_wallet = || ApiError::NotFound(format!("the company holds no {} wallet", currency.as_str()));
    let code = Currency::parse(&currency).map_err(|_| no_wallet())?;
    let account = company.ledger.account(&code).ok_or_else(no_wallet)?;
    let data = company.ledger.balance(company.id, account, now);
    Ok(envelope(
        StatusCode::OK,
        "Balance retrieved successfully",
        data,
        &caller.request_id,
        now,
    ))
}
