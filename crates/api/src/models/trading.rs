//! Trading: market prices (more of the area arrives with the trading work).

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

/// One pair's price: units of `quote_currency` per unit of `base_currency`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Price {
    pub base_currency: String,
    pub quote_currency: String,
    pub price: Decimal,
    pub as_of: DateTime<Utc>,
}

/// `data` of `GET /api/trading/prices`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PriceList {
    pub prices: Vec<Price>,
}

/// Body of `PUT /sandbox/prices`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SetPrice {
    pub base: String,
    pub quote: String,
    pub price: Decimal,
}
