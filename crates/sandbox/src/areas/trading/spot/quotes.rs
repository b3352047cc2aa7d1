//! Quotes: a price for a pair and side, valid 30 seconds.

use chrono::Duration;
use paydesk_api::models::trading::{Quote, QuoteRequest};
use rust_decimal::Decimal;
use uuid::Uuid;

use super::book::QuoteRecord;
use super::pair::{Pair, Side};
use crate::error::ApiError;
use crate::state::{Company, Effects};

pub const QUOTE_VALIDITY_SECS: i64 = 30;

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
