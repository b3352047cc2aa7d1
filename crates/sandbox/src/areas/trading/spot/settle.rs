//! How a trade's money moves through the ledger: the two settled legs of
//! a fill, and the hold a resting order keeps until it fills.

use chrono::{DateTime, Utc};
use paydesk_api::models::transactions::{TransactionState, TransactionType};
use paydesk_api::units::{BaseUnits, Currency};
use serde_json::json;
use uuid::Uuid;

use super::pair::{Pair, Side};
use crate::error::ApiError;
use crate::ledger::NewTransaction;
use crate::state::Company;

/// Moves a trade's two sides through the ledger: the paying side first, so
/// a shortfall refuses the trade before anything moves.
pub fn settle_trade(
    company: &mut Company,
    pair: &Pair,
    side: Side,
    base_units: i64,
    quote_units: i64,
    order_id: Uuid,
    now: DateTime<Utc>,
) -> Result<(), ApiError> {
    let (pay, pay_units, get, get_units) = match side {
        Side::Buy => (&pair.quote, quote_units, &pair.base, base_units),
        Side::Sell => (&pair.base, base_units, &pair.quote, quote_units),
    };
    let leg = |currency: &Currency, amount: i64, direction: &str| {
        NewTransaction {
        currency: currency.clone(),
        kind: TransactionType::SwapInternal,
        state: TransactionState::Settled,
        amount: BaseUnits(amount),
        fee: BaseUnits::ZERO,
        reference: format!("TRADE_{}_{direction}", order_id.simple()),
        idempotency_key: String::new(),
        metadata: json!({"channel": "trading", "order_id": order_id, "pair": format!("{}/{}", pair.base, pair.quote)})
            .as_object()
            .cloned()
            .unwrap_or_default(),
    }
    };
    company
        .ledger
        .post_trade(leg(pay, -pay_units, "OUT"), order_id, now)?;
    company
        .ledger
        .post_trade(leg(get, get_units, "IN"), order_id, now)?;
    Ok(())
}

/// Holds what a resting order will pay: a PENDING debit of the quote
/// currency (buy) or of the base (sell).
pub(super) fn hold(
    company: &mut Company,
    pair: &Pair,
    side: Side,
    base_units: i64,
    quote_units: i64,
    order_id: Uuid,
    now: DateTime<Utc>,
) -> Result<Uuid, ApiError> {
    let (currency, units) = match side {
        Side::Buy => (&pair.quote, quote_units),
        Side::Sell => (&pair.base, base_units),
    };
    let hold_id = Uuid::new_v4();
    Ok(company
        .ledger
        .post(
            NewTransaction {
                currency: currency.clone(),
                kind: TransactionType::SwapInternal,
                state: TransactionState::Pending,
                amount: BaseUnits(-units),
                fee: BaseUnits::ZERO,
                reference: format!("ORDER_{}_HOLD", order_id.simple()),
                idempotency_key: String::new(),
                metadata: json!({"channel": "trading", "hold_id": hold_id, "hold_type": "limit_order", "order_id": order_id})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            },
            now,
        )?
        .transaction_id)
}
