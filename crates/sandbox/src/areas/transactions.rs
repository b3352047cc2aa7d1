use actix_web::http::StatusCode;
use actix_web::web::{Data, Path};
use paydesk_api::models::transactions::{TransactionPage, TransactionState, TransactionType};
use paydesk_api::units::Currency;

use crate::error::ApiError;
use crate::pagination::paginate;
use crate::respond::{envelope, Caller, JsonAnswer, QueryParams};
use crate::state::Shared;

const TYPES: &str = "DEPOSIT_CONFIRMED, DEPOSIT_DETECTED, DEPOSIT_PENDING, WITHDRAWAL_INITIATED, WITHDRAWAL_FAILED, P2P_TRANSFER, SWAP_INTERNAL, FX_REBALANCING, FEE_ONLY, REVERSAL";
const STATES: &str = "PENDING, IN_PROGRESS, SETTLED, FAILED, REVERSED";

/// Whether a transaction concerns `address`: a deposit's `address` or a
/// withdrawal's `to_address` in its metadata.
fn concerns_address(metadata: &serde_json::Map<String, serde_json::Value>, address: &str) -> bool {
    ["address", "to_address"]
        .iter()
        .any(|key| metadata.get(*key).and_then(|v| v.as_str()) == Some(address))
}

/// `GET /api/transactions`: filters type, status, currency, `reference`
/// (exact) and `address` (the deposit or withdrawal address); newest first.
pub async fn list(shared: Data<Shared>, caller: Caller, q: QueryParams) -> Result<JsonAnswer, ApiError> {
    let kind = q.parse_opt("type", TYPES, TransactionType::parse)?;
    let state = q.parse_opt("status", STATES, TransactionState::parse)?;
    let currency = q.parse_opt("currency", "a currency code such as USDT", |v| {
        Currency::parse(v).ok()
    })?;
    let limit = q.limit(20, 100)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let page = paginate(
        company.ledger.entries(),
        |e| {
            kind.is_none_or(|k| e.tx.kind == k)
                && state.is_none_or(|s| e.tx.state == s)
                && currency.as_ref().is_none_or(|c| &e.tx.currency == c)
                && q.get("reference").is_none_or(|r| e.tx.reference == r)
                && q.get("address")
                    .is_none_or(|a| concerns_address(&e.tx.metadata, a))
        },
        q.get("cursor"),
        limit,
    )?;
    let data = TransactionPage {
        transactions: page.items.iter().map(|e| e.tx.clone()).collect(),
        next_cursor: page.next_cursor,
        previous_cursor: page.previous_cursor,
        total_count: page.total as u64,
        has_more: page.has_more,
    };
    Ok(envelope(
        StatusCode::OK,
        "Transactions retrieved successfully",
        data,
        &caller.request_id,
        now,
    ))
}

/// `GET /api/transactions/{idOrReference}`.
pub async fn one(shared: Data<Shared>, caller: Caller, id: Path<String>) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let tx = company.ledger.find(&id).ok_or_else(|| {
        ApiError::NotFound(format!("no transaction with id or reference '{}'", id.as_str()))
    })?;
    Ok(envelope(
        StatusCode::OK,
        "Transaction retrieved successfully",
        tx,
        &caller.request_id,
        now,
    ))
}
