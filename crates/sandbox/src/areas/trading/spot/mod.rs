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

pub mod book;
mod lifecycle;
mod orders;
pub mod pair;
mod quotes;
mod resting;
mod settle;
#[cfg(test)]
mod tests;

pub use book::{TradeBook, QUOTE_RETENTION_SECS};
pub use lifecycle::{transition, OrderEvent, Refusal};
pub use orders::place_order;
pub use pair::{Pair, Side, PAIRS};
pub use quotes::{create_quote, QUOTE_VALIDITY_SECS};
pub use resting::{cancel_order, fill_resting};
pub use settle::settle_trade;

/// The venue an order names in `exchange` (NGN pairs name none: they
/// settle from the service's own liquidity).
pub const VENUE: &str = "sandbox";
