//! The pairs that trade, the sides of a trade, and how a quantity and a
//! price become the units each side moves.

use paydesk_api::models::trading::Exchange;
use paydesk_api::units::Currency;
use rust_decimal::{Decimal, RoundingStrategy};

use crate::areas::market::prices::{spread, Market};
use crate::error::ApiError;

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
