//! Spot trading as plain functions: quotes valid 30 s at the market price
//! plus or minus the spread, consumed by orders that fill at once at the
//! quoted price (spec "Trading", rules 1-3; sandbox-rules.md).
//!
//! Money: a buy receives exactly the quantity and pays the quote amount
//! rounded up to the quote currency's smallest unit; a sell pays exactly
//! the quantity and receives the amount rounded down. Each side is one
//! SWAP_INTERNAL transaction with the order as `trade_id`, so every unit
//! that moves is on an order.
//!
//! Resting orders (sandbox-rules.md): an order with `order_type: "limit"`
//! whose `price` is not marketable against its quote (a buy below the
//! quoted price, a sell above it) rests `pending` with its funds held (a
//! PENDING SWAP_INTERNAL debit whose metadata names `hold_id`, `hold_type`
//! and `order_id`), and fills whole at its own price when `PUT
//! /sandbox/prices` moves the market (no spread) to it or beyond; DELETE
//! cancels it and releases the hold.
//!
//! Decisions where the documents are silent: an order must name a quote
//! and match its pair and side; a `price` in a market order (or one
//! without `order_type`) changes nothing: the order stays `market` and
//! fills at the quote's price; a resting order consumes its quote like any order; NGN pairs
//! can't rest (400); a buy holds quantity × price rounded up, a sell the
//! quantity; a filled or cancelled order can't be cancelled (422); a quote stays readable for an
//! hour after it expires, then is forgotten (404); quoted prices keep 15
//! significant digits; a trade is at most 10^12 units of its base.

use std::collections::HashMap;

use chrono::{DateTime, Duration, Utc};
use paydesk_api::models::trading::OrderStatus;
use paydesk_api::models::trading::{
    Exchange, Fill, Order, OrderRequest, Quote, QuoteConsumption, QuoteRequest,
};
use paydesk_api::models::transactions::{TransactionState, TransactionType};
use paydesk_api::units::{BaseUnits, Currency};
use paydesk_api::wire::codes;
use rust_decimal::{Decimal, RoundingStrategy};
use serde_json::json;
use uuid::Uuid;

use crate::areas::market::{spread, Market};
use crate::book::{Book, Record};
use crate::error::ApiError;
use crate::ledger::NewTransaction;
use crate::pagination::Sequenced;
use crate::state::{Company, Effects};

pub const QUOTE_VALIDITY_SECS: i64 = 30;
/// Quotes stay readable this long after they expire, then are forgotten.
pub const QUOTE_RETENTION_SECS: i64 = 3_600;
/// How many quotes are made between two sweeps of old ones.
const SWEEP_EVERY: u32 = 1_024;
pub const NGN_MIN: i64 = 500;
pub const NGN_MAX: i64 = 10_000_000;
/// Quoted prices keep this many significant digits.
const PRICE_DIGITS: u32 = 15;
/// No trade is larger than this many whole units of its base.
const MAX_QUANTITY: i64 = 1_000_000_000_000;

/// The pairs that trade: base and quote.
pub const PAIRS: &[(&str, &str)] = &[
    ("BTC", "USDT"),
    ("BTC", "USDC"),
    ("USDT", "USDC"),
    ("NGN", "USDT"),
    ("NGN", "USDC"),
    ("NGN", "BTC"),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Side {
    Buy,
    Sell,
}

impl Side {
    pub fn parse(raw: &str) -> Result<Self, ApiError> {
        match raw.trim().to_ascii_lowercase().as_str() {
            "buy" => Ok(Side::Buy),
            "sell" => Ok(Side::Sell),
            _ => Err(ApiError::field("side", "must be buy or sell")),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Side::Buy => "BUY",
            Side::Sell => "SELL",
        }
    }
}

/// A tradable pair and its currencies' decimals.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Pair {
    pub base: Currency,
    pub quote: Currency,
    pub base_dp: u32,
    pub quote_dp: u32,
}

impl Pair {
    pub fn parse(base: &str, quote: &str) -> Result<Self, ApiError> {
        let base = Currency::parse(base).map_err(|e| ApiError::field("base_currency", e.to_string()))?;
        let quote = Currency::parse(quote).map_err(|e| ApiError::field("quote_currency", e.to_string()))?;
        if !PAIRS.iter().any(|(b, q)| *b == base.code() && *q == quote.code()) {
            let known: Vec<String> = PAIRS.iter().map(|(b, q)| format!("{b}/{q}")).collect();
            return Err(ApiError::field(
                "quote_currency",
                format!("{base}/{quote} does not trade; pairs: {}", known.join(", ")),
            ));
        }
        Ok(Pair {
            base_dp: base.decimals().unwrap_or(2),
            quote_dp: quote.decimals().unwrap_or(2),
            base,
            quote,
        })
    }

    /// NGN pairs: major units, market orders from the service's liquidity.
    pub fn is_ngn(&self) -> bool {
        self.base.code() == Currency::NGN
    }

    /// Quote currency per unit of base, spread included.
    pub fn price(&self, market: &Market, side: Side) -> Result<Decimal, ApiError> {
        let mid = market
            .mid(self.base.code(), self.quote.code())
            .ok_or_else(|| ApiError::invalid(format!("no market price for {}/{}", self.base, self.quote)))?;
        let factor = match side {
            Side::Buy => Decimal::ONE + spread(),
            Side::Sell => Decimal::ONE - spread(),
        };
        let price = mid
            .checked_mul(factor)
            .ok_or_else(|| ApiError::invalid("the market price is out of range"))?;
        Ok(price.round_sf(PRICE_DIGITS).unwrap_or(price).normalize())
    }

    /// Checks a quantity of base in whole units (NGN: whole naira within
    /// the NGN limits).
    pub fn check_quantity(&self, quantity: Decimal) -> Result<Decimal, ApiError> {
        if quantity <= Decimal::ZERO {
            return Err(ApiError::field("quantity", "must be greater than zero"));
        }
        if quantity > Decimal::from(MAX_QUANTITY) {
            return Err(ApiError::field("quantity", "is too large"));
        }
        if self.is_ngn() {
            if quantity.normalize().scale() > 0 {
                return Err(ApiError::field("quantity", "NGN quantities are whole naira"));
            }
            if quantity < Decimal::from(NGN_MIN) || quantity > Decimal::from(NGN_MAX) {
                return Err(ApiError::field(
                    "quantity",
                    format!("NGN trades are {NGN_MIN} to {NGN_MAX} naira"),
                ));
            }
        } else if quantity.normalize().scale() > self.base_dp {
            return Err(ApiError::field(
                "quantity",
                format!("{} has at most {} decimals", self.base, self.base_dp),
            ));
        }
        Ok(quantity.normalize())
    }

    pub fn units(value: Decimal, dp: u32, strategy: RoundingStrategy) -> Result<i64, ApiError> {
        let too_large = || ApiError::field("quantity", "is too large");
        let scaled = value
            .checked_mul(Decimal::from(10i64.pow(dp)))
            .ok_or_else(too_large)?
            .round_dp_with_strategy(0, strategy);
        i64::try_from(scaled).map_err(|_| too_large())
    }

    /// (base units, quote units) a trade of `quantity` at `price` moves:
    /// the company's side of any rounding is never in its favour.
    pub fn amounts(&self, quantity: Decimal, price: Decimal, side: Side) -> Result<(i64, i64), ApiError> {
        let base = Self::units(quantity, self.base_dp, RoundingStrategy::ToZero)?;
        let strategy = match side {
            Side::Buy => RoundingStrategy::AwayFromZero,
            Side::Sell => RoundingStrategy::ToZero,
        };
        let notional = quantity
            .checked_mul(price)
            .ok_or_else(|| ApiError::field("quantity", "is too large"))?;
        let quote = Self::units(notional, self.quote_dp, strategy)?;
        Ok((base, quote))
    }

    pub fn whole(units: i64, dp: u32) -> Decimal {
        Decimal::new(units, dp).normalize()
    }

    pub fn exchange(&self, side: Side, base_units: i64, quote_units: i64) -> Exchange {
        let base = Self::whole(base_units, self.base_dp);
        let quote = Self::whole(quote_units, self.quote_dp);
        match side {
            Side::Buy => Exchange {
                send_quantity: quote,
                send_currency: self.quote.code().to_owned(),
                receive_quantity: base,
                receive_currency: self.base.code().to_owned(),
            },
            Side::Sell => Exchange {
                send_quantity: base,
                send_currency: self.base.code().to_owned(),
                receive_quantity: quote,
                receive_currency: self.quote.code().to_owned(),
            },
        }
    }
}

/// The venue an order names in `exchange` (NGN pairs name none: they
/// settle from the service's own liquidity).
pub const VENUE: &str = "sandbox";

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct QuoteRecord {
    quote: Quote,
    pair: Pair,
    side: Side,
    orders: u32,
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
    pair: Pair,
    side: Side,
    /// Base and quote units moved by the fill at the order's price.
    base_units: i64,
    quote_units: i64,
    hold_tx: Uuid,
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
    resting: Vec<Resting>,
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

    fn order_mut(&mut self, id: Uuid) -> Option<&mut Order> {
        self.orders.by_key_mut(&id).map(|r| &mut r.order)
    }

    pub fn record_order(&mut self, order: Order) {
        let seq = self.orders.last().map_or(1, |r| r.seq + 1);
        self.orders.push(OrderRecord { seq, order });
    }

    /// Forgets quotes that expired more than `QUOTE_RETENTION_SECS` ago,
    /// now and then, so memory doesn't grow with every quote ever made.
    fn sweep(&mut self, now: DateTime<Utc>) {
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
    fn remembered(&self, id: Uuid, now: DateTime<Utc>) -> Option<&QuoteRecord> {
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

/// Prices a trade and keeps the quote for 30 seconds.
pub fn create_quote(company: &mut Company, req: &QuoteRequest, fx: &Effects<'_>) -> Result<Quote, ApiError> {
    let pair = Pair::parse(&req.base_currency, &req.quote_currency)?;
    let side = Side::parse(&req.side)?;
    let quantity = pair.check_quantity(req.quantity)?;
    let price = pair.price(fx.market, side)?;
    let (base_units, quote_units) = pair.amounts(quantity, price, side)?;
    let quote = Quote {
        id: Uuid::new_v4(),
        base_currency: pair.base.code().to_owned(),
        quote_currency: pair.quote.code().to_owned(),
        side: side.as_str().to_owned(),
        quantity,
        price,
        expires_at: fx.now + Duration::seconds(QUOTE_VALIDITY_SECS),
        created_at: fx.now,
        original_quantity: quantity,
        consumed_quantity: Decimal::ZERO,
        remaining_quantity: quantity,
        is_exhausted: false,
        is_expired: false,
        exchange: pair.exchange(side, base_units, quote_units),
        orders_count: 0,
    };
    company.trades.sweep(fx.now);
    company.trades.quotes.push(QuoteRecord {
        quote: quote.clone(),
        pair,
        side,
        orders: 0,
    });
    Ok(quote)
}

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

/// Places an order against a quote; it fills at once at the quote's price.
pub fn place_order(company: &mut Company, req: &OrderRequest, now: DateTime<Utc>) -> Result<Order, ApiError> {
    let record = company
        .trades
        .remembered(req.quote_id, now)
        .ok_or_else(|| ApiError::NotFound(format!("no quote {}; request one first", req.quote_id)))?
        .clone();
    let pair = Pair::parse(&req.base_currency, &req.quote_currency)?;
    let side = Side::parse(&req.side)?;
    if pair.base != record.pair.base || pair.quote != record.pair.quote || side != record.side {
        return Err(ApiError::field(
            "quote_id",
            format!(
                "the quote is for {} {}/{}; send the same pair and side",
                record.side.as_str(),
                record.pair.base,
                record.pair.quote
            ),
        ));
    }
    let kind = order_type(req)?;
    let rests_at = limit_price(req, &pair, side, record.quote.price)?;
    let in_base_units = req.quantity_in_base_units.unwrap_or(false);
    if in_base_units && pair.is_ngn() {
        return Err(ApiError::field(
            "quantity_in_base_units",
            "is not supported for NGN pairs; send the quantity in naira",
        ));
    }
    let quantity = if in_base_units {
        if req.quantity.normalize().scale() > 0 {
            return Err(ApiError::field(
                "quantity",
                "with quantity_in_base_units the quantity is an integer of base units",
            ));
        }
        Decimal::new(
            i64::try_from(req.quantity).map_err(|_| ApiError::field("quantity", "is too large"))?,
            pair.base_dp,
        )
    } else {
        req.quantity
    };
    let quantity = if pair.is_ngn() {
        pair.check_quantity(quantity)?
    } else if quantity <= Decimal::ZERO || quantity.normalize().scale() > pair.base_dp {
        return Err(ApiError::field(
            "quantity",
            format!(
                "must be a positive amount of {} with at most {} decimals",
                pair.base, pair.base_dp
            ),
        ));
    } else {
        quantity.normalize()
    };
    let quote = &record.quote;
    if now >= quote.expires_at {
        return Err(ApiError::unprocessable(
            codes::QUOTE_EXPIRED,
            "the quote expired (quotes are valid 30 seconds); request a new one",
        ));
    }
    if quote.remaining_quantity.is_zero() {
        return Err(ApiError::unprocessable(
            codes::QUOTE_EXHAUSTED,
            "the quote is used up; request a new one",
        ));
    }
    if quantity > quote.remaining_quantity {
        return Err(ApiError::unprocessable(
            codes::QUOTE_EXHAUSTED,
            format!(
                "only {} {} of the quote remain",
                quote.remaining_quantity, pair.base
            ),
        ));
    }
    let fill_price = rests_at.unwrap_or(quote.price);
    let (base_units, quote_units) = pair.amounts(quantity, fill_price, side)?;
    let id = Uuid::new_v4();
    match rests_at {
        None => settle_trade(company, &pair, side, base_units, quote_units, id, now)?,
        Some(_) => {
            let hold_tx = hold(company, &pair, side, base_units, quote_units, id, now)?;
            company.trades.resting.push(Resting {
                order_id: id,
                pair: pair.clone(),
                side,
                base_units,
                quote_units,
                hold_tx,
            });
        }
    }

    // The quote's consumption is derived from its orders
    // (`TradeBook::reindex`): the order is the row the data directory
    // writes, and the quote's row stays as it was first written.
    let index = company
        .trades
        .quotes
        .position_of(&req.quote_id)
        .expect("found above");
    let record = company.trades.quotes.derived_mut(index).expect("found above");
    record.orders += 1;
    let q = &mut record.quote;
    q.consumed_quantity = (q.consumed_quantity + quantity).normalize();
    q.remaining_quantity = (q.original_quantity - q.consumed_quantity).normalize();
    q.is_exhausted = q.remaining_quantity.is_zero();
    let ngn = pair.is_ngn();
    let order = Order {
        id,
        base_currency: pair.base.code().to_owned(),
        quote_currency: pair.quote.code().to_owned(),
        side: side.as_str().to_owned(),
        order_type: kind.as_str().to_owned(),
        quantity,
        price: fill_price,
        status: if rests_at.is_some() {
            OrderStatus::Pending
        } else {
            OrderStatus::Filled
        },
        exchange: (!ngn).then(|| VENUE.to_owned()),
        created_at: now,
        updated_at: now,
        filled_quantity: if rests_at.is_some() {
            Decimal::ZERO
        } else {
            quantity
        },
        remaining_quantity: if rests_at.is_some() {
            quantity
        } else {
            Decimal::ZERO
        },
        quote_id: q.id,
        fills: if ngn || rests_at.is_some() {
            Vec::new()
        } else {
            vec![Fill {
                id: Uuid::new_v4(),
                order_id: id,
                quantity,
                price: q.price,
                created_at: now,
            }]
        },
        quote_consumption: (!ngn).then_some(QuoteConsumption {
            quote_id: q.id,
            consumed_quantity: q.consumed_quantity,
            remaining_quantity: q.remaining_quantity,
        }),
        reference: req.reference.clone().unwrap_or_default(),
    };
    company.trades.record_order(order.clone());
    Ok(order)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OrderType {
    Market,
    Limit,
}

impl OrderType {
    fn as_str(self) -> &'static str {
        match self {
            OrderType::Market => "market",
            OrderType::Limit => "limit",
        }
    }
}

/// The order's type as it is answered: the one the request names, else
/// `market` (sandbox-rules.md: orders without `order_type` are market
/// orders, and an explicit type is never changed, whatever `price` says).
fn order_type(req: &OrderRequest) -> Result<OrderType, ApiError> {
    match req
        .order_type
        .as_deref()
        .map(|t| t.trim().to_ascii_lowercase())
        .as_deref()
    {
        None | Some("") | Some("market") => Ok(OrderType::Market),
        Some("limit") => Ok(OrderType::Limit),
        Some(other) => Err(ApiError::field(
            "order_type",
            format!("'{other}' is not one of market, limit"),
        )),
    }
}

/// The price a `limit` order rests at: None when it fills at once (a
/// market order, or a limit price marketable against the quote).
fn limit_price(
    req: &OrderRequest,
    pair: &Pair,
    side: Side,
    quoted: Decimal,
) -> Result<Option<Decimal>, ApiError> {
    match order_type(req)? {
        OrderType::Limit => {
            let price = req
                .price
                .filter(|p| *p > Decimal::ZERO)
                .ok_or_else(|| ApiError::field("price", "a limit order needs a positive price"))?;
            let marketable = match side {
                Side::Buy => price >= quoted,
                Side::Sell => price <= quoted,
            };
            if marketable {
                return Ok(None);
            }
            if pair.is_ngn() {
                return Err(ApiError::field(
                    "order_type",
                    "NGN orders fill at once from their quote; they can't rest",
                ));
            }
            Ok(Some(price.normalize()))
        }
        OrderType::Market => Ok(None),
    }
}

/// Holds what a resting order will pay: a PENDING debit of the quote
/// currency (buy) or of the base (sell).
fn hold(
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
            o.status = OrderStatus::Filled;
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
    let Some(index) = company.trades.resting.iter().position(|r| r.order_id == id) else {
        return Err(ApiError::unprocessable(
            codes::INVALID_STATE,
            format!("the order is {status} and can no longer be cancelled"),
        ));
    };
    let r = company.trades.resting.remove(index);
    company.ledger.transition(
        r.hold_tx,
        TransactionType::SwapInternal,
        TransactionState::Reversed,
        now,
    )?;
    let o = company.trades.order_mut(id).expect("a resting order is recorded");
    o.status = OrderStatus::Cancelled;
    o.updated_at = now;
    Ok(o.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_never_favours_the_company() {
        let pair = Pair::parse("BTC", "USDT").unwrap();
        let price = Decimal::new(6030000000001, 8); // 60300.00000001
        let q = Decimal::new(1, 8); // 1 sat
        assert_eq!(pair.amounts(q, price, Side::Buy).unwrap(), (1, 604));
        assert_eq!(pair.amounts(q, price, Side::Sell).unwrap(), (1, 603));
    }

    #[test]
    fn quotes_are_forgotten_an_hour_after_they_expire() {
        let mut book = TradeBook::default();
        let t0 = Utc::now();
        let pair = Pair::parse("BTC", "USDT").unwrap();
        let quote = |id: Uuid, at: DateTime<Utc>| QuoteRecord {
            quote: Quote {
                id,
                base_currency: "BTC".into(),
                quote_currency: "USDT".into(),
                side: "BUY".into(),
                quantity: Decimal::ONE,
                price: Decimal::ONE,
                expires_at: at,
                created_at: at,
                original_quantity: Decimal::ONE,
                consumed_quantity: Decimal::ZERO,
                remaining_quantity: Decimal::ONE,
                is_exhausted: false,
                is_expired: false,
                exchange: pair.exchange(Side::Buy, 1, 1),
                orders_count: 0,
            },
            pair: pair.clone(),
            side: Side::Buy,
            orders: 0,
        };
        let (old, recent) = (Uuid::new_v4(), Uuid::new_v4());
        book.quotes
            .push(quote(old, t0 - Duration::seconds(QUOTE_RETENTION_SECS + 1)));
        book.quotes.push(quote(recent, t0 - Duration::seconds(60)));
        // Forgotten at once, before any sweep runs; the sweep only frees memory.
        assert!(book.quote(old, t0).is_err());
        assert!(book.quote(recent, t0).is_ok());
        for _ in 0..SWEEP_EVERY {
            book.sweep(t0);
        }
        assert!(book.quotes.by_key(&old).is_none());
        assert!(book.quote(old, t0).is_err());
        assert!(book.quote(recent, t0).unwrap().is_expired);
    }

    #[test]
    fn ngn_quantities_are_whole_naira_within_limits() {
        let pair = Pair::parse("NGN", "USDT").unwrap();
        assert!(pair.check_quantity(Decimal::from(499)).is_err());
        assert!(pair.check_quantity(Decimal::from(500)).is_ok());
        assert!(pair.check_quantity(Decimal::from(10_000_000)).is_ok());
        assert!(pair.check_quantity(Decimal::from(10_000_001)).is_err());
        assert!(pair.check_quantity(Decimal::new(5005, 1)).is_err());
        assert!(Pair::parse("USDT", "BTC").is_err());
    }
}
