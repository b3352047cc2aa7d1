//! The company's spot book: its quotes, its orders and the limit orders
//! resting until the market reaches them.

use std::collections::HashMap;

use chrono::{DateTime, Duration, Utc};
use paydesk_api::models::trading::{Order, Quote};
use rust_decimal::Decimal;
use uuid::Uuid;

use super::pair::{Pair, Side};
use crate::book::{Book, Record};
use crate::error::ApiError;
use crate::pagination::Sequenced;

/// Quotes stay readable this long after they expire, then are forgotten.
pub const QUOTE_RETENTION_SECS: i64 = 3_600;
/// How many quotes are made between two sweeps of old ones.
pub(super) const SWEEP_EVERY: u32 = 1_024;

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct QuoteRecord {
    pub(super) quote: Quote,
    pub(super) pair: Pair,
    pub(super) side: Side,
    pub(super) orders: u32,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct OrderRecord {
    seq: u64,
    pub order: Order,
}

impl Record for QuoteRecord {
    type Key = Uuid;

    fn key(&self) -> Uuid {
        self.quote.id
    }
}

impl Record for OrderRecord {
    type Key = Uuid;

    fn key(&self) -> Uuid {
        self.order.id
    }
}

impl Sequenced for OrderRecord {
    fn seq(&self) -> u64 {
        self.seq
    }
}

/// What a resting order needs to fill or be cancelled.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Resting {
    pub order_id: Uuid,
    pub(super) pair: Pair,
    pub(super) side: Side,
    /// Base and quote units moved by the fill at the order's price.
    pub(super) base_units: i64,
    pub(super) quote_units: i64,
    pub(super) hold_tx: Uuid,
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct TradeBook {
    pub(crate) quotes: Book<QuoteRecord>,
    pub(crate) orders: Book<OrderRecord>,
    /// Quotes made since the last sweep of old ones (not kept: it changes
    /// with every quote, and a restart merely sweeps a little later).
    #[serde(skip)]
    since_sweep: u32,
    /// Limit orders resting until the market reaches their price.
    #[serde(default)]
    pub(super) resting: Vec<Resting>,
}

impl TradeBook {
    pub fn orders(&self) -> &[OrderRecord] {
        &self.orders
    }

    pub fn order(&self, id: Uuid) -> Result<&Order, ApiError> {
        self.orders
            .by_key(&id)
            .map(|r| &r.order)
            .ok_or_else(|| ApiError::NotFound(format!("no order {id}")))
    }

    pub(super) fn order_mut(&mut self, id: Uuid) -> Option<&mut Order> {
        self.orders.by_key_mut(&id).map(|r| &mut r.order)
    }

    pub fn record_order(&mut self, order: Order) {
        let seq = self.orders.last().map_or(1, |r| r.seq + 1);
        self.orders.push(OrderRecord { seq, order });
    }

    /// Forgets quotes that expired more than `QUOTE_RETENTION_SECS` ago,
    /// now and then, so memory doesn't grow with every quote ever made.
    pub(super) fn sweep(&mut self, now: DateTime<Utc>) {
        self.since_sweep += 1;
        if self.since_sweep < SWEEP_EVERY {
            return;
        }
        self.since_sweep = 0;
        let cutoff = now - Duration::seconds(QUOTE_RETENTION_SECS);
        self.quotes.retain(|r| r.quote.expires_at > cutoff);
    }

    /// A quote still remembered at `now`: one that expired more than
    /// `QUOTE_RETENTION_SECS` ago is forgotten on the spot, whether or not
    /// the sweep has removed it from memory yet.
    pub(super) fn remembered(&self, id: Uuid, now: DateTime<Utc>) -> Option<&QuoteRecord> {
        self.quotes
            .by_key(&id)
            .filter(|r| now < r.quote.expires_at + Duration::seconds(QUOTE_RETENTION_SECS))
    }

    /// Rebuilds each quote's consumption from the orders placed on it,
    /// after the records were read back: the data directory writes a
    /// quote once, when it is made, and each order after it.
    pub fn reindex(&mut self) {
        let mut placed: HashMap<Uuid, (Decimal, u32)> = HashMap::new();
        for r in self.orders.iter() {
            if self.quotes.position_of(&r.order.quote_id).is_some() {
                let (quantity, orders) = placed.entry(r.order.quote_id).or_default();
                *quantity += r.order.quantity;
                *orders += 1;
            }
        }
        for i in 0..self.quotes.len() {
            let record = self.quotes.derived_mut(i).expect("within the book");
            let (consumed, orders) = placed.get(&record.quote.id).copied().unwrap_or_default();
            record.orders = orders;
            let q = &mut record.quote;
            q.consumed_quantity = consumed.normalize();
            q.remaining_quantity = (q.original_quantity - q.consumed_quantity).normalize();
            q.is_exhausted = q.remaining_quantity.is_zero();
        }
    }

    /// A quote as it stands now (expiry read on the clock).
    pub fn quote(&self, id: Uuid, now: DateTime<Utc>) -> Result<Quote, ApiError> {
        let r = self
            .remembered(id, now)
            .ok_or_else(|| ApiError::NotFound(format!("no quote {id}")))?;
        let mut q = r.quote.clone();
        q.is_expired = now >= q.expires_at;
        q.orders_count = r.orders;
        Ok(q)
    }
}
