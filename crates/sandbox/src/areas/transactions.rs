use actix_web::http::StatusCode;
use actix_web::web::{Data, Path};
use paydesk_api::models::transactions::{Side, TransactionPage, TransactionState, TransactionType};
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

/// Whether the metadata's `key` is the string `value` (`ignore_case` for
/// names such as a channel).
fn metadata_is(
    metadata: &serde_json::Map<String, serde_json::Value>,
    key: &str,
    value: &str,
    ignore_case: bool,
) -> bool {
    metadata.get(key).and_then(|v| v.as_str()).is_some_and(|v| {
        if ignore_case {
            v.eq_ignore_ascii_case(value)
        } else {
            v == value
        }
    })
}

/// `GET /api/transactions`, newest first. Filters: type, status, currency,
/// `reference` (exact), `address` (the deposit or withdrawal address),
/// `hash` (a deposit's or withdrawal's tx hash), `channel` (metadata's
/// channel: `blockchain`, `payout`, …, any case), `action` (`credit` or
/// `debit`, the transaction's side), `customer_reference` (metadata's
/// `customer_reference`, exact: a transaction that names none never
/// matches) and `wallet_id` (the wallet's account id or account number).
/// Any other parameter is a 400 naming it.
pub async fn list(shared: Data<Shared>, caller: Caller, q: QueryParams) -> Result<JsonAnswer, ApiError> {
    q.known(&[
        "type",
        "status",
        "currency",
        "reference",
        "address",
        "hash",
        "channel",
        "action",
        "customer_reference",
        "wallet_id",
    ])?;
    let kind = q.parse_opt("type", TYPES, TransactionType::parse)?;
    let state = q.parse_opt("status", STATES, TransactionState::parse)?;
    let currency = q.parse_opt("currency", "a currency code such as USDT", |v| {
        Currency::parse(v).ok()
    })?;
    let side = q.parse_opt("action", "credit, debit", |v| {
        match v.to_ascii_lowercase().as_str() {
            "credit" => Some(Side::Credit),
            "debit" => Some(Side::Debit),
            _ => None,
        }
    })?;
    let limit = q.limit(20, 100)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    // An unknown wallet matches nothing (an empty list, as any filter).
    let wallet = q.get("wallet_id").map(|w| {
        company
            .ledger
            .accounts()
            .iter()
            .find(|a| a.id.to_string().eq_ignore_ascii_case(w) || a.number == w)
            .map(|a| a.number.clone())
    });
    let page = paginate(
        company.ledger.entries(),
        |e| {
            kind.is_none_or(|k| e.tx.kind == k)
                && state.is_none_or(|s| e.tx.state == s)
                && currency.as_ref().is_none_or(|c| &e.tx.currency == c)
                && q.get("reference").is_none_or(|r| e.tx.reference == r)
                && q.get("address")
                    .is_none_or(|a| concerns_address(&e.tx.metadata, a))
                && q.get("hash")
                    .is_none_or(|h| metadata_is(&e.tx.metadata, "tx_hash", h, false))
                && q.get("channel")
                    .is_none_or(|c| metadata_is(&e.tx.metadata, "channel", c, true))
                && q.get("customer_reference")
                    .is_none_or(|r| metadata_is(&e.tx.metadata, "customer_reference", r, false))
                && side.is_none_or(|s| e.tx.side == s)
                && wallet
                    .as_ref()
                    .is_none_or(|w| w.as_ref().is_some_and(|n| &e.tx.account_number == n))
        },
        q.at()?,
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
