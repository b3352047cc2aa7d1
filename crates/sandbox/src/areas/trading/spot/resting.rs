//! Resting limit orders: their funds held, filled when the market reaches
//! their price, or cancelled with the hold released.

use chrono::{DateTime, Utc};
use paydesk_api::models::trading::{Fill, Order};
use paydesk_api::models::transactions::{TransactionState, TransactionType};
use paydesk_api::wire::codes;
use rust_decimal::Decimal;
use uuid::Uuid;

use super::book::Resting;
use super::lifecycle::{transition, OrderEvent};
use super::pair::Side;
use super::settle::settle_trade;
use crate::areas::market::prices::Market;
use crate::error::ApiError;
use crate::state::Company;

/// Fills every resting order of the company the market reached, whole, at
/// the order's own price.
pub fn fill_resting(company: &mut Company, market: &Market, now: DateTime<Utc>) {
    let due: Vec<Resting> = company
        .trades
        .resting
        .iter()
        .filter(|r| {
            market
                .mid(r.pair.base.code(), r.pair.quote.code())
                .zip(company.trades.order(r.order_id).ok().map(|o| o.price))
                .is_some_and(|(mid, limit)| match r.side {
                    Side::Buy => mid <= limit,
                    Side::Sell => mid >= limit,
                })
        })
        .cloned()
        .collect();
    for r in due {
        let Some(next) = company
            .trades
            .order(r.order_id)
            .ok()
            .and_then(|o| transition(&o.status, OrderEvent::Fill).ok())
        else {
            tracing::error!(order = %r.order_id, "a resting order is no longer pending");
            continue;
        };
        let filled = company
            .ledger
            .transition(
                r.hold_tx,
                TransactionType::SwapInternal,
                TransactionState::Reversed,
                now,
            )
            .map(|_| ())
            .and_then(|()| {
                settle_trade(
                    company,
                    &r.pair,
                    r.side,
                    r.base_units,
                    r.quote_units,
                    r.order_id,
                    now,
                )
            });
        if let Err(e) = filled {
            tracing::error!(error = %e, order = %r.order_id, "a resting order could not be filled");
            continue;
        }
        company.trades.resting.retain(|x| x.order_id != r.order_id);
        if let Some(o) = company.trades.order_mut(r.order_id) {
            o.status = next;
            o.filled_quantity = o.quantity;
            o.remaining_quantity = Decimal::ZERO;
            o.updated_at = now;
            o.fills.push(Fill {
                id: Uuid::new_v4(),
                order_id: r.order_id,
                quantity: o.quantity,
                price: o.price,
                created_at: now,
            });
        }
    }
}

/// `DELETE /api/trading/orders/{id}`: a resting order is cancelled and its
/// hold released; any other order has filled (or ended) and can't be.
pub fn cancel_order(company: &mut Company, id: Uuid, now: DateTime<Utc>) -> Result<Order, ApiError> {
    let status = company.trades.order(id)?.status.clone();
    let refused = || {
        ApiError::unprocessable(
            codes::INVALID_STATE,
            format!("the order is {status} and can no longer be cancelled"),
        )
    };
    let next = transition(&status, OrderEvent::Cancel).map_err(|_| refused())?;
    let index = company
        .trades
        .resting
        .iter()
        .position(|r| r.order_id == id)
        .ok_or_else(refused)?;
    let r = company.trades.resting.remove(index);
    company.ledger.transition(
        r.hold_tx,
        TransactionType::SwapInternal,
        TransactionState::Reversed,
        now,
    )?;
    let o = company
        .trades
        .order_mut(id)
        .ok_or_else(|| ApiError::NotFound(format!("no order {id}")))?;
    o.status = next;
    o.updated_at = now;
    Ok(o.clone())
}
