//! Market prices (sandbox-rules.md, "Money"): one market per sandbox, in
//! the quote currency per unit of the base. `PUT /sandbox/prices` moves a
//! price; payouts, trading and exchange rates read them. A pair is also
//! quoted inverted (NGN/USDT is 1 / USDT/NGN), and every change is kept so
//! the 24-hour change can be told.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use paydesk_api::models::trading::{Price, SetPrice};
use rust_decimal::Decimal;

use crate::error::ApiError;

/// A pair: base and quote currency codes.
type PairKey = (String, String);

/// Trading and rates quote this much each side of the mid price.
pub fn spread() -> Decimal {
    Decimal::new(5, 3)
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(into = "KeptMarket", from = "KeptMarket")]
pub struct Market {
    prices: BTreeMap<PairKey, (Decimal, DateTime<Utc>)>,
    /// Every price each pair had, oldest first, from the start.
    history: BTreeMap<PairKey, PriceHistory>,
    /// Base units available per 10 s at a pair's price; a pair absent is
    /// unlimited.
    liquidity: BTreeMap<PairKey, i64>,
    /// Counts changes, so the data directory writes the market only when
    /// it changed (not kept).
    version: u64,
}

/// The market as the data directory keeps it: lists, since JSON objects
/// can't have pairs as keys.
#[derive(serde::Serialize, serde::Deserialize)]
struct KeptMarket {
    prices: Vec<(String, String, Decimal, DateTime<Utc>)>,
    history: Vec<(String, String, PriceHistory)>,
    #[serde(default)]
    liquidity: Vec<(String, String, i64)>,
}

/// Every price a pair had, oldest first.
type PriceHistory = Vec<(DateTime<Utc>, Decimal)>;

impl From<Market> for KeptMarket {
    fn from(m: Market) -> Self {
        KeptMarket {
            prices: m
                .prices
                .into_iter()
                .map(|((b, q), (p, at))| (b, q, p, at))
                .collect(),
            history: m.history.into_iter().map(|((b, q), h)| (b, q, h)).collect(),
            liquidity: m.liquidity.into_iter().map(|((b, q), l)| (b, q, l)).collect(),
        }
    }
}

impl From<KeptMarket> for Market {
    fn from(k: KeptMarket) -> Self {
        Market {
            prices: k
                .prices
                .into_iter()
                .map(|(b, q, p, at)| ((b, q), (p, at)))
                .collect(),
            history: k.history.into_iter().map(|(b, q, h)| ((b, q), h)).collect(),
            liquidity: k.liquidity.into_iter().map(|(b, q, l)| ((b, q), l)).collect(),
            version: 0,
        }
    }
}

impl Market {
    /// The rules' starting prices, plus the payout corridors' currencies.
    pub fn new(now: DateTime<Utc>) -> Self {
        let pairs: &[(&str, &str, i64)] = &[
            ("BTC", "USDT", 60_000),
            ("BTC", "USDC", 60_000),
            ("USDT", "USDC", 1),
            ("USDT", "NGN", 1_500),
            ("USDC", "NGN", 1_500),
            ("BTC", "NGN", 90_000_000),
            ("USDT", "KES", 130),
            ("USDC", "KES", 130),
            ("BTC", "KES", 7_800_000),
            ("USDT", "GHS", 15),
            ("USDC", "GHS", 15),
            ("BTC", "GHS", 900_000),
        ];
        let prices: BTreeMap<_, _> = pairs
            .iter()
            .map(|(b, q, p)| (((*b).to_owned(), (*q).to_owned()), (Decimal::from(*p), now)))
            .collect();
        let history = prices
            .iter()
            .map(|(pair, (price, at))| (pair.clone(), vec![(*at, *price)]))
            .collect();
        Market {
            prices,
            history,
            liquidity: BTreeMap::new(),
            version: 0,
        }
    }

    /// The change count (see `version`).
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Base units available per 10 s at the pair's price (None: unlimited).
    pub fn liquidity(&self, base: &str, quote: &str) -> Option<i64> {
        self.liquidity.get(&(base.to_owned(), quote.to_owned())).copied()
    }

    /// The mid price of `base` in `quote`, directly or through the inverted
    /// pair.
    pub fn mid(&self, base: &str, quote: &str) -> Option<Decimal> {
        self.price(base, quote)
            .or_else(|| self.price(quote, base).map(|p| Decimal::ONE / p))
    }

    /// The mid price in force at `at` (the first known price before it).
    pub fn mid_at(&self, base: &str, quote: &str, at: DateTime<Utc>) -> Option<Decimal> {
        let in_force = |b: &str, q: &str| {
            let history = self.history.get(&(b.to_owned(), q.to_owned()))?;
            history
                .iter()
                .rev()
                .find(|(t, _)| *t <= at)
                .or_else(|| history.first())
                .map(|(_, p)| *p)
        };
        in_force(base, quote).or_else(|| in_force(quote, base).map(|p| Decimal::ONE / p))
    }

    /// Units of `quote` per unit of `base`.
    pub fn price(&self, base: &str, quote: &str) -> Option<Decimal> {
        self.prices
            .get(&(base.to_owned(), quote.to_owned()))
            .map(|(p, _)| *p)
    }

    pub fn set(&mut self, req: &SetPrice, now: DateTime<Utc>) -> Result<Price, ApiError> {
        let key = (
            req.base.trim().to_ascii_uppercase(),
            req.quote.trim().to_ascii_uppercase(),
        );
        if !self.prices.contains_key(&key) {
            return Err(ApiError::field(
                "base",
                format!(
                    "{}/{} is not a market pair; see GET /api/trading/prices",
                    key.0, key.1
                ),
            ));
        }
        if req.price <= Decimal::ZERO || req.price > Decimal::from(1_000_000_000_000i64) {
            return Err(ApiError::field(
                "price",
                "must be greater than zero and at most 10^12",
            ));
        }
        match req.liquidity {
            None => {
                self.liquidity.remove(&key);
            }
            Some(l) if l.value() > 0 => {
                self.liquidity.insert(key.clone(), l.value());
            }
            Some(_) => {
                return Err(ApiError::field(
                    "liquidity",
                    "must be a positive integer of base units per 10 s (leave it out for unlimited)",
                ))
            }
        }
        self.version += 1;
        self.prices.insert(key.clone(), (req.price, now));
        self.history
            .entry(key.clone())
            .or_default()
            .push((now, req.price));
        Ok(Price {
            liquidity: req.liquidity,
            base_currency: key.0,
            quote_currency: key.1,
            price: req.price,
            as_of: now,
        })
    }

    pub fn list(&self) -> Vec<Price> {
        self.prices
            .iter()
            .map(|((b, q), (p, at))| Price {
                liquidity: self.liquidity(b, q).map(paydesk_api::units::BaseUnits),
                base_currency: b.clone(),
                quote_currency: q.clone(),
                price: *p,
                as_of: *at,
            })
            .collect()
    }
}
