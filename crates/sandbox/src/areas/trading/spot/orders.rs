//! Placing an order on a quote: it fills at once at the quoted price, or
//! a limit order not marketable against it rests.

use chrono::{DateTime, Utc};
use paydesk_api::models::trading::{Fill, Order, OrderRequest, OrderStatus, QuoteConsumption};
use paydesk_api::wire::codes;
use rust_decimal::Decimal;
use uuid::Uuid;

use super::book::Resting;
use super::pair::{Pair, Side};
use super::settle::{hold, settle_trade};
use super::VENUE;
use crate::error::ApiError;
use crate::state::Company;

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
