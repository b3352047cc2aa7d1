//! Exchange rates (open-paths.md): one pair's rates and a conversion, from
//! the same market prices as trading.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

/// `data` of `GET /api/exchange-rates?from=X&to=Y`: units of
/// `target_currency` per unit of `base_currency`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ExchangeRate {
    pub base_currency: String,
    pub target_currency: String,
    /// What buying the base costs (mid + 0.5%).
    pub buy_rate: Decimal,
    /// What selling the base yields (mid − 0.5%).
    pub sell_rate: Decimal,
    pub mid_rate: Decimal,
    /// 1 / `mid_rate`.
    pub inverse_rate: Decimal,
    pub valid_for_seconds: u32,
    /// Change of the mid rate over the last 24 hours, in percent.
    pub percent_change_24h: Decimal,
    #[serde(with = "crate::time::millis")]
    pub timestamp: DateTime<Utc>,
}

/// `data` of `GET /api/exchange-rates/convert?from=X&to=Y&amount=N`
/// (amounts in whole units of their currency).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Conversion {
    pub from: String,
    pub to: String,
    pub amount: Decimal,
    /// At the mid rate, rounded down to the target's decimals.
    pub converted_amount: Decimal,
    pub rate: Decimal,
    pub inverse_rate: Decimal,
    #[serde(with = "crate::time::millis")]
    pub timestamp: DateTime<Utc>,
}
