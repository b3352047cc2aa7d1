//! Exchange rates (open-paths.md; sandbox-rules.md, "Trading and
//! Lightning"): a pair's buy, sell, mid and inverse rates from the market
//! prices, and conversions at the mid rate.
//!
//! Decisions where the documents are silent: rates keep 15 significant
//! digits; a rate is valid 30 seconds (like a trading quote); a
//! converted amount is rounded down to the target currency's decimals (2
//! for fiat the ledger does not hold); an unknown pair is a 400 naming `to`.

use actix_web::http::StatusCode;
use actix_web::web::Data;
use chrono::{DateTime, Duration, Utc};
use paydesk_api::models::rates::{Conversion, ExchangeRate};
use paydesk_api::units::Currency;
use rust_decimal::{Decimal, RoundingStrategy};

use super::market::prices::{spread, Market};
use crate::error::ApiError;
use crate::respond::{envelope, Caller, JsonAnswer, QueryParams};
use crate::state::Shared;

const VALID_FOR_SECS: u32 = 30;
/// Rates keep this many significant digits.
const RATE_DIGITS: u32 = 15;

fn currency(q: &QueryParams, key: &str) -> Result<String, ApiError> {
    let code = q
        .get(key)
        .ok_or_else(|| ApiError::field(key, "is required, e.g. USDT"))?;
    Currency::parse(code)
        .map(|c| c.code().to_owned())
        .map_err(|e| ApiError::field(key, e.to_string()))
}

fn mid(market: &Market, from: &str, to: &str) -> Result<Decimal, ApiError> {
    if from == to {
        return Err(ApiError::field("to", "must differ from `from`"));
    }
    market.mid(from, to).ok_or_else(|| {
        ApiError::field(
            "to",
            format!("there is no market between {from} and {to}; see GET /api/trading/prices"),
        )
    })
}

fn rounded(d: Decimal) -> Decimal {
    d.round_sf(RATE_DIGITS).unwrap_or(d).normalize()
}

/// A pair's rates now.
pub fn rate(market: &Market, from: &str, to: &str, now: DateTime<Utc>) -> Result<ExchangeRate, ApiError> {
    let mid = rounded(mid(market, from, to)?);
    let day_ago = market.mid_at(from, to, now - Duration::hours(24)).unwrap_or(mid);
    let change = if day_ago.is_zero() {
        Decimal::ZERO
    } else {
        ((mid - day_ago) / day_ago * Decimal::ONE_HUNDRED)
            .round_dp(4)
            .normalize()
    };
    Ok(ExchangeRate {
        base_currency: from.to_owned(),
        target_currency: to.to_owned(),
        buy_rate: rounded(mid * (Decimal::ONE + spread())),
        sell_rate: rounded(mid * (Decimal::ONE - spread())),
        mid_rate: mid,
        inverse_rate: rounded(Decimal::ONE / mid),
        valid_for_seconds: VALID_FOR_SECS,
        percent_change_24h: change,
        timestamp: now,
    })
}

/// `GET /api/exchange-rates?from=X&to=Y`.
pub async fn get(shared: Data<Shared>, caller: Caller, q: QueryParams) -> Result<JsonAnswer, ApiError> {
    let (from, to) = (currency(&q, "from")?, currency(&q, "to")?);
    let now = shared.clock.now();
    let data = rate(&shared.store().market, &from, &to, now)?;
    Ok(envelope(
        StatusCode::OK,
        "Exchange rate",
        data,
        &caller.request_id,
        now,
    ))
}

/// `GET /api/exchange-rates/convert?from=X&to=Y&amount=N`.
pub async fn convert(shared: Data<Shared>, caller: Caller, q: QueryParams) -> Result<JsonAnswer, ApiError> {
    let (from, to) = (currency(&q, "from")?, currency(&q, "to")?);
    let amount: Decimal = q
        .get("amount")
        .ok_or_else(|| ApiError::field("amount", "is required: an amount of `from` in whole units"))?
        .parse()
        .map_err(|_| ApiError::field("amount", "must be a decimal number, e.g. 100 or 0.5"))?;
    if amount <= Decimal::ZERO {
        return Err(ApiError::field("amount", "must be greater than zero"));
    }
    let from_dp = Currency::parse(&from)
        .ok()
        .and_then(|c| c.decimals())
        .unwrap_or(2);
    if amount.normalize().scale() > from_dp {
        return Err(ApiError::field(
            "amount",
            format!("{from} has at most {from_dp} decimals"),
        ));
    }
    let now = shared.clock.now();
    let mid = mid(&shared.store().market, &from, &to)?;
    let to_dp = Currency::parse(&to).ok().and_then(|c| c.decimals()).unwrap_or(2);
    let data = Conversion {
        converted_amount: amount
            .checked_mul(mid)
            .ok_or_else(|| ApiError::field("amount", "is too large"))?
            .round_dp_with_strategy(to_dp, RoundingStrategy::ToZero),
        from,
        to,
        amount,
        rate: rounded(mid),
        inverse_rate: rounded(Decimal::ONE / mid),
        timestamp: now,
    };
    Ok(envelope(
        StatusCode::OK,
        "Converted",
        data,
        &caller.request_id,
        now,
    ))
}
