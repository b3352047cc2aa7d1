use chrono::{DateTime, Duration, Utc};
use paydesk_api::models::trading::Quote;
use rust_decimal::Decimal;
use uuid::Uuid;

use super::book::{QuoteRecord, TradeBook, SWEEP_EVERY};
use super::pair::{Pair, Side};
use super::QUOTE_RETENTION_SECS;

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
