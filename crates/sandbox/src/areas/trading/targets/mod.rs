//! Target orders (spec "Trading" rule 6; sandbox-rules.md): escrow locked
//! at creation as a held (PENDING) SWAP_INTERNAL debit; triggered when the
//! market price (no spread) crosses `target_price` — at creation or at a
//! price change — and filled 10 s later at the target price with a fee of
//! 0.5% of the notional; expired or cancelled while active. Whatever ends
//! the order releases the hold (the escrow transaction becomes REVERSED),
//! and a fill then moves exactly the fill's amounts, so the escrow is
//! released exactly.
//!
//! Liquidity (`PUT /sandbox/prices {…, liquidity}`, base units per 10 s
//! at the price): a triggered order fills in slices of at most that much,
//! one each 10 s while the price stays at or beyond its target (the first
//! slice, 10 s after the trigger, always fills); it is `triggered` until
//! the last slice, then `filled`. Each slice releases the hold, moves the
//! slice's amounts and holds the rest again, so the running totals stay
//! exact (the amounts of the first k base units are computed as a whole,
//! and each slice moves the difference).
//!
//! Decisions where the documents are silent: NGN pairs are refused (they
//! trade through quotes only); a triggered order can't be cancelled (its
//! fill is under way); amounts in the record are whole units; liquidity
//! applies to each order on its own; a partly filled order whose expiry
//! comes expires, keeping what filled; when the price moves away between
//! slices, the next slice waits until a price change brings it back.

pub mod book;
mod lifecycle;

use chrono::{DateTime, Duration, Utc};
use paydesk_api::models::trading::TargetOrderStatus;
use paydesk_api::models::trading::{NewTargetOrder, TargetOrder};
use paydesk_api::models::transactions::{TransactionState, TransactionType};
use paydesk_api::time::wire;
use paydesk_api::units::BaseUnits;
use paydesk_api::wire::codes;
use rust_decimal::Decimal;
use serde_json::json;
use uuid::Uuid;

use super::spot::{Pair, Side};
use crate::areas::market::prices::Market;
use crate::error::ApiError;
use crate::ledger::NewTransaction;
use crate::scheduler::{Job, Scheduler};
use crate::state::{Company, Effects};
use book::TargetRecord;
use lifecycle::{transition, TargetEvent};

pub const FILL_DELAY_SECS: i64 = 10;
/// No target price is above this, in whole units of the quote currency.
const MAX_PRICE: i64 = 1_000_000_000_000;

impl TargetRecord {
    /// Quote and fee units of the first `base` units filled.
    fn amounts_of(&self, base: i64) -> Result<(i64, i64), ApiError> {
        let (total_base, total_quote, total_fee) = self.fill;
        if base == total_base {
            return Ok((total_quote, total_fee));
        }
        let quantity = Pair::whole(base, self.pair.base_dp);
        let (_, quote) = self.pair.amounts(quantity, self.order.target_price, self.side)?;
        Ok((quote, fee_of(quote)?))
    }

    /// What the hold keeps after `filled` base units: quote units for a
    /// buy, base units for a sell.
    fn held_after(&self, filled: i64) -> Result<i64, ApiError> {
        let (total_base, total_quote, total_fee) = self.fill;
        Ok(match self.side {
            Side::Buy => {
                let (quote, fee) = self.amounts_of(filled)?;
                total_quote + total_fee - quote - fee
            }
            Side::Sell => total_base - filled,
        })
    }
}

/// The fee on a notional: 0.5%, rounded up.
fn fee_of(notional: i64) -> Result<i64, ApiError> {
    notional
        .checked_mul(5)
        .and_then(|n| n.checked_add(999))
        .map(|n| n / 1000)
        .ok_or_else(|| ApiError::field("quantity", "is too large"))
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
    let fee = fee_of(notional)?;
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
        status: TargetOrderStatus::Active,
        expires_at: expires_at.map(wire).unwrap_or_default(),
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
        filled_base: 0,
        slices: 0,
        waiting_for_price: false,
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

/// Triggers every active order of the company the market has crossed,
/// and schedules the next slice of part-filled orders the price came back
/// to.
pub fn check_triggers(company: &mut Company, market: &Market, scheduler: &mut Scheduler, now: DateTime<Utc>) {
    for index in 0..company.targets.records.len() {
        let r = &company.targets.records[index];
        let waiting = r.order.status == TargetOrderStatus::Triggered && r.waiting_for_price;
        let trigger = transition(&r.order.status, TargetEvent::Trigger).ok();
        if trigger.is_none() && !waiting {
            continue;
        }
        let Some(price) = market.mid(r.pair.base.code(), r.pair.quote.code()) else {
            continue;
        };
        if crossed(r.side, price, r.order.target_price) {
            let r = &mut company.targets.records[index];
            match trigger {
                Some(triggered) => {
                    r.order.status = triggered;
                    r.order.first_triggered_at = wire(now);
                    r.order.updated_at = now;
                }
                None => r.waiting_for_price = false,
            }
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

/// A triggered order fills a slice at its target price: all that remains,
/// or at most the pair's liquidity; the next slice is due 10 s later.
pub fn fill(company: &mut Company, id: Uuid, fx: &mut Effects<'_>) {
    let now = fx.now;
    let Some(index) = company.targets.index(id) else {
        return;
    };
    let r = company.targets.records[index].clone();
    // Only a triggered order fills; its last slice makes it filled.
    let Ok(filled_status) = transition(&r.order.status, TargetEvent::Fill) else {
        return;
    };
    let (base, quote) = (r.pair.base.code(), r.pair.quote.code());
    let at_target = fx
        .market
        .mid(base, quote)
        .is_some_and(|price| crossed(r.side, price, r.order.target_price));
    if r.slices > 0 && !at_target {
        company.targets.records[index].waiting_for_price = true;
        return;
    }
    let total_base = r.fill.0;
    let remaining = total_base - r.filled_base;
    let slice = fx
        .market
        .liquidity(base, quote)
        .map_or(remaining, |l| l.min(remaining));
    let filled = r.filled_base + slice;
    let slice_no = r.slices + 1;
    let suffix = if slice_no == 1 {
        String::new()
    } else {
        format!("_{slice_no}")
    };
    let moved = (|| -> Result<Option<Uuid>, ApiError> {
        let (quote_before, fee_before) = r.amounts_of(r.filled_base)?;
        let (quote_after, fee_after) = r.amounts_of(filled)?;
        let (quote_units, fee) = (quote_after - quote_before, fee_after - fee_before);
        let held = r.held_after(filled)?;
        release(company, index, now)?;
        let leg =
            |currency: &paydesk_api::units::Currency, amount: i64, fee: i64, dir: &str| NewTransaction {
                currency: currency.clone(),
                kind: TransactionType::SwapInternal,
                state: TransactionState::Settled,
                amount: BaseUnits(amount),
                fee: BaseUnits(fee),
                reference: format!("TARGET_{}_{dir}{suffix}", id.simple()),
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
                    .post_trade(leg(&r.pair.base, slice, 0, "IN"), id, now)?;
            }
            Side::Sell => {
                company
                    .ledger
                    .post_trade(leg(&r.pair.base, -slice, 0, "OUT"), id, now)?;
                company
                    .ledger
                    .post_trade(leg(&r.pair.quote, quote_units, fee, "IN"), id, now)?;
            }
        }
        if filled == total_base {
            return Ok(None);
        }
        // The rest stays held for the next slices.
        let held_currency = match r.side {
            Side::Buy => r.pair.quote.clone(),
            Side::Sell => r.pair.base.clone(),
        };
        let hold = company.ledger.post(
            NewTransaction {
                currency: held_currency,
                kind: TransactionType::SwapInternal,
                state: TransactionState::Pending,
                amount: BaseUnits(-held),
                fee: BaseUnits::ZERO,
                reference: format!("TARGET_{}_ESCROW_{}", id.simple(), slice_no + 1),
                idempotency_key: r.order.reference.clone(),
                metadata: json!({"channel": "trading", "target_order_id": id, "purpose": "escrow"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            },
            now,
        )?;
        Ok(Some(hold.transaction_id))
    })();
    let next_hold = match moved {
        Ok(next_hold) => next_hold,
        Err(e) => {
            tracing::error!(error = %e, order = %id, "a target order could not be filled");
            return;
        }
    };
    let held = r.held_after(filled).unwrap_or_default();
    let locked_dp = match r.side {
        Side::Buy => r.pair.quote_dp,
        Side::Sell => r.pair.base_dp,
    };
    let record = &mut company.targets.records[index];
    record.filled_base = filled;
    record.slices = slice_no;
    let o = &mut record.order;
    o.filled_quantity = Pair::whole(filled, r.pair.base_dp);
    o.remaining_quantity = o.quantity - o.filled_quantity;
    o.average_fill_price = o.target_price.to_string();
    o.last_fill_at = wire(now);
    o.updated_at = now;
    match next_hold {
        None => {
            o.status = filled_status;
            o.remaining_locked = Decimal::ZERO;
            o.fully_filled_at = wire(now);
        }
        Some(hold) => {
            o.remaining_locked = Pair::whole(held, locked_dp);
            record.escrow_tx = hold;
            fx.scheduler.schedule(
                now + Duration::seconds(FILL_DELAY_SECS),
                Job::FillTargetOrder {
                    company_id: company.id,
                    order_id: id,
                },
            );
        }
    }
}

/// The order's time ran out before it triggered (or, part filled, before
/// its last slice: what filled stays).
pub fn expire(company: &mut Company, id: Uuid, now: DateTime<Utc>) {
    let Some(index) = company.targets.index(id) else {
        return;
    };
    let r = &company.targets.records[index];
    let event = TargetEvent::Expire {
        part_filled: r.slices > 0,
    };
    let Ok(expired) = transition(&r.order.status, event) else {
        return;
    };
    if let Err(e) = release(company, index, now) {
        tracing::error!(error = %e, order = %id, "a target order's escrow could not be released");
        return;
    }
    let o = &mut company.targets.records[index].order;
    o.status = expired;
    o.remaining_locked = Decimal::ZERO;
    o.updated_at = now;
}

/// `DELETE /api/trading/target-orders/{id}`: only an active order.
pub fn cancel(company: &mut Company, id: Uuid, now: DateTime<Utc>) -> Result<TargetOrder, ApiError> {
    let index = company
        .targets
        .index(id)
        .ok_or_else(|| ApiError::NotFound(format!("no target order {id}")))?;
    let cancelled =
        transition(&company.targets.records[index].order.status, TargetEvent::Cancel).map_err(|refusal| {
            ApiError::unprocessable(
                codes::INVALID_STATE,
                format!(
                    "the order is {}; only an active order can be cancelled",
                    refusal.from
                ),
            )
        })?;
    release(company, index, now)?;
    let o = &mut company.targets.records[index].order;
    o.status = cancelled;
    o.remaining_locked = Decimal::ZERO;
    o.updated_at = now;
    Ok(company.targets.records[index].order.clone())
}
