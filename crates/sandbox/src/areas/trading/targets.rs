//! Target orders (spec "Trading" rule 6; sandbox-rules.md): escrow locked
//! at creation as a held (PENDING) SWAP_INTERNAL debit; triggered when the
//! market price (no spread) crosses `target_price` — at creation or at a
//! price change — and filled 10 s later at the target price with a fee of
//! 0.5% of the notional; expired or cancelled while active. Whatever ends
//! the order releases the hold (the escrow transaction becomes REVERSED),
//! and a fill then moves exactly the fill's amounts, so the escrow is
//! released exactly.
//!
//! Decisions where the documents are silent: NGN pairs are refused (they
//! trade through quotes only); a triggered order can't be cancelled (its
//! fill is under way); amounts in the record are whole units.

use chrono::{DateTime, Duration, Utc};
use paydesk_api::models::trading::{NewTargetOrder, TargetOrder};
use paydesk_api::models::transactions::{TransactionState, TransactionType};
use paydesk_api::units::BaseUnits;
use paydesk_api::wire::codes;
use rust_decimal::Decimal;
use serde_json::json;
use uuid::Uuid;

use super::spot::{Pair, Side};
use crate::areas::market::Market;
use crate::book::Book;
use crate::error::ApiError;
use crate::ledger::NewTransaction;
use crate::scheduler::{Job, Scheduler};
use crate::state::{Company, Effects};

pub const FILL_DELAY_SECS: i64 = 10;
/// No target price is above this, in whole units of the quote currency.
const MAX_PRICE: i64 = 1_000_000_000_000;

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct TargetRecord {
    pub order: TargetOrder,
    pair: Pair,
    side: Side,
    escrow_tx: Uuid,
    /// The fill's amounts: base units, quote units, fee units (quote).
    fill: (i64, i64, i64),
}

impl crate::book::Record for TargetRecord {
    type Key = Uuid;

    fn key(&self) -> Uuid {
        self.order.id
    }
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct TargetBook {
    pub records: Book<TargetRecord>,
}

impl TargetBook {
    pub fn get(&self, id: Uuid) -> Result<&TargetOrder, ApiError> {
        self.records
            .iter()
            .map(|r| &r.order)
            .find(|o| o.id == id)
            .ok_or_else(|| ApiError::NotFound(format!("no target order {id}")))
    }

    fn index(&self, id: Uuid) -> Option<usize> {
        self.records.iter().position(|r| r.order.id == id)
    }
}

fn crossed(side: Side, market: Decimal, target: Decimal) -> bool {
    match side {
        Side::Buy => market <= target,
        Side::Sell => market >= target,
    }
}

/// Takes the escrow and records the order; it may trigger at once.
pub fn create(
    company: &mut Company,
    req: &NewTargetOrder,
    fx: &mut Effects<'_>,
) -> Result<TargetOrder, ApiError> {
    let pair = Pair::parse(&req.base_currency, &req.quote_currency)?;
    if pair.is_ngn() {
        return Err(ApiError::field(
            "base_currency",
            "NGN pairs trade through quotes and orders only",
        ));
    }
    let side = Side::parse(&req.side)?;
    let quantity = pair.check_quantity(req.quantity)?;
    if req.target_price <= Decimal::ZERO {
        return Err(ApiError::field("target_price", "must be greater than zero"));
    }
    if req.target_price > Decimal::from(MAX_PRICE) {
        return Err(ApiError::field("target_price", "is too large"));
    }
    let target = req.target_price.normalize();
    let expires_at = match req.expires_at.trim() {
        "" => None,
        text => {
            let at = DateTime::parse_from_rfc3339(text)
                .map_err(|_| {
                    ApiError::field("expires_at", "must be an RFC 3339 time, or empty for no expiry")
                })?
                .with_timezone(&Utc);
            if at <= fx.now {
                return Err(ApiError::field("expires_at", "must be in the future"));
            }
            Some(at)
        }
    };
    let (base_units, notional) = pair.amounts(quantity, target, side)?;
    let fee = notional
        .checked_mul(5)
        .and_then(|n| n.checked_add(999))
        .map(|n| n / 1000)
        .ok_or_else(|| ApiError::field("quantity", "is too large"))?;
    let locked = notional
        .checked_add(fee)
        .ok_or_else(|| ApiError::field("quantity", "is too large"))?;
    let (locked_currency, locked_units, locked_dp) = match side {
        Side::Buy => (pair.quote.clone(), locked, pair.quote_dp),
        Side::Sell => (pair.base.clone(), base_units, pair.base_dp),
    };
    let id = Uuid::new_v4();
    let escrow_tx = company
        .ledger
        .post(
            NewTransaction {
                currency: locked_currency.clone(),
                kind: TransactionType::SwapInternal,
                state: TransactionState::Pending,
                amount: BaseUnits(-locked_units),
                fee: BaseUnits::ZERO,
                reference: format!("TARGET_{}_ESCROW", id.simple()),
                idempotency_key: req.reference.clone(),
                metadata: json!({"channel": "trading", "target_order_id": id, "purpose": "escrow"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            },
            fx.now,
        )?
        .transaction_id;
    let locked = Pair::whole(locked_units, locked_dp);
    let order = TargetOrder {
        id,
        company_id: company.id,
        base_currency: pair.base.code().to_owned(),
        quote_currency: pair.quote.code().to_owned(),
        side: side.as_str().to_owned(),
        quantity,
        filled_quantity: Decimal::ZERO,
        remaining_quantity: quantity,
        target_price: target,
        average_fill_price: String::new(),
        locked_amount: locked,
        remaining_locked: locked,
        locked_currency: locked_currency.code().to_owned(),
        status: "active".to_owned(),
        expires_at: expires_at.map(|t| t.to_rfc3339()).unwrap_or_default(),
        first_triggered_at: String::new(),
        last_fill_at: String::new(),
        fully_filled_at: String::new(),
        created_at: fx.now,
        updated_at: fx.now,
        reference: req.reference.clone(),
    };
    company.targets.records.push(TargetRecord {
        order,
        pair,
        side,
        escrow_tx,
        fill: (base_units, notional, fee),
    });
    if let Some(at) = expires_at {
        fx.scheduler.schedule(
            at,
            Job::ExpireTargetOrder {
                company_id: company.id,
                order_id: id,
            },
        );
    }
    check_triggers(company, fx.market, fx.scheduler, fx.now);
    Ok(company.targets.get(id)?.clone())
}

/// Triggers every active order of the company the market has crossed.
pub fn check_triggers(company: &mut Company, market: &Market, scheduler: &mut Scheduler, now: DateTime<Utc>) {
    for index in 0..company.targets.records.len() {
        let r = &company.targets.records[index];
        if r.order.status != "active" {
            continue;
        }
        let Some(price) = market.mid(r.pair.base.code(), r.pair.quote.code()) else {
            continue;
        };
        if crossed(r.side, price, r.order.target_price) {
            let r = &mut company.targets.records[index];
            r.order.status = "triggered".to_owned();
            r.order.first_triggered_at = now.to_rfc3339();
            r.order.updated_at = now;
            scheduler.schedule(
                now + Duration::seconds(FILL_DELAY_SECS),
                Job::FillTargetOrder {
                    company_id: company.id,
                    order_id: r.order.id,
                },
            );
        }
    }
}

fn release(company: &mut Company, index: usize, now: DateTime<Utc>) -> Result<(), ApiError> {
    let tx = company.targets.records[index].escrow_tx;
    company
        .ledger
        .transition(tx, TransactionType::SwapInternal, TransactionState::Reversed, now)?;
    Ok(())
}

/// A triggered order fills in full at its target price.
pub fn fill(company: &mut Company, id: Uuid, now: DateTime<Utc>) {
    let Some(index) = company.targets.index(id) else {
        return;
    };
    if company.targets.records[index].order.status != "triggered" {
        return;
    }
    let r = company.targets.records[index].clone();
    let (base_units, quote_units, fee) = r.fill;
    let moved = release(company, index, now).and_then(|()| {
        let leg =
            |currency: &paydesk_api::units::Currency, amount: i64, fee: i64, dir: &str| NewTransaction {
                currency: currency.clone(),
                kind: TransactionType::SwapInternal,
                state: TransactionState::Settled,
                amount: BaseUnits(amount),
                fee: BaseUnits(fee),
                reference: format!("TARGET_{}_{dir}", id.simple()),
                idempotency_key: String::new(),
                metadata: json!({"channel": "trading", "target_order_id": id})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            };
        match r.side {
            Side::Buy => {
                company
                    .ledger
                    .post_trade(leg(&r.pair.quote, -quote_units, fee, "OUT"), id, now)?;
                company
                    .ledger
                    .post_trade(leg(&r.pair.base, base_units, 0, "IN"), id, now)
            }
            Side::Sell => {
                company
                    .ledger
                    .post_trade(leg(&r.pair.base, -base_units, 0, "OUT"), id, now)?;
                company
                    .ledger
                    .post_trade(leg(&r.pair.quote, quote_units, fee, "IN"), id, now)
            }
        }
    });
    if let Err(e) = moved {
        tracing::error!(error = %e, order = %id, "a target order could not be filled");
        return;
    }
    let o = &mut company.targets.records[index].order;
    o.status = "filled".to_owned();
    o.filled_quantity = o.quantity;
    o.remaining_quantity = Decimal::ZERO;
    o.average_fill_price = o.target_price.to_string();
    o.remaining_locked = Decimal::ZERO;
    o.last_fill_at = now.to_rfc3339();
    o.fully_filled_at = now.to_rfc3339();
    o.updated_at = now;
}

/// The order's time ran out before it triggered.
pub fn expire(company: &mut Company, id: Uuid, now: DateTime<Utc>) {
    let Some(index) = company.targets.index(id) else {
        return;
    };
    if company.targets.records[index].order.status != "active" {
        return;
    }
    if let Err(e) = release(company, index, now) {
        tracing::error!(error = %e, order = %id, "a target order's escrow could not be released");
        return;
    }
    let o = &mut company.targets.records[index].order;
    o.status = "expired".to_owned();
    o.remaining_locked = Decimal::ZERO;
    o.updated_at = now;
}

/// `DELETE /api/trading/target-orders/{id}`: only an active order.
pub fn cancel(company: &mut Company, id: Uuid, now: DateTime<Utc>) -> Result<TargetOrder, ApiError> {
    let index = company
        .targets
        .index(id)
        .ok_or_else(|| ApiError::NotFound(format!("no target order {id}")))?;
    let status = company.targets.records[index].order.status.clone();
    if status != "active" {
        return Err(ApiError::unprocessable(
            codes::INVALID_STATE,
            format!("the order is {status}; only an active order can be cancelled"),
        ));
    }
    release(company, index, now)?;
    let o = &mut company.targets.records[index].order;
    o.status = "cancelled".to_owned();
    o.remaining_locked = Decimal::ZERO;
    o.updated_at = now;
    Ok(company.targets.records[index].order.clone())
}
