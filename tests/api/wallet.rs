//! Wallet pages through signed calls to the built-in sandbox.

use crate::helpers::{location, spawn_app};

#[tokio::test]
async fn balances_list_and_one_currency() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let page = app.get_html("/balances").await;
    assert!(page.contains("10,000.000000 USDC"));
    assert!(page.contains("href=\"/balances/NGN\""));
    let one = app.get_html("/balances/NGN").await;
    assert!(one.contains("50,000.00 NGN"));
    assert!(one.contains("Pending"));
    let missing = app.get("/balances/EUR").await;
    assert_eq!(missing.status().as_u16(), 404);
    assert!(missing.text().await.unwrap().contains("no EUR wallet"));
}

#[tokio::test]
async fn generate_an_address_see_it_listed_and_validate_it() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let page = app.get_html("/addresses").await;
    assert!(page.contains("Generate an address"));
    let reference = page
        .split("name=\"reference\" value=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_owned();
    let fields = [
        ("chain", "ethereum"),
        ("label", "treasury"),
        ("reference", reference.as_str()),
    ];
    let res = app.post_form("/addresses", "/addresses", &fields).await;
    assert_eq!(res.status().as_u16(), 303);
    let detail_path = location(&res);
    assert!(detail_path.starts_with("/addresses/"));
    let detail = app.get_html(&detail_path).await;
    assert!(detail.contains("Address generated"));
    let address = detail
        .split("<p class=\"address-big\"><code>")
        .nth(1)
        .unwrap()
        .split('<')
        .next()
        .unwrap()
        .to_owned();
    assert!(address.starts_with("0x") && address.len() == 42);
    assert!(
        detail.contains(&format!("data-copy=\"{address}\"")),
        "the address can be copied"
    );
    assert!(detail.contains("<svg"), "and scanned as a QR code");

    // A double submit of the same form is the same address.
    let again = app.post_form("/addresses", "/addresses", &fields).await;
    assert_eq!(location(&again), detail_path);

    let list = app.get_html("/addresses?chain=ethereum").await;
    assert!(list.contains(&address));
    assert!(list.contains("treasury"));

    let res = app
        .post_form(
            "/addresses",
            "/addresses/validate",
            &[("chain", "ethereum"), ("address", &address)],
        )
        .await;
    assert!(res.text().await.unwrap().contains("Valid ethereum address"));
    // One character changed: a case flip breaks the EIP-55 checksum.
    let flip = address
        .char_indices()
        .skip(2)
        .find(|(_, c)| c.is_ascii_alphabetic())
        .unwrap()
        .0;
    let mut broken = address.clone();
    let c = broken.remove(flip);
    let flipped = if c.is_ascii_uppercase() {
        c.to_ascii_lowercase()
    } else {
        c.to_ascii_uppercase()
    };
    broken.insert(flip, flipped);
    let token = crate::helpers::csrf_in(&app.get_html("/addresses").await);
    let res = app
        .http
        .post(app.url("/addresses/validate"))
        .header("HX-Request", "true")
        .form(&[
            ("csrf_token", token.as_str()),
            ("chain", "ethereum"),
            ("address", &broken),
        ])
        .send()
        .await
        .unwrap();
    let fragment = res.text().await.unwrap();
    assert!(fragment.contains("Not a valid ethereum address"));
    assert!(!fragment.contains("<html"), "htmx gets a fragment");

    // The service's refusal is shown plainly on the form.
    let res = app
        .post_form(
            "/addresses",
            "/addresses",
            &[("chain", "tron"), ("reference", "paydesk-tron-1")],
        )
        .await;
    assert_eq!(res.status().as_u16(), 422);
    let body = res.text().await.unwrap();
    assert!(body.contains("be generated on tron"), "{body}");
}

#[tokio::test]
async fn transactions_filter_load_more_detail_and_export() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let page = app.get_html("/transactions").await;
    assert!(page.contains("4 matching"));
    assert!(page.contains("OPENING_BTC"));
    let filtered = app.get_html("/transactions?currency=NGN").await;
    assert!(filtered.contains("1 matching"));
    assert!(filtered.contains("OPENING_NGN") && !filtered.contains("OPENING_BTC"));
    let noted = app.get_html("/transactions?type=GIFT").await;
    assert!(noted.contains("is not a transaction type"));

    let id = page
        .split("<td><a href=\"/transactions/")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_owned();
    let detail = app.get_html(&format!("/transactions/{id}")).await;
    assert!(detail.contains("Deposit confirmed"), "codes read as words");
    assert!(detail.contains("opening_balance"));
    assert!(
        !detail.contains("sandbox's clock"),
        "an unmoved clock goes unsaid"
    );
    // Once the sandbox's clock moves, the page says whose times are whose.
    let two_days = 2 * 86_400 + 3 * 3_600 + 60;
    app.sandbox().await.sandbox_advance_clock(two_days).await.unwrap();
    let detail = app.get_html(&format!("/transactions/{id}")).await;
    assert!(
        detail.contains("The sandbox&#39;s clock is 2 days 3 hours ahead of real time"),
        "{detail}"
    );
    assert_eq!(app.get("/transactions/no-such-ref").await.status().as_u16(), 404);

    let csv = app.get("/transactions/export.csv?currency=USDT").await;
    assert_eq!(csv.status().as_u16(), 200);
    assert!(csv.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .contains("attachment"));
    let text = csv.text().await.unwrap();
    let lines: Vec<_> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines[0].starts_with("\"transaction_id\",\"created_at\",\"type\""),
        "{text}"
    );
    assert!(lines[1].contains("OPENING_USDT"));
    // A cursor left in the address (stale or mistyped) doesn't break it.
    let from_page = app
        .get("/transactions/export.csv?currency=USDT&cursor=not-a-cursor%00")
        .await;
    assert_eq!(from_page.status().as_u16(), 200);
    assert_eq!(from_page.text().await.unwrap().lines().count(), 2);
}

#[tokio::test]
async fn load_more_pages_through_with_htmx_fragments() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    // 30 deposit-detected transactions on top of the 4 opening ones.
    let client = app.sandbox().await;
    let address = client
        .generate_address(&paydesk_api::models::addresses::GenerateAddress {
            chain: "ethereum".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .address;
    for i in 0..30 {
        client
            .sandbox_deposit(&paydesk_api::models::control::SimulateDeposit {
                chain: "ethereum".into(),
                address: address.clone(),
                currency: "USDT".into(),
                amount: paydesk_api::units::BaseUnits(1_000 + i),
            })
            .await
            .unwrap();
    }
    let page = app.get_html("/transactions").await;
    assert!(page.contains("34 matching"));
    assert_eq!(page.matches("<td><a href=\"/transactions/").count(), 25);
    let more = page
        .split("id=\"load-more\"")
        .nth(1)
        .unwrap()
        .split("hx-get=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .replace("&amp;", "&")
        .replace("&#38;", "&");
    let fragment = app
        .http
        .get(app.url(&more))
        .header("HX-Request", "true")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(
        fragment.matches("<td><a href=\"/transactions/").count(),
        9,
        "{more}"
    );
    assert!(
        !fragment.contains("Load more"),
        "the last page has no further link"
    );
    assert!(fragment.contains("OPENING_BTC"));
}

#[tokio::test]
async fn supported_chains_are_listed() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let page = app.get_html("/chains").await;
    for chain in ["ethereum", "solana", "stellar", "bitcoin"] {
        assert!(page.contains(chain), "{chain}");
    }
}

/// The rates board lists every traded pair with buy, sell and mid and
/// refreshes itself; the converter answers in place and refuses a bad
/// amount beside its field.
#[tokio::test]
async fn rates_show_every_pair_and_convert_amounts() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let page = app.get_html("/rates").await;
    assert!(
        page.contains("BTC/USDT") && page.contains("hx-trigger=\"every 10s\""),
        "{page}"
    );
    let board = app.get_html("/rates/board").await;
    assert!(!board.contains("<html") && board.contains("BTC/USDT"));
    let converted = app
        .http
        .get(app.url("/rates/convert?amount=0.5&from=BTC&to=USDT"))
        .header("HX-Request", "true")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        converted.contains("0.5 BTC = ") && converted.contains("USDT"),
        "{converted}"
    );
    let refused = app.get_html("/rates/convert?amount=1e3&from=BTC&to=USDT").await;
    assert!(
        refused.contains(r#"id="amount-error""#) && refused.contains("plain number of BTC"),
        "{refused}"
    );
}

#[tokio::test]
async fn a_monthly_statement_opens_moves_and_closes_on_the_ledger_balance() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let page = app.get_html("/statements?currency=USDT").await;
    assert!(page.contains("USDT statement"), "{page}");
    assert!(
        page.contains("OPENING_USDT"),
        "the month's movements are listed: {page}"
    );
    assert!(page.contains("Closing balance"));
    assert!(page.contains("10,000.000000"));
    assert!(
        page.contains("matches the service's ledger balance now"),
        "this month's statement closes on the ledger balance: {page}"
    );
    assert!(page.contains("data-print"), "a print button");

    let csv = app.get("/statements/export.csv?currency=USDT").await;
    assert_eq!(csv.status().as_u16(), 200);
    assert!(csv
        .headers()
        .get("content-disposition")
        .unwrap()
        .to_str()
        .unwrap()
        .starts_with("attachment; filename=\"statement-USDT-"));
    let body = csv.text().await.unwrap();
    let lines: Vec<&str> = body.lines().collect();
    assert!(lines[0].starts_with("\"value date\",\"type\""), "{body}");
    assert!(
        lines[1].contains("\"Opening balance\"") && lines[1].contains("\"0.000000\""),
        "{body}"
    );
    assert!(body.contains("\"OPENING_USDT\""), "{body}");
    let last = lines.last().unwrap();
    assert!(
        last.contains("\"Closing balance\"") && last.contains("\"10000.000000\""),
        "{body}"
    );

    // An earlier month opens and closes at nothing; a bad pick says so.
    let before = app.get_html("/statements?currency=USDT&month=2020-01").await;
    assert!(before.contains("No settled movements this month."), "{before}");
    let bad = app.get_html("/statements?currency=EUR&month=someday").await;
    assert!(
        bad.contains("&#39;EUR&#39; is not one of your wallets")
            || bad.contains("'EUR' is not one of your wallets"),
        "{bad}"
    );
}

#[tokio::test]
async fn transactions_filter_by_date_on_the_page_and_in_the_export() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let today = chrono::Utc::now().date_naive();
    let tomorrow = today.succ_opt().unwrap();
    let page = app
        .get_html(&format!("/transactions?from={today}&to={today}"))
        .await;
    assert!(page.contains("4 matching in the dates chosen"), "{page}");
    assert!(page.contains("OPENING_USDT"));
    let later = app.get_html(&format!("/transactions?from={tomorrow}")).await;
    assert!(later.contains("0 matching in the dates chosen"), "{later}");
    let bad = app.get_html("/transactions?from=last+week").await;
    assert!(bad.contains("is not a date (use YYYY-MM-DD)"), "{bad}");
    assert!(
        bad.contains("4 matching"),
        "a bad date filters nothing out: {bad}"
    );

    let csv = app
        .get(&format!(
            "/transactions/export.csv?to={}",
            today.pred_opt().unwrap()
        ))
        .await
        .text()
        .await
        .unwrap();
    assert_eq!(csv.lines().count(), 1, "only the header before today: {csv}");
    let csv = app
        .get(&format!("/transactions/export.csv?from={today}"))
        .await
        .text()
        .await
        .unwrap();
    assert_eq!(csv.lines().count(), 5, "{csv}");
}
