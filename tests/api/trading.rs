//! Spot trading from the portal: a quote, then an order from it through
//! the gate; large orders wait for an approver; expired quotes are refused.

use crate::approvals::{approve, members, wait_for_status};
use crate::cards::confirm;
use crate::helpers::{location, spawn_app, TestApp};

/// Asks for a quote through the form; returns the quote's id.
async fn quote(app: &TestApp, pair: &str, side: &str, quantity: &str) -> String {
    let res = app
        .post_form(
            "/trading",
            "/trading/quotes",
            &[("pair", pair), ("side", side), ("quantity", quantity)],
        )
        .await;
    let body = res.text().await.unwrap();
    assert!(body.contains("Place order") && body.contains("Expires"), "{body}");
    body.split("name=\"quote_id\" value=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn a_quote_becomes_an_order_once_and_large_orders_wait_for_an_approver() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let page = app.get_html("/trading").await;
    assert!(
        page.contains("BTC/USDT") && page.contains("Get a quote"),
        "{page}"
    );
    assert!(
        page.contains(r#"value="NGN/USDT""#)
            && !page.contains("BTC/GHS")
            && !page.contains(r#"value="USDT/NGN""#),
        "only traded pairs are offered, naira as the base"
    );

    // Small: confirmed, it runs at once, and twice is one order.
    let id = quote(&app, "BTC/USDT", "buy", "0.001").await;
    let res = confirm(&app, "/trading", "/trading/orders", &[("quote_id", &id)], "Send").await;
    assert_eq!(res.status().as_u16(), 303);
    let order_page = location(&res);
    assert!(order_page.starts_with("/trading/orders/"), "{order_page}");
    let shown = app.landing(res).await;
    assert!(
        shown.contains("Order placed.") && shown.contains("filled"),
        "{shown}"
    );
    let again = app
        .post_form(
            "/trading",
            "/trading/orders",
            &[("quote_id", &id), ("confirmed", "yes")],
        )
        .await;
    assert_eq!(again.status().as_u16(), 422);
    assert!(again
        .text()
        .await
        .unwrap()
        .contains("An order was already placed from this quote"));
    let sandbox = app.sandbox().await;
    assert_eq!(
        sandbox.orders(None, None, None).await.unwrap().orders.len(),
        1,
        "one order per quote"
    );
    let bought = app.get_html("/trading?pair=BTC%2FUSDT&side=buy").await;
    assert!(
        bought.contains("/trading/orders/"),
        "the filters keep it: {bought}"
    );
    let sold = app.get_html("/trading?side=sell").await;
    assert!(
        sold.contains("No orders match.") && !sold.contains("href=\"/trading/orders/"),
        "{sold}"
    );

    // Large (above 1,000 USD): an Operator files it, an Approver approves it.
    let operator = members(&app, "Operator", &["trader@example.com".into()])
        .await
        .remove(0);
    let approver = members(&app, "Approver", &["checker@example.com".into()])
        .await
        .remove(0);
    let id = quote(&operator, "BTC/USDT", "sell", "0.5").await;
    let res = operator
        .post_form(
            "/trading",
            "/trading/orders",
            &[("quote_id", &id), ("confirmed", "yes")],
        )
        .await;
    assert_eq!(res.status().as_u16(), 303);
    let request = location(&res).trim_start_matches("/approvals/").to_owned();
    assert_eq!(
        sandbox.orders(None, None, None).await.unwrap().orders.len(),
        1,
        "nothing before approval"
    );
    assert_eq!(approve(&approver, &request).await.status().as_u16(), 303);
    wait_for_status(&app, &request, "executed").await;
    let orders = sandbox.orders(None, None, None).await.unwrap().orders;
    assert_eq!(orders.len(), 2);
    assert!(orders
        .iter()
        .any(|o| o.side.eq_ignore_ascii_case("sell") && o.quantity.to_string() == "0.5"));
}

#[tokio::test]
async fn bad_quotes_and_expired_quotes_are_refused_in_the_traders_terms() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let res = app
        .post_form(
            "/trading",
            "/trading/quotes",
            &[("pair", "BTC/USDT"), ("side", "buy"), ("quantity", "1e3")],
        )
        .await;
    assert_eq!(res.status().as_u16(), 422);
    let body = res.text().await.unwrap();
    assert!(
        body.contains(r#"id="quantity-error""#) && body.contains("plain number of BTC"),
        "{body}"
    );

    let id = quote(&app, "BTC/USDT", "buy", "0.001").await;
    app.sandbox().await.sandbox_advance_clock(60).await.unwrap();
    let res = app
        .post_form(
            "/trading",
            "/trading/orders",
            &[("quote_id", &id), ("confirmed", "yes")],
        )
        .await;
    assert_eq!(res.status().as_u16(), 422);
    assert!(res
        .text()
        .await
        .unwrap()
        .contains("This quote has expired; get a new quote."));
    assert!(app
        .sandbox()
        .await
        .orders(None, None, None)
        .await
        .unwrap()
        .orders
        .is_empty());
}

/// A limit order that rests can be cancelled from its page, after a
/// confirmation, through the gate (it runs at once by default).
#[tokio::test]
async fn a_resting_order_is_cancelled_after_a_confirmation() {
    use paydesk_api::models::trading::{OrderRequest, QuoteRequest};
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let sandbox = app.sandbox().await;
    let quote = sandbox
        .create_trading_quote(&QuoteRequest {
            base_currency: "BTC".into(),
            quote_currency: "USDT".into(),
            side: "buy".into(),
            quantity: rust_decimal::Decimal::new(1, 3),
        })
        .await
        .unwrap();
    let resting = sandbox
        .create_order(&OrderRequest {
            base_currency: "BTC".into(),
            quote_currency: "USDT".into(),
            side: "buy".into(),
            quantity: quote.quantity,
            price: Some(quote.price / rust_decimal::Decimal::from(2)),
            order_type: Some("limit".into()),
            quote_id: quote.id,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(resting.status.as_str(), "pending");
    let page = format!("/trading/orders/{}", resting.id);
    assert!(app.get_html(&page).await.contains("Cancel order"));
    let res = confirm(
        &app,
        &page,
        &format!("{page}/cancel"),
        &[],
        "the unfilled part leaves the book",
    )
    .await;
    let landed = app.landing(res).await;
    assert!(
        landed.contains("The order is cancelled"),
        "{}",
        landed.split("<main").nth(1).unwrap_or_default()
    );
    assert_eq!(
        sandbox
            .order(&resting.id.to_string())
            .await
            .unwrap()
            .status
            .as_str(),
        "cancelled"
    );
}

/// A DCA schedule is confirmed (its per-tick amount and cadence shown),
/// created once through the gate, buys when the sandbox's clock passes
/// its time, and is paused and cancelled from its page.
#[tokio::test]
async fn a_scheduled_order_is_created_ticks_on_the_clock_and_is_paused_and_cancelled() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let list = app.get_html("/trading/scheduled").await;
    let reference = list
        .split("name=\"reference\" value=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_owned();
    let fields = [
        ("currency", "BTC"),
        ("quote_currency", "USDT"),
        ("amount", "25"),
        ("frequency", "daily"),
        ("day_of_week", "0"),
        ("day_of_month", ""),
        ("execution_time", "09:30"),
        ("reference", reference.as_str()),
    ];
    let res = confirm(
        &app,
        "/trading/scheduled",
        "/trading/scheduled",
        &fields,
        "daily at 09:30 UTC",
    )
    .await;
    let page = location(&res);
    assert!(app.landing(res).await.contains("Schedule created."));
    let mut again = fields.to_vec();
    again.push(("confirmed", "yes"));
    app.post_form("/trading/scheduled", "/trading/scheduled", &again)
        .await;
    let sandbox = app.sandbox().await;
    assert_eq!(
        sandbox.scheduled_orders(None).await.unwrap().len(),
        1,
        "a double submit creates one"
    );

    sandbox.sandbox_advance_clock(86_400 + 3_600).await.unwrap();
    let shown = app.get_html(&page).await;
    assert!(
        shown.contains("completed") && shown.contains("25 USDT"),
        "{shown}"
    );

    let res = confirm(&app, &page, &format!("{page}/pause"), &[], "Pause").await;
    assert!(app.landing(res).await.contains("The schedule is paused"));
    let res = confirm(&app, &page, &format!("{page}/cancel"), &[], "Cancel").await;
    assert!(app.landing(res).await.contains("The schedule is cancelled"));
    let refused = app
        .post_form(&page, &format!("{page}/resume"), &[("confirmed", "yes")])
        .await;
    assert_eq!(refused.status().as_u16(), 422);
}

/// A target order shows what it locks before it is confirmed, is created
/// once, and its cancel releases the escrow.
#[tokio::test]
async fn a_target_order_locks_its_escrow_and_cancelling_releases_it() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let list = app.get_html("/trading/targets").await;
    let reference = list
        .split("name=\"reference\" value=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_owned();
    let fields = [
        ("pair", "BTC/USDT"),
        ("side", "buy"),
        ("quantity", "0.01"),
        ("target_price", "1000"),
        ("expires_at", ""),
        ("reference", reference.as_str()),
    ];
    let res = confirm(
        &app,
        "/trading/targets",
        "/trading/targets",
        &fields,
        "about 10.05 USDT (the 0.5% fee included)",
    )
    .await;
    let page = location(&res);
    let shown = app.landing(res).await;
    assert!(
        shown.contains("Target order created.") && shown.contains("10.05 still locked"),
        "{shown}"
    );
    let sandbox = app.sandbox().await;
    assert_eq!(sandbox.target_orders(None).await.unwrap().len(), 1);

    let bad = app
        .post_form(
            "/trading/targets",
            "/trading/targets",
            &[
                ("pair", "BTC/USDT"),
                ("side", "buy"),
                ("quantity", "0.01"),
                ("target_price", "-5"),
            ],
        )
        .await;
    assert_eq!(bad.status().as_u16(), 422);
    assert!(bad.text().await.unwrap().contains(r#"id="target_price-error""#));

    let res = confirm(
        &app,
        &page,
        &format!("{page}/cancel"),
        &[],
        "what it still locks is released",
    )
    .await;
    assert!(app.landing(res).await.contains("The target order is cancelled"));
    let order = &sandbox.target_orders(None).await.unwrap()[0];
    assert_eq!(order.status.as_str(), "cancelled");
}

/// An approved order whose quote ran out is re-quoted at execution; when
/// the price moved beyond the policy's tolerance (1%) it goes back to the
/// approvers with the new price instead of trading at it.
#[tokio::test]
async fn a_price_move_beyond_tolerance_sends_an_approved_order_back() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let operator = members(&app, "Operator", &["mover@example.com".into()])
        .await
        .remove(0);
    let approver = members(&app, "Approver", &["steady@example.com".into()])
        .await
        .remove(0);
    let sandbox = app.sandbox().await;
    let id = quote(&operator, "BTC/USDT", "sell", "0.5").await;
    let res = operator
        .post_form(
            "/trading",
            "/trading/orders",
            &[("quote_id", &id), ("confirmed", "yes")],
        )
        .await;
    let request = location(&res).trim_start_matches("/approvals/").to_owned();
    let price = sandbox.trading_prices().await.unwrap().prices;
    let btc = price
        .iter()
        .find(|p| p.base_currency == "BTC" && p.quote_currency == "USDT")
        .unwrap();
    sandbox
        .sandbox_set_price("BTC", "USDT", btc.price * rust_decimal::Decimal::new(95, 2))
        .await
        .unwrap();
    sandbox.sandbox_advance_clock(60).await.unwrap();
    assert_eq!(approve(&approver, &request).await.status().as_u16(), 303);
    let page = loop_until_sent_back(&app, &request).await;
    assert!(page.contains("the price moved from"), "{page}");
    assert!(
        sandbox.orders(None, None, None).await.unwrap().orders.is_empty(),
        "nothing traded"
    );
}

/// The request's page once it went back to the approvers.
async fn loop_until_sent_back(app: &TestApp, request: &str) -> String {
    crate::helpers::eventually("the request to go back to the approvers", move || async move {
        let page = app.get_html(&format!("/approvals/{request}")).await;
        page.contains("the price moved from").then_some(page)
    })
    .await
}
