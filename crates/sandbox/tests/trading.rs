//! Exchange rates, withdrawals, and trading (quotes and orders, NGN pairs,
//! target orders, scheduled orders) over real HTTP, driven by the sandbox
//! clock. After each scenario the ledger is recounted from its records:
//! no money appears or vanishes.

mod support;

use std::str::FromStr;

use paydesk_api::models::trading::{NewSchedule, NewTargetOrder, OrderRequest, QuoteRequest, ScheduleUpdate};
use paydesk_api::models::transactions::TransactionState;
use paydesk_api::models::withdrawals::NewWithdrawal;
use paydesk_api::units::BaseUnits;
use paydesk_api::{ApiError, Client};
use rust_decimal::Decimal;

fn dec(s: &str) -> Decimal {
    Decimal::from_str(s).unwrap()
}

fn code(e: &ApiError) -> (u16, String) {
    (e.status().unwrap_or(0), e.code().unwrap_or_default().to_owned())
}

use support::assert_ledger_adds_up;

async fn available(c: &Client, currency: &str) -> i64 {
    c.balance(currency).await.unwrap().available_balance.value()
}

fn quote(base: &str, quote: &str, side: &str, quantity: &str) -> QuoteRequest {
    QuoteRequest {
        base_currency: base.into(),
        quote_currency: quote.into(),
        side: side.into(),
        quantity: dec(quantity),
    }
}

fn order_on(q: &paydesk_api::models::trading::Quote, side: &str, quantity: &str) -> OrderRequest {
    OrderRequest {
        base_currency: q.base_currency.clone(),
        quote_currency: q.quote_currency.clone(),
        side: side.into(),
        quantity: dec(quantity),
        quote_id: q.id,
        ..OrderRequest::default()
    }
}

#[tokio::test]
async fn exchange_rates_and_conversions_follow_the_market() {
    let t = support::spawn().await;
    let c = &t.client;
    let r = c.exchange_rate("BTC", "USDT").await.unwrap();
    assert_eq!(
        (r.mid_rate, r.buy_rate, r.sell_rate),
        (dec("60000"), dec("60300"), dec("59700"))
    );
    assert_eq!(
        r.inverse_rate,
        (Decimal::ONE / dec("60000")).round_sf(15).unwrap().normalize()
    );
    assert_eq!((r.valid_for_seconds, r.percent_change_24h), (30, Decimal::ZERO));
    let ngn = c.exchange_rate("NGN", "USDT").await.unwrap();
    assert_eq!(ngn.inverse_rate, dec("1500"));
    for (from, to) in [("BTC", "KES0"), ("XYZ", "USDT"), ("USDT", "USDT")] {
        assert_eq!(
            c.exchange_rate(from, to).await.unwrap_err().status(),
            Some(400),
            "{from}/{to}"
        );
    }
    let huge = c
        .convert("USDT", "NGN", dec("100000000000000000000000000"))
        .await
        .unwrap_err();
    assert_eq!(
        huge.status(),
        Some(400),
        "a huge amount is refused, never a crash"
    );
    let conv = c.convert("USDT", "NGN", dec("10.5")).await.unwrap();
    assert_eq!(conv.converted_amount, dec("15750"));
    assert_eq!(
        c.convert("USDT", "NGN", dec("0.0000001"))
            .await
            .unwrap_err()
            .status(),
        Some(400)
    );
    assert_eq!(
        c.convert("USDT", "NGN", dec("-1")).await.unwrap_err().status(),
        Some(400)
    );

    // A day after a move the 24-hour change shows it.
    c.sandbox_set_price("BTC", "USDT", dec("66000")).await.unwrap();
    let moved = c.exchange_rate("BTC", "USDT").await.unwrap();
    assert_eq!(moved.percent_change_24h, dec("10"));
    c.sandbox_advance_clock(24 * 3600 + 1).await.unwrap();
    assert_eq!(
        c.exchange_rate("BTC", "USDT").await.unwrap().percent_change_24h,
        Decimal::ZERO
    );
}

const ETH_ADDRESS: &str = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";

fn withdrawal(reference: &str, amount: i64, memo: Option<&str>) -> NewWithdrawal {
    NewWithdrawal {
        to_address: ETH_ADDRESS.into(),
        amount: BaseUnits(amount),
        currency: "USDT".into(),
        chain: "ethereum".into(),
        reference: reference.into(),
        memo: memo.map(Into::into),
    }
}

#[tokio::test]
async fn withdrawals_settle_or_fail_on_the_clock_and_refusals_change_nothing() {
    let t = support::spawn().await;
    let c = &t.client;
    let start = available(c, "USDT").await;
    let mut bad = withdrawal("w-bad", 5_000_000, None);
    bad.to_address = ETH_ADDRESS.replace('a', "A");
    let e = c.create_withdrawal(&bad).await.unwrap_err();
    assert_eq!(code(&e), (400, "VALIDATION_ERROR".into()));
    let mut wrong_chain = withdrawal("w-bad2", 5_000_000, None);
    wrong_chain.currency = "BTC".into();
    assert_eq!(
        c.create_withdrawal(&wrong_chain).await.unwrap_err().status(),
        Some(400)
    );
    let too_much = c
        .create_withdrawal(&withdrawal("w-big", start, None))
        .await
        .unwrap_err();
    assert_eq!(code(&too_much), (422, "INSUFFICIENT_BALANCE".into()));
    let (status, _) = t
        .send(
            reqwest::Method::POST,
            "/api/withdrawals",
            &format!(r#"{{"to_address":"{ETH_ADDRESS}","amount":"1.5","currency":"USDT","chain":"ethereum","reference":"w-dec"}}"#),
        )
        .await;
    assert_eq!(status, 400, "a decimal amount is refused");
    assert_eq!(available(c, "USDT").await, start, "refusals hold nothing");

    let w = c
        .create_withdrawal(&withdrawal("w-1", 5_000_000, None))
        .await
        .unwrap();
    assert_eq!((w.status.as_str(), w.fee), ("pending", BaseUnits(1_000_000)));
    let again = c
        .create_withdrawal(&withdrawal("w-1", 5_000_000, None))
        .await
        .unwrap();
    assert_eq!(again.id, w.id, "the same reference is one withdrawal");
    assert_eq!(
        available(c, "USDT").await,
        start - 6_000_000,
        "amount and fee are held"
    );
    let failing = c
        .create_withdrawal(&withdrawal("w-2", 2_000_000, Some("fail")))
        .await
        .unwrap();
    c.sandbox_advance_clock(10).await.unwrap();
    let broadcast = c.withdrawal(&w.id.to_string()).await.unwrap();
    assert_eq!(broadcast.status.as_str(), "processing");
    assert!(!broadcast.tx_hash.is_empty());
    c.sandbox_advance_clock(60).await.unwrap();
    let done = c.withdrawal(&w.id.to_string()).await.unwrap();
    assert_eq!(done.status.as_str(), "completed");
    let failed = c.withdrawal(&failing.id.to_string()).await.unwrap();
    assert_eq!(failed.status.as_str(), "failed");
    assert_eq!(
        available(c, "USDT").await,
        start - 6_000_000,
        "the failed one is released"
    );
    let tx = c.transaction(&failing.transaction_id.to_string()).await.unwrap();
    assert_eq!(tx.state, TransactionState::Reversed);
    let page = c.withdrawals(Some("completed"), None, None).await.unwrap();
    assert_eq!(page.total_count, 1);
    assert_ledger_adds_up(c).await;
}

#[tokio::test]
async fn orders_fill_at_the_quoted_price_and_consume_the_quote() {
    let t = support::spawn().await;
    let c = &t.client;
    let (usdt0, btc0) = (available(c, "USDT").await, available(c, "BTC").await);
    let q = c
        .create_trading_quote(&quote("BTC", "USDT", "buy", "0.01"))
        .await
        .unwrap();
    assert_eq!((q.side.as_str(), q.price), ("BUY", dec("60300")));
    assert_eq!(
        (q.exchange.send_quantity, q.exchange.receive_quantity),
        (dec("603"), dec("0.01"))
    );
    assert!(!q.is_expired && !q.is_exhausted);

    let first = c.create_order(&order_on(&q, "buy", "0.004")).await.unwrap();
    assert_eq!((first.status.as_str(), first.price), ("filled", dec("60300")));
    assert_eq!(first.fills.len(), 1);
    let consumption = first.quote_consumption.clone().unwrap();
    assert_eq!(
        (consumption.consumed_quantity, consumption.remaining_quantity),
        (dec("0.004"), dec("0.006"))
    );
    assert_eq!(first.exchange.as_deref(), Some("sandbox"), "the venue, by name");
    assert_eq!(available(c, "USDT").await, usdt0 - 241_200_000);
    assert_eq!(available(c, "BTC").await, btc0 + 400_000);

    let over = c.create_order(&order_on(&q, "buy", "0.007")).await.unwrap_err();
    assert_eq!(code(&over), (422, "QUOTE_EXHAUSTED".into()));
    let wrong_side = c.create_order(&order_on(&q, "sell", "0.001")).await.unwrap_err();
    assert_eq!(wrong_side.status(), Some(400));
    c.create_order(&order_on(&q, "buy", "0.006")).await.unwrap();
    let used = c.trading_quote(&q.id.to_string()).await.unwrap();
    assert!(used.is_exhausted && used.remaining_quantity.is_zero());
    assert_eq!(used.orders_count, 2);
    let exhausted = c.create_order(&order_on(&q, "buy", "0.001")).await.unwrap_err();
    assert_eq!(code(&exhausted), (422, "QUOTE_EXHAUSTED".into()));

    // A quote is valid 30 seconds.
    let sell = c
        .create_trading_quote(&quote("BTC", "USDT", "sell", "0.5"))
        .await
        .unwrap();
    assert_eq!(sell.price, dec("59700"));
    c.sandbox_advance_clock(29).await.unwrap();
    c.create_order(&order_on(&sell, "sell", "0.1")).await.unwrap();
    c.sandbox_advance_clock(1).await.unwrap();
    assert!(c.trading_quote(&sell.id.to_string()).await.unwrap().is_expired);
    let expired = c.create_order(&order_on(&sell, "sell", "0.1")).await.unwrap_err();
    assert_eq!(code(&expired), (422, "QUOTE_EXPIRED".into()));

    // Huge quantities are refused, never a crash.
    for qty in ["1000000000000000000000", "1000000000001"] {
        let e = c
            .create_trading_quote(&quote("BTC", "USDT", "buy", qty))
            .await
            .unwrap_err();
        assert_eq!(e.status(), Some(400), "{qty}");
    }
    let mut huge_target = target("buy", "1", "3000000000000", "");
    assert_eq!(
        c.create_target_order(&huge_target).await.unwrap_err().status(),
        Some(400)
    );
    huge_target.target_price = dec("1");
    huge_target.quantity = dec("1000000");
    assert_eq!(
        code(&c.create_target_order(&huge_target).await.unwrap_err()).0,
        422
    );

    // A refused order consumes nothing; a referenced order runs once.
    let big = c
        .create_trading_quote(&quote("BTC", "USDT", "sell", "100"))
        .await
        .unwrap();
    let poor = c.create_order(&order_on(&big, "sell", "100")).await.unwrap_err();
    assert_eq!(code(&poor), (422, "INSUFFICIENT_BALANCE".into()));
    assert_eq!(
        c.trading_quote(&big.id.to_string())
            .await
            .unwrap()
            .consumed_quantity,
        Decimal::ZERO
    );
    let mut referenced = order_on(&big, "sell", "0.25");
    referenced.reference = Some("order-1".into());
    let one = c.create_order(&referenced).await.unwrap();
    assert_eq!(c.create_order(&referenced).await.unwrap().id, one.id);
    assert_eq!(
        c.trading_quote(&big.id.to_string())
            .await
            .unwrap()
            .consumed_quantity,
        dec("0.25")
    );
    let in_base_units = OrderRequest {
        quantity: dec("1000000"),
        quantity_in_base_units: Some(true),
        ..order_on(&big, "sell", "0")
    };
    let filled = c.create_order(&in_base_units).await.unwrap();
    assert_eq!(filled.quantity, dec("0.01"));
    assert_eq!(
        code(&c.cancel_order(&filled.id.to_string()).await.unwrap_err()).0,
        422
    );
    let listed = c.orders(Some("filled"), None, Some(100)).await.unwrap();
    assert_eq!(listed.total, 5);
    assert_eq!(listed.orders[0].id, filled.id, "newest first");
    assert_ledger_adds_up(c).await;
}

#[tokio::test]
async fn concurrent_orders_never_over_consume_a_quote() {
    let t = support::spawn().await;
    let c = &t.client;
    let usdt0 = available(c, "USDT").await;
    let q = c
        .create_trading_quote(&quote("BTC", "USDT", "buy", "0.01"))
        .await
        .unwrap();
    let attempts = (0..25).map(|_| {
        let c = c.clone();
        let body = order_on(&q, "buy", "0.001");
        async move { c.create_order(&body).await }
    });
    let results = futures_util::future::join_all(attempts).await;
    let filled = results.iter().filter(|r| r.is_ok()).count();
    assert_eq!(filled, 10);
    for e in results.iter().filter_map(|r| r.as_ref().err()) {
        assert_eq!(code(e), (422, "QUOTE_EXHAUSTED".into()));
    }
    let used = c.trading_quote(&q.id.to_string()).await.unwrap();
    assert_eq!((used.consumed_quantity, used.orders_count), (dec("0.01"), 10));
    assert_eq!(available(c, "USDT").await, usdt0 - 603_000_000);
    assert_ledger_adds_up(c).await;
}

#[tokio::test]
async fn ngn_pairs_trade_in_naira_as_market_orders() {
    let t = support::spawn().await;
    let c = &t.client;
    for qty in ["499", "10000001", "500.5"] {
        let e = c
            .create_trading_quote(&quote("NGN", "USDT", "buy", qty))
            .await
            .unwrap_err();
        assert_eq!(e.status(), Some(400), "{qty}");
    }
    let (ngn0, usdt0) = (available(c, "NGN").await, available(c, "USDT").await);
    let q = c
        .create_trading_quote(&quote("NGN", "USDT", "buy", "1500"))
        .await
        .unwrap();
    assert_eq!(
        q.price,
        (Decimal::ONE / dec("1500") * dec("1.005"))
            .round_sf(15)
            .unwrap()
            .normalize()
    );
    let mut in_units = order_on(&q, "buy", "1500");
    in_units.quantity_in_base_units = Some(true);
    assert_eq!(c.create_order(&in_units).await.unwrap_err().status(), Some(400));
    let order = c.create_order(&order_on(&q, "buy", "1500")).await.unwrap();
    assert_eq!(order.order_type, "market");
    assert!(order.fills.is_empty() && order.quote_consumption.is_none() && order.exchange.is_none());
    assert_eq!(available(c, "NGN").await, ngn0 + 150_000, "1,500 naira in kobo");
    assert_eq!(
        available(c, "USDT").await,
        usdt0 - 1_005_000,
        "1.005 USDT, the spread included"
    );
    // The far ends of the NGN range.
    c.create_trading_quote(&quote("NGN", "BTC", "sell", "500"))
        .await
        .unwrap();
    c.create_trading_quote(&quote("NGN", "USDC", "buy", "10000000"))
        .await
        .unwrap();
    assert_ledger_adds_up(c).await;
}

fn target(side: &str, quantity: &str, price: &str, expires_at: &str) -> NewTargetOrder {
    NewTargetOrder {
        base_currency: "BTC".into(),
        quote_currency: "USDT".into(),
        side: side.into(),
        quantity: dec(quantity),
        target_price: dec(price),
        expires_at: expires_at.into(),
        reference: String::new(),
    }
}

/// Liquidity: a triggered order fills in slices, one each 10 s while the
/// price stays at its target, and the money moved adds up to one fill.
#[tokio::test]
async fn target_orders_fill_in_slices_of_the_liquidity_while_the_price_holds() {
    let t = support::spawn().await;
    let c = &t.client;
    let (usdt0, btc0) = (available(c, "USDT").await, available(c, "BTC").await);
    let buy = c
        .create_target_order(&target("buy", "0.03", "59000", ""))
        .await
        .unwrap();
    let id = buy.id.to_string();
    // 0.01 BTC per 10 s at 58,000.
    let price = c
        .sandbox_set_price_with_liquidity("BTC", "USDT", dec("58000"), BaseUnits(1_000_000))
        .await
        .unwrap();
    assert_eq!(price.liquidity, Some(BaseUnits(1_000_000)));
    assert_eq!(c.target_order(&id).await.unwrap().status.as_str(), "triggered");

    c.sandbox_advance_clock(10).await.unwrap();
    let first = c.target_order(&id).await.unwrap();
    assert_eq!(first.status.as_str(), "triggered");
    assert_eq!(
        (first.filled_quantity, first.remaining_quantity),
        (dec("0.01"), dec("0.02"))
    );
    assert_eq!(first.average_fill_price, "59000");
    assert!(!first.last_fill_at.is_empty() && first.fully_filled_at.is_empty());
    // Two thirds of 1,778.85 USDT stay held.
    assert_eq!(first.remaining_locked, dec("1185.9"));
    assert_eq!(available(c, "BTC").await, btc0 + 1_000_000);

    // The price moves away: no slice until it comes back.
    c.sandbox_set_price("BTC", "USDT", dec("61000")).await.unwrap();
    c.sandbox_advance_clock(30).await.unwrap();
    assert_eq!(c.target_order(&id).await.unwrap().filled_quantity, dec("0.01"));
    c.sandbox_set_price_with_liquidity("BTC", "USDT", dec("59000"), BaseUnits(1_500_000))
        .await
        .unwrap();
    c.sandbox_advance_clock(10).await.unwrap();
    assert_eq!(c.target_order(&id).await.unwrap().filled_quantity, dec("0.025"));
    c.sandbox_advance_clock(10).await.unwrap();
    let done = c.target_order(&id).await.unwrap();
    assert_eq!(done.status.as_str(), "filled");
    assert_eq!(
        (done.filled_quantity, done.remaining_quantity),
        (dec("0.03"), dec("0"))
    );
    assert_eq!(done.remaining_locked, dec("0"));
    assert!(!done.fully_filled_at.is_empty());
    // 0.03 × 59,000 = 1,770 USDT + 0.5% = 1,778.85 USDT in all, as one fill.
    assert_eq!(available(c, "USDT").await, usdt0 - 1_778_850_000);
    assert_eq!(available(c, "BTC").await, btc0 + 3_000_000);
    assert_ledger_adds_up(c).await;

    // A price set without liquidity is unlimited again: one whole fill.
    c.sandbox_set_price("BTC", "USDT", dec("59000")).await.unwrap();
    let sell = c
        .create_target_order(&target("sell", "0.02", "58000", ""))
        .await
        .unwrap();
    assert_eq!(sell.status.as_str(), "triggered");
    c.sandbox_advance_clock(10).await.unwrap();
    assert_eq!(
        c.target_order(&sell.id.to_string())
            .await
            .unwrap()
            .status
            .as_str(),
        "filled"
    );
    assert_ledger_adds_up(c).await;
}

#[tokio::test]
async fn target_orders_lock_escrow_trigger_fill_expire_and_release_exactly() {
    let t = support::spawn().await;
    let c = &t.client;
    let (usdt0, btc0) = (available(c, "USDT").await, available(c, "BTC").await);
    let buy = c
        .create_target_order(&target("buy", "0.1", "59000", ""))
        .await
        .unwrap();
    assert_eq!(buy.status.as_str(), "active");
    // 0.1 × 59,000 = 5,900 USDT plus 0.5% = 29.5 USDT of fee.
    assert_eq!(
        (buy.locked_amount, buy.locked_currency.as_str()),
        (dec("5929.5"), "USDT")
    );
    assert_eq!(available(c, "USDT").await, usdt0 - 5_929_500_000);

    c.sandbox_set_price("BTC", "USDT", dec("59000.01")).await.unwrap();
    assert_eq!(
        c.target_order(&buy.id.to_string()).await.unwrap().status.as_str(),
        "active"
    );
    c.sandbox_set_price("BTC", "USDT", dec("59000")).await.unwrap();
    let triggered = c.target_order(&buy.id.to_string()).await.unwrap();
    assert_eq!(triggered.status.as_str(), "triggered");
    assert!(!triggered.first_triggered_at.is_empty());
    assert_eq!(
        code(&c.cancel_target_order(&buy.id.to_string()).await.unwrap_err()).0,
        422
    );
    c.sandbox_advance_clock(10).await.unwrap();
    let filled = c.target_order(&buy.id.to_string()).await.unwrap();
    assert_eq!(
        (filled.status.as_str(), filled.filled_quantity),
        ("filled", dec("0.1"))
    );
    assert_eq!(filled.average_fill_price, "59000");
    assert!(!filled.fully_filled_at.is_empty());
    assert_eq!(
        available(c, "USDT").await,
        usdt0 - 5_929_500_000,
        "cost and fee, nothing more"
    );
    assert_eq!(available(c, "BTC").await, btc0 + 10_000_000);

    // A sell above the market expires untriggered and gives its BTC back.
    let btc1 = available(c, "BTC").await;
    let expires = (c.sandbox_clock().await.unwrap().now + chrono::Duration::seconds(60)).to_rfc3339();
    let sell = c
        .create_target_order(&target("sell", "0.2", "70000", &expires))
        .await
        .unwrap();
    assert_eq!(
        (sell.locked_amount, sell.locked_currency.as_str()),
        (dec("0.2"), "BTC")
    );
    assert_eq!(available(c, "BTC").await, btc1 - 20_000_000);
    c.sandbox_advance_clock(60).await.unwrap();
    assert_eq!(
        c.target_order(&sell.id.to_string())
            .await
            .unwrap()
            .status
            .as_str(),
        "expired"
    );
    assert_eq!(available(c, "BTC").await, btc1);

    // Cancel releases; a sell the market already passed triggers at once.
    let cancel_me = c
        .create_target_order(&target("buy", "0.01", "1000", ""))
        .await
        .unwrap();
    let cancelled = c.cancel_target_order(&cancel_me.id.to_string()).await.unwrap();
    assert_eq!(cancelled.status.as_str(), "cancelled");
    assert_eq!(
        code(
            &c.cancel_target_order(&cancel_me.id.to_string())
                .await
                .unwrap_err()
        )
        .0,
        422
    );
    let at_once = c
        .create_target_order(&target("sell", "0.01", "50000", ""))
        .await
        .unwrap();
    assert_eq!(at_once.status.as_str(), "triggered");
    c.sandbox_advance_clock(10).await.unwrap();
    // 0.01 × 50,000 = 500 USDT less 2.5 USDT of fee.
    assert_eq!(
        c.target_order(&at_once.id.to_string())
            .await
            .unwrap()
            .status
            .as_str(),
        "filled"
    );
    assert_eq!(c.target_orders(Some("filled")).await.unwrap().len(), 2);
    for bad in [
        target("buy", "0", "1", ""),
        target("buy", "1", "0", ""),
        target("hold", "1", "1", ""),
        target("buy", "1", "1", "yesterday"),
    ] {
        assert_eq!(c.create_target_order(&bad).await.unwrap_err().status(), Some(400));
    }
    let poor = c
        .create_target_order(&target("buy", "100", "59000", ""))
        .await
        .unwrap_err();
    assert_eq!(code(&poor), (422, "INSUFFICIENT_BALANCE".into()));
    assert_ledger_adds_up(c).await;
}

fn schedule(frequency: &str, dow: u32, dom: u32, time: &str, amount: i64) -> NewSchedule {
    NewSchedule {
        currency: "BTC".into(),
        quote_currency: "USDT".into(),
        amount: BaseUnits(amount),
        frequency: frequency.into(),
        day_of_week: dow,
        day_of_month: dom,
        execution_time: time.into(),
        ..Default::default()
    }
}

#[tokio::test]
async fn scheduled_orders_tick_on_the_clock_pause_resume_and_survive_failed_ticks() {
    let t = support::spawn().await;
    let c = &t.client;
    let now = c.sandbox_clock().await.unwrap().now;
    let time = (now + chrono::Duration::minutes(5)).format("%H:%M").to_string();
    let s = c
        .create_scheduled_order(&schedule("daily", 0, 0, &time, 100_000_000))
        .await
        .unwrap();
    assert_eq!((s.status.as_str(), s.last_executed_at.as_str()), ("active", ""));
    let first_due = s.next_execution_at.unwrap();
    assert!(first_due > now && first_due <= now + chrono::Duration::minutes(6));
    let usdt0 = available(c, "USDT").await;

    // Three days: three ticks, newest first.
    c.sandbox_advance_clock(3 * 86_400).await.unwrap();
    let ran = c.scheduled_order(&s.id.to_string()).await.unwrap();
    assert_eq!(ran.total_executions, 3);
    assert_eq!(
        ran.next_execution_at.unwrap(),
        first_due + chrono::Duration::days(3)
    );
    let execs = c.scheduled_order_executions(&s.id.to_string()).await.unwrap();
    assert_eq!(execs.len(), 3);
    assert!(execs[0].executed_at > execs[2].executed_at);
    assert!(execs
        .iter()
        .all(|e| e.status.as_str() == "completed" && e.fill_price == dec("60300")));
    assert_eq!(available(c, "USDT").await, usdt0 - ran.total_amount_spent.value());
    assert!(ran.total_amount_spent.value() <= 300_000_000);

    // Paused: next_execution_at is kept, missed ticks never run; resuming
    // moves a passed tick to the next one from now.
    let kept = ran.next_execution_at;
    let paused = c
        .update_scheduled_order(
            &s.id.to_string(),
            &ScheduleUpdate {
                status: Some("paused".into()),
                ..ScheduleUpdate::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(paused.next_execution_at, kept);
    c.sandbox_advance_clock(2 * 86_400).await.unwrap();
    assert_eq!(
        c.scheduled_order(&s.id.to_string())
            .await
            .unwrap()
            .total_executions,
        3
    );
    let resumed = c
        .update_scheduled_order(
            &s.id.to_string(),
            &ScheduleUpdate {
                status: Some("active".into()),
                ..ScheduleUpdate::default()
            },
        )
        .await
        .unwrap();
    let clock = c.sandbox_clock().await.unwrap().now;
    assert!(resumed.next_execution_at.unwrap() > clock);
    assert!(resumed.next_execution_at.unwrap() <= clock + chrono::Duration::days(1));

    // An amount change keeps the tick; a timing change moves it.
    let amount_only = c
        .update_scheduled_order(
            &s.id.to_string(),
            &ScheduleUpdate {
                amount: Some(BaseUnits(50_000_000)),
                ..ScheduleUpdate::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(amount_only.next_execution_at, resumed.next_execution_at);
    let weekly = c
        .update_scheduled_order(
            &s.id.to_string(),
            &ScheduleUpdate {
                frequency: Some("weekly".into()),
                day_of_week: Some(3),
                ..ScheduleUpdate::default()
            },
        )
        .await
        .unwrap();
    let next = weekly.next_execution_at.unwrap();
    assert_eq!(chrono::Datelike::weekday(&next).num_days_from_sunday(), 3);
    assert_eq!(weekly.day_of_week, 3);

    // A tick that can't be paid is recorded as failed; the schedule goes on.
    let huge = c
        .create_scheduled_order(&schedule("daily", 0, 0, &time, 1_000_000_000_000))
        .await
        .unwrap();
    c.sandbox_advance_clock(86_400).await.unwrap();
    let after = c.scheduled_order(&huge.id.to_string()).await.unwrap();
    assert_eq!((after.status.as_str(), after.total_executions), ("active", 0));
    let failed = c.scheduled_order_executions(&huge.id.to_string()).await.unwrap();
    assert_eq!(failed[0].status.as_str(), "failed");
    assert!(after.next_execution_at.unwrap() > c.sandbox_clock().await.unwrap().now);

    let cancelled = c.cancel_scheduled_order(&huge.id.to_string()).await.unwrap();
    assert_eq!(
        (cancelled.status.as_str(), cancelled.next_execution_at),
        ("cancelled", None)
    );
    assert_eq!(
        code(&c.cancel_scheduled_order(&huge.id.to_string()).await.unwrap_err()).0,
        422
    );
    assert_eq!(c.scheduled_orders(Some("cancelled")).await.unwrap().len(), 1);
    for bad in [
        schedule("hourly", 0, 0, "10:00", 1),
        schedule("daily", 0, 0, "24:00", 1),
        schedule("weekly", 7, 0, "10:00", 1),
        schedule("monthly", 0, 32, "10:00", 1),
        schedule("daily", 0, 0, "10:00", 0),
    ] {
        assert_eq!(
            c.create_scheduled_order(&bad).await.unwrap_err().status(),
            Some(400),
            "{bad:?}"
        );
    }
    assert_ledger_adds_up(c).await;
}

#[tokio::test]
async fn a_monthly_schedule_on_the_31st_skips_shorter_months() {
    let t = support::spawn().await;
    let c = &t.client;
    let s = c
        .create_scheduled_order(&schedule("monthly", 0, 31, "00:00", 10_000_000))
        .await
        .unwrap();
    let mut seen = Vec::new();
    for _ in 0..4 {
        let due = c
            .scheduled_order(&s.id.to_string())
            .await
            .unwrap()
            .next_execution_at
            .unwrap();
        assert_eq!(chrono::Datelike::day(&due), 31);
        seen.push(chrono::Datelike::month(&due));
        let wait = (due - c.sandbox_clock().await.unwrap().now).num_seconds() + 1;
        c.sandbox_advance_clock(wait as u64).await.unwrap();
    }
    assert!(seen.windows(2).all(|w| w[0] != w[1]));
    assert!(!seen.iter().any(|m| [2, 4, 6, 9, 11].contains(m)), "{seen:?}");
    assert_eq!(
        c.scheduled_order(&s.id.to_string())
            .await
            .unwrap()
            .total_executions,
        4
    );
}

#[tokio::test]
async fn scheduled_orders_complete_at_max_executions_or_end_date() {
    let t = support::spawn().await;
    let c = &t.client;
    let now = c.sandbox_clock().await.unwrap().now;
    let time = (now + chrono::Duration::minutes(5)).format("%H:%M").to_string();
    let by_count = c
        .create_scheduled_order(&NewSchedule {
            max_executions: Some(2),
            ..schedule("daily", 0, 0, &time, 10_000_000)
        })
        .await
        .unwrap();
    assert_eq!(by_count.max_executions, Some(2));
    let first_due = by_count.next_execution_at.unwrap();
    let end = (first_due + chrono::Duration::days(1))
        .format("%Y-%m-%d")
        .to_string();
    let by_date = c
        .create_scheduled_order(&NewSchedule {
            end_date: Some(end.clone()),
            ..schedule("daily", 0, 0, &time, 10_000_000)
        })
        .await
        .unwrap();
    assert_eq!(by_date.end_date.as_deref(), Some(end.as_str()));

    c.sandbox_advance_clock(5 * 86_400).await.unwrap();
    for id in [by_count.id, by_date.id] {
        let done = c.scheduled_order(&id.to_string()).await.unwrap();
        assert_eq!(done.status.as_str(), "completed", "{id}");
        assert_eq!(done.next_execution_at, None);
        assert_eq!(
            done.total_executions, 2,
            "ticks on the first day and the end date"
        );
        let paused = c
            .update_scheduled_order(
                &id.to_string(),
                &ScheduleUpdate {
                    status: Some("paused".into()),
                    ..ScheduleUpdate::default()
                },
            )
            .await
            .unwrap_err();
        assert_eq!(paused.status(), Some(422));
    }

    let (status, body) = t
        .send(
            reqwest::Method::POST,
            "/api/trading/scheduled-orders",
            &serde_json::json!({"currency": "BTC", "quote_currency": "USDT", "amount": 10_000_000,
                "frequency": "daily", "execution_time": time, "end_date": "2020-01-01"})
            .to_string(),
        )
        .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["errors"][0]["field"], "end_date");
    let (status, _) = t
        .send(
            reqwest::Method::POST,
            "/api/trading/scheduled-orders",
            &serde_json::json!({"currency": "BTC", "quote_currency": "USDT", "amount": 10_000_000,
                "frequency": "daily", "execution_time": time, "max_executions": 0})
            .to_string(),
        )
        .await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn limit_orders_rest_hold_funds_fill_at_their_price_or_cancel() {
    let t = support::spawn().await;
    let c = &t.client;
    let usdt0 = available(c, "USDT").await;
    let btc0 = available(c, "BTC").await;
    let limit = |q: &paydesk_api::models::trading::Quote, side: &str, price: &str| OrderRequest {
        order_type: Some("limit".into()),
        price: Some(dec(price)),
        ..order_on(q, side, "0.01")
    };

    // Marketable (at or above the quoted 60,300): fills at once at the quote.
    let q = c
        .create_trading_quote(&quote("BTC", "USDT", "buy", "0.01"))
        .await
        .unwrap();
    let at_once = c.create_order(&limit(&q, "buy", "61000")).await.unwrap();
    assert_eq!((at_once.status.as_str(), at_once.price), ("filled", dec("60300")));

    // Below the market: rests with 0.01 × 59,000 = 590 USDT held.
    let q = c
        .create_trading_quote(&quote("BTC", "USDT", "buy", "0.01"))
        .await
        .unwrap();
    let rests = c.create_order(&limit(&q, "buy", "59000")).await.unwrap();
    assert_eq!(rests.status.as_str(), "pending");
    assert_eq!(
        (rests.filled_quantity, rests.remaining_quantity),
        (dec("0"), dec("0.01"))
    );
    let usdt1 = available(c, "USDT").await;
    assert_eq!(usdt1, usdt0 - 603_000_000 - 590_000_000);
    let (_, txs) = t
        .send(reqwest::Method::GET, "/api/transactions?status=PENDING", "")
        .await;
    let held = &txs["data"]["transactions"][0];
    assert_eq!(held["metadata"]["hold_type"], "limit_order");
    assert_eq!(held["metadata"]["order_id"], rests.id.to_string());
    assert!(held["metadata"]["hold_id"].is_string());

    // A sell above the market rests too, and is cancelled.
    let q = c
        .create_trading_quote(&quote("BTC", "USDT", "sell", "0.01"))
        .await
        .unwrap();
    let sell = c.create_order(&limit(&q, "sell", "70000")).await.unwrap();
    assert_eq!(sell.status.as_str(), "pending");
    let cancelled = c.cancel_order(&sell.id.to_string()).await.unwrap();
    assert_eq!(cancelled.status.as_str(), "cancelled");
    assert_eq!(
        available(c, "BTC").await,
        btc0 + 1_000_000,
        "the sell's hold is released"
    );
    let again = c.cancel_order(&sell.id.to_string()).await.unwrap_err();
    assert_eq!(again.status(), Some(422));

    // The market moves to 59,500: not yet; to 59,000: the buy fills at 59,000.
    c.sandbox_set_price("BTC", "USDT", dec("59500")).await.unwrap();
    assert_eq!(
        c.order(&rests.id.to_string()).await.unwrap().status.as_str(),
        "pending"
    );
    c.sandbox_set_price("BTC", "USDT", dec("59000")).await.unwrap();
    let filled = c.order(&rests.id.to_string()).await.unwrap();
    assert_eq!((filled.status.as_str(), filled.price), ("filled", dec("59000")));
    assert_eq!(filled.fills.len(), 1);
    assert_eq!(available(c, "USDT").await, usdt1);
    assert_eq!(available(c, "BTC").await, btc0 + 2_000_000);
    assert_ledger_adds_up(c).await;
}

#[tokio::test]
async fn an_order_keeps_the_type_it_was_sent_with_and_defaults_to_market() {
    let t = support::spawn().await;
    let c = &t.client;
    let q = c
        .create_trading_quote(&quote("BTC", "USDT", "buy", "0.01"))
        .await
        .unwrap();
    // No order_type but a price: a market order, filled at the quote's price.
    let priced = OrderRequest {
        price: Some(dec("61000")),
        ..order_on(&q, "buy", "0.002")
    };
    let order = c.create_order(&priced).await.unwrap();
    assert_eq!(order.order_type, "market");
    assert_eq!((order.status.as_str(), order.price), ("filled", dec("60300")));
    // An explicit market order with a price stays market.
    let market = OrderRequest {
        order_type: Some("market".into()),
        ..priced.clone()
    };
    assert_eq!(c.create_order(&market).await.unwrap().order_type, "market");
    // An explicit marketable limit order fills at once and stays limit.
    let limit = OrderRequest {
        order_type: Some("limit".into()),
        ..priced
    };
    let filled = c.create_order(&limit).await.unwrap();
    assert_eq!(
        (filled.order_type.as_str(), filled.status.as_str()),
        ("limit", "filled")
    );
    assert_eq!(c.order(&filled.id.to_string()).await.unwrap().order_type, "limit");
}
