//! A new user's path in headless Chromium: sign in with the printed
//! one-time password, choose a password, see balances, generate an address,
//! find it in the list, sign out; a maker and a checker each in their own
//! browser, for a payout and for a card termination.

use std::process::Stdio;
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use serde_json::json;

use crate::helpers::spawn_app;

/// chromedriver on a free port; killed when dropped.
struct Driver {
    child: tokio::process::Child,
    url: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

async fn start_driver() -> Driver {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    // Its own process group: Chromium's shutdown must not signal the test
    // process, whose servers would take a SIGTERM as a request to stop.
    let child = tokio::process::Command::new("chromedriver")
        .arg(format!("--port={port}"))
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("chromedriver runs: install the Debian packages chromium and chromium-driver (.ci/run does)");
    let url = format!("http://127.0.0.1:{port}");
    for _ in 0..100 {
        if reqwest::get(format!("{url}/status")).await.is_ok() {
            return Driver { child, url };
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("chromedriver did not start");
}

async fn browser(driver: &Driver) -> Client {
    let profile = std::env::temp_dir().join(format!("paydesk-chromium-{}", uuid::Uuid::new_v4().simple()));
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "args": [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                format!("--user-data-dir={}", profile.display()),
            ]
        }),
    );
    ClientBuilder::new(HttpConnector::new())
        .capabilities(caps)
        .connect(&driver.url)
        .await
        .expect("a Chromium session starts")
}

async fn fill(c: &Client, css: &str, text: &str) {
    let field = c.find(Locator::Css(css)).await.unwrap();
    field.clear().await.unwrap();
    field.send_keys(text).await.unwrap();
}

async fn click(c: &Client, locator: Locator<'_>) {
    c.find(locator).await.unwrap().click().await.unwrap();
}

async fn select(c: &Client, css: &str, value: &str) {
    c.find(Locator::Css(css))
        .await
        .unwrap()
        .select_by_value(value)
        .await
        .unwrap();
}

/// Saves a screenshot, for looking at the pages as a user sees them: in
/// the folder PAYDESK_SCREENSHOTS names, else kept as an artefact of the
/// test run under `target/tmp/screenshots`.
async fn snap(c: &Client, name: &str) {
    let dir = std::env::var("PAYDESK_SCREENSHOTS")
        .unwrap_or_else(|_| concat!(env!("CARGO_TARGET_TMPDIR"), "/screenshots").to_owned());
    let png = c.screenshot().await.unwrap();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(std::path::Path::new(&dir).join(format!("{name}.png")), png).unwrap();
}

/// The page at a desktop width and at a phone's, a screenshot of each.
async fn snap_both(c: &Client, name: &str) {
    let flash = c
        .find(Locator::Css("#flash"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        !flash.contains("failed") && !flash.contains("Paydesk"),
        "{name}: {flash}"
    );
    c.set_window_size(1280, 900).await.unwrap();
    snap(c, &format!("{name}-desktop")).await;
    c.set_window_size(390, 844).await.unwrap();
    snap(c, &format!("{name}-narrow")).await;
    // Nothing widens the page at the narrow width: wide tables scroll in place.
    let overflow = overflowing(c).await;
    assert_eq!(overflow, json!([]), "{name} overflows a phone's width");
    c.set_window_size(1280, 900).await.unwrap();
}

/// The outermost elements reaching past the right edge of the window,
/// named (none when the page fits).
async fn overflowing(c: &Client) -> serde_json::Value {
    c.execute(
        "const w = document.documentElement.clientWidth;
         if (document.documentElement.scrollWidth <= w + 1) return [];
         return [...document.querySelectorAll('body *')]
           .filter(e => e.getBoundingClientRect().right > w + 1 && !e.parentElement.closest('.table-scroll, table'))
           .filter(e => !e.parentElement || e.parentElement.getBoundingClientRect().right <= w + 1)
           .map(e => e.tagName + '.' + e.className + ': ' + (e.textContent || '').trim().slice(0, 40));",
        vec![],
    )
    .await
    .unwrap()
}

/// The page's text once it shows `expected` (pages load after clicks).
async fn wait_for_text(c: &Client, expected: &str) -> String {
    wait_for_any(c, &[expected]).await
}

#[tokio::test]
async fn a_new_admin_chooses_a_password_sets_up_two_factor_sees_balances_generates_an_address_and_signs_out()
{
    let app = spawn_app().await;
    let driver = start_driver().await;
    let c = browser(&driver).await;
    c.set_window_size(1280, 900).await.unwrap();

    c.goto(&app.url("/")).await.unwrap();
    assert!(c.current_url().await.unwrap().path().ends_with("/login"));
    fill(&c, "input[name=email]", &app.admin_email).await;
    fill(&c, "input[name=password]", &app.admin_password).await;
    click(&c, Locator::Css("button[type=submit]")).await;

    wait_for_text(&c, "Choose your password").await;
    snap(&c, "1-choose-password").await;
    fill(&c, "input[name=current_password]", &app.admin_password).await;
    fill(&c, "input[name=new_password]", "browser-chosen-password").await;
    fill(&c, "input[name=confirm_password]", "browser-chosen-password").await;
    click(&c, Locator::Css("button.primary")).await;

    // An Owner must use two-factor: the portal asks for it before anything else.
    let asked = wait_for_text(&c, "Your role requires two-factor").await;
    assert!(asked.contains("Where you are signed in"), "{asked}");
    click(&c, Locator::XPath("//button[text()='Set up two-factor']")).await;
    wait_for_text(&c, "Scan this code").await;
    assert!(
        c.find(Locator::Css(".qr svg")).await.is_ok(),
        "a QR code is drawn"
    );
    snap(&c, "1b-two-factor-setup").await;
    let key = c
        .find(Locator::Css("code.totp-secret"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    fill(&c, "input[name=code]", "000000").await;
    click(&c, Locator::XPath("//button[text()='Turn on two-factor']")).await;
    wait_for_text(&c, "That code is not right").await;
    let shown_again = c
        .find(Locator::Css("code.totp-secret"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(key, shown_again, "the same key, to try again");
    fill(&c, "input[name=code]", &crate::helpers::current_code(&key)).await;
    click(&c, Locator::XPath("//button[text()='Turn on two-factor']")).await;
    let on = wait_for_text(&c, "Two-factor is on.").await;
    assert_eq!(
        c.find_all(Locator::Css(".recovery-codes li"))
            .await
            .unwrap()
            .len(),
        10,
        "{on}"
    );
    snap(&c, "1c-recovery-codes").await;
    click(&c, Locator::LinkText("Continue to the dashboard")).await;

    let dashboard = wait_for_text(&c, "2.50000000 BTC").await;
    assert!(dashboard.contains("Sandbox — test data"), "{dashboard}");
    snap(&c, "2-dashboard").await;
    // htmx loaded under the CSP (no inline script needed).
    let htmx = c.execute("return typeof window.htmx", vec![]).await.unwrap();
    assert_eq!(htmx, json!("object"));

    click(&c, Locator::LinkText("Addresses")).await;
    wait_for_text(&c, "Generate an address").await;
    select(&c, "select[name=chain]", "ethereum").await;
    fill(&c, "input[name=label]", "from the browser").await;
    click(&c, Locator::XPath("//button[text()='Generate']")).await;
    wait_for_text(&c, "Address generated").await;
    let address = c
        .find(Locator::Css(".address-big code"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(address.starts_with("0x"));

    // The htmx address check swaps its result in without a page load.
    click(&c, Locator::LinkText("← Addresses")).await;
    let list = wait_for_text(&c, &address).await;
    assert!(list.contains("from the browser"));
    let check_form = c
        .find(Locator::Css("form[action='/addresses/validate']"))
        .await
        .unwrap();
    check_form
        .find(Locator::Css("select[name=chain]"))
        .await
        .unwrap()
        .select_by_value("ethereum")
        .await
        .unwrap();
    check_form
        .find(Locator::Css("input[name=address]"))
        .await
        .unwrap()
        .send_keys(&address)
        .await
        .unwrap();
    check_form
        .find(Locator::Css("button"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let result = c
        .wait()
        .for_element(Locator::Css("#validation p"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(result, "Valid ethereum address.");
    snap(&c, "3-addresses").await;

    click(&c, Locator::XPath("//button[text()='Sign out']")).await;
    wait_for_text(&c, "You are signed out.").await;
    c.goto(&app.url("/balances")).await.unwrap();
    wait_for_text(&c, "Sign in").await;
    assert!(c.current_url().await.unwrap().path().ends_with("/login"));
    c.close().await.unwrap();
}

async fn sign_in(c: &Client, app: &crate::helpers::TestApp, email: &str, password: &str) {
    c.goto(&app.url("/login")).await.unwrap();
    fill(c, "input[name=email]", email).await;
    fill(c, "input[name=password]", password).await;
    click(c, Locator::Css("button[type=submit]")).await;
    // Accounts with two-factor are asked for a code next.
    let page = wait_for_any(c, &["Dashboard", "Enter your code"]).await;
    if page.contains("Enter your code") {
        fill(c, "input[name=code]", &app.code_for(email).await).await;
        click(c, Locator::Css("button[type=submit]")).await;
        wait_for_text(c, "Dashboard").await;
    }
}

/// The page's text once it shows one of `expected`.
async fn wait_for_any(c: &Client, expected: &[&str]) -> String {
    let shown = crate::helpers::within(move || async move {
        let text = c.find(Locator::Css("body")).await.ok()?.text().await.ok()?;
        expected.iter().any(|e| text.contains(e)).then_some(text)
    })
    .await;
    match shown {
        Some(text) => text,
        None => {
            let text = match c.find(Locator::Css("body")).await {
                Ok(body) => body.text().await.unwrap_or_default(),
                Err(_) => String::new(),
            };
            panic!("the page never showed any of {expected:?}; it shows:\n{text}")
        }
    }
}

#[tokio::test]
async fn a_maker_files_a_payout_and_a_checker_approves_it_with_a_fresh_code_in_the_browser() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    crate::approvals::members(&app, "Operator", &["maker@example.com".into()]).await;
    crate::approvals::members(&app, "Approver", &["checker@example.com".into()]).await;
    let driver = start_driver().await;
    let maker = browser(&driver).await;
    let checker = browser(&driver).await;
    maker.set_window_size(1280, 900).await.unwrap();
    checker.set_window_size(1280, 900).await.unwrap();

    sign_in(&maker, &app, "maker@example.com", "member-password-123").await;
    maker.goto(&app.url("/payouts/new")).await.unwrap();
    select(&maker, "select[name=country]", "NG").await;
    // Choosing the country loads its banks and reasons (the select submits itself).
    wait_for_text(&maker, "Guaranty Trust Bank").await;
    select(&maker, "select[name=from_asset]", "USDT").await;
    fill(&maker, "input[name=amount]", "25").await;
    select(&maker, "select[name=bank_code]", "058").await;
    fill(&maker, "input[name=account_number]", "0123456789").await;
    // The bank's name for the account comes back while the maker types
    // (the country picker's own field is not sent beside the form's).
    wait_for_text(&maker, "Account holder at the bank").await;
    fill(&maker, "input[name=account_name]", "Ada Okafor").await;
    fill(&maker, "input[name=payment_reason]", "salary").await;
    click(&maker, Locator::XPath("//button[text()='Request approval']")).await;
    let filed = wait_for_text(&maker, "What is approved").await;
    assert!(filed.contains("37500") && filed.contains("Pending"), "{filed}");
    snap(&maker, "4-payout-request").await;

    sign_in(&checker, &app, "checker@example.com", "member-password-123").await;
    wait_for_text(&checker, "1 request waits for your approval").await;
    checker.goto(&app.url("/approvals")).await.unwrap();
    checker
        .find(Locator::XPath("//a[starts-with(text(), 'Pay 25 USDT')]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_for_text(&checker, "Your decision").await;
    fill(&checker, "textarea[name=comment]", "checked the invoice").await;
    // The checker's last code is over five minutes old: approving asks again.
    app.change_behind_the_portal(sqlx::query(
        "UPDATE sessions SET verified_at = now() - interval '10 minutes' \
         WHERE user_id = (SELECT id FROM users WHERE email = 'checker@example.com')",
    ))
    .await;
    click(&checker, Locator::XPath("//button[text()='Approve…']")).await;
    let confirm = wait_for_text(&checker, "Confirm your approval").await;
    assert!(confirm.contains("Code from your authenticator app"), "{confirm}");
    fill(&checker, "input[name=code]", "123456").await;
    click(&checker, Locator::XPath("//button[text()='Confirm approval']")).await;
    wait_for_text(&checker, "That code is not right").await;
    let pending: String = sqlx::query_scalar("SELECT status::text FROM action_requests")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(pending, "pending", "a wrong code approves nothing");
    fill(
        &checker,
        "input[name=code]",
        &app.code_for("checker@example.com").await,
    )
    .await;
    snap(&checker, "4b-step-up").await;
    click(&checker, Locator::XPath("//button[text()='Confirm approval']")).await;
    // The page follows the request live: the payout is finalized and on
    // the rail until it settles.
    let done = wait_for_text(&checker, "payout PENDING").await;
    assert!(
        done.contains("executing") && done.contains("checked the invoice"),
        "{done}"
    );
    snap(&checker, "5-payout-executed").await;

    maker.refresh().await.unwrap();
    wait_for_text(&maker, "executing").await;
    maker.close().await.unwrap();
    checker.close().await.unwrap();
}

#[tokio::test]
async fn a_card_termination_is_requested_and_approved_by_another_member_in_the_browser() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    crate::approvals::members(&app, "Operator", &["maker@example.com".into()]).await;
    crate::approvals::members(&app, "Approver", &["checker@example.com".into()]).await;
    let sandbox = app.sandbox().await;
    let ada = crate::cards::approved_customer(&sandbox, "ada@example.com").await;
    let id = crate::cards::issue_card(&app, &ada, "12").await;
    sandbox.sandbox_advance_clock(30).await.unwrap();

    let driver = start_driver().await;
    let maker = browser(&driver).await;
    let checker = browser(&driver).await;
    maker.set_window_size(1280, 1000).await.unwrap();
    checker.set_window_size(1280, 1000).await.unwrap();

    sign_in(&maker, &app, "maker@example.com", "member-password-123").await;
    maker.goto(&app.url(&format!("/customers/{ada}"))).await.unwrap();
    wait_for_text(&maker, "approved").await;
    snap(&maker, "8-customer").await;
    maker.goto(&app.url("/cards/new")).await.unwrap();
    wait_for_text(&maker, "Issue a card").await;
    snap(&maker, "9-new-card").await;

    // Under 24 hours the card page says when termination opens.
    maker.goto(&app.url(&format!("/cards/{id}"))).await.unwrap();
    let page = wait_for_text(&maker, "12.00 USD").await;
    assert!(page.contains("24 hours after it was issued"), "{page}");
    snap(&maker, "6-card").await;

    sandbox.sandbox_advance_clock(24 * 3600).await.unwrap();
    maker.refresh().await.unwrap();
    wait_for_text(&maker, "Request termination").await;
    fill(&maker, "input[name=reason]", "card lost by the customer").await;
    click(&maker, Locator::XPath("//button[text()='Request termination']")).await;
    let filed = wait_for_text(&maker, "What is approved").await;
    assert!(
        filed.contains("Pending") && filed.contains("card lost by the customer"),
        "{filed}"
    );

    sign_in(&checker, &app, "checker@example.com", "member-password-123").await;
    checker.goto(&app.url("/approvals")).await.unwrap();
    click(
        &checker,
        Locator::XPath("//a[starts-with(text(), 'Terminate card')]"),
    )
    .await;
    wait_for_text(&checker, "Your decision").await;
    click(&checker, Locator::XPath("//button[text()='Approve…']")).await;
    wait_for_text(&checker, "Confirm your approval").await;
    click(&checker, Locator::XPath("//button[text()='Confirm approval']")).await;
    wait_for_text(&checker, "12.00 USD returned to the wallet").await;
    // The page follows the request until it ends.
    wait_for_text(&checker, "Executed").await;
    snap(&checker, "7-termination-executed").await;
    assert_eq!(sandbox.card(&id).await.unwrap().status.as_str(), "terminated");

    checker.goto(&app.url(&format!("/cards/{id}"))).await.unwrap();
    wait_for_text(&checker, "Terminated").await;
    maker.close().await.unwrap();
    checker.close().await.unwrap();
}

#[tokio::test]
async fn an_operator_files_a_withdrawal_an_approver_approves_it_and_it_settles_live_in_the_browser() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    crate::approvals::members(&app, "Operator", &["maker@example.com".into()]).await;
    crate::approvals::members(&app, "Approver", &["checker@example.com".into()]).await;
    let driver = start_driver().await;
    let maker = browser(&driver).await;
    let checker = browser(&driver).await;
    maker.set_window_size(1280, 1000).await.unwrap();
    checker.set_window_size(1280, 1000).await.unwrap();

    sign_in(&maker, &app, "maker@example.com", "member-password-123").await;
    maker.goto(&app.url("/withdrawals/new")).await.unwrap();
    wait_for_text(&maker, "New on-chain withdrawal").await;
    select(&maker, "select[name=chain]", "ethereum").await;
    select(&maker, "select[name=currency]", "USDT").await;
    fill(
        &maker,
        "input[name=to_address]",
        "0x52908400098527886E0F7030069857D2E4169EE7",
    )
    .await;
    fill(&maker, "input[name=amount]", "40").await;
    click(&maker, Locator::XPath("//button[text()='Review the withdrawal']")).await;
    let review = wait_for_text(&maker, "Check what will happen").await;
    assert!(
        review.contains("40.000000 USDT on ethereum") && review.contains("Network fee"),
        "{review}"
    );
    snap(&maker, "10-withdrawal-confirm").await;
    click(&maker, Locator::XPath("//button[text()='Request approval']")).await;
    let filed = wait_for_text(&maker, "What is approved").await;
    assert!(filed.contains("Pending"), "{filed}");

    sign_in(&checker, &app, "checker@example.com", "member-password-123").await;
    checker.goto(&app.url("/approvals")).await.unwrap();
    click(
        &checker,
        Locator::XPath("//a[starts-with(text(), 'Withdraw 40.000000 USDT')]"),
    )
    .await;
    wait_for_text(&checker, "Your decision").await;
    click(&checker, Locator::XPath("//button[text()='Approve…']")).await;
    wait_for_text(&checker, "Confirm your approval").await;
    click(&checker, Locator::XPath("//button[text()='Confirm approval']")).await;
    wait_for_text(&checker, "executing").await;

    // The withdrawal's page follows it on chain without a reload.
    maker.goto(&app.url("/withdrawals")).await.unwrap();
    wait_for_text(&maker, "newest first").await;
    click(
        &maker,
        Locator::XPath("//td/a[starts-with(@href, '/withdrawals/')]"),
    )
    .await;
    wait_for_text(&maker, "this updates by itself").await;
    app.sandbox().await.sandbox_advance_clock(300).await.unwrap();
    let settled = wait_for_text(&maker, "View on the explorer").await;
    assert!(settled.contains("Completed"), "{settled}");
    snap(&maker, "11-withdrawal-completed").await;
    maker.close().await.unwrap();
    checker.close().await.unwrap();
}

/// The maker files a payout funded by a deposit on Tron; once approved,
/// the request's page shows the address to pay (QR code, copy button) and
/// follows the payout without a reload when the deposit arrives.
#[tokio::test]
async fn an_onchain_payout_shows_its_deposit_address_and_goes_on_live_when_it_arrives_in_the_browser() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    crate::approvals::members(&app, "Operator", &["maker@example.com".into()]).await;
    let approver = crate::approvals::members(&app, "Approver", &["checker@example.com".into()])
        .await
        .remove(0);
    let driver = start_driver().await;
    let maker = browser(&driver).await;
    maker.set_window_size(1280, 1100).await.unwrap();

    sign_in(&maker, &app, "maker@example.com", "member-password-123").await;
    maker.goto(&app.url("/payouts/new")).await.unwrap();
    select(&maker, "select[name=country]", "NG").await;
    wait_for_text(&maker, "Guaranty Trust Bank").await;
    select(&maker, "select[name=from_asset]", "USDT").await;
    click(&maker, Locator::Css("input[name=source][value=onchain]")).await;
    select(&maker, "select[name=chain]", "TRON").await;
    fill(&maker, "input[name=amount]", "10").await;
    select(&maker, "select[name=bank_code]", "058").await;
    fill(&maker, "input[name=account_number]", "0123456789").await;
    fill(&maker, "input[name=account_name]", "Ada Okafor").await;
    fill(&maker, "input[name=payment_reason]", "salary").await;
    snap(&maker, "12-onchain-payout-form").await;
    click(&maker, Locator::XPath("//button[text()='Request approval']")).await;
    let filed = wait_for_text(&maker, "What is approved").await;
    assert!(filed.contains("an onchain deposit on Tron"), "{filed}");
    let url = maker.current_url().await.unwrap();
    let id = url.path().trim_start_matches("/approvals/").to_owned();

    crate::approvals::approve(&approver, &id).await;
    maker.refresh().await.unwrap();
    let waiting = wait_for_text(&maker, "Waiting for the deposit").await;
    assert!(waiting.contains("Send exactly 10.1 USDT on Tron"), "{waiting}");
    let address = maker
        .find(Locator::Css("#awaited-deposit .address-big code"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(address.starts_with('T'), "a Tron address: {address}");
    maker
        .find(Locator::Css("#awaited-deposit .qr svg"))
        .await
        .expect("a QR code of the address");
    maker
        .find(Locator::Css(&format!(
            "#awaited-deposit button[data-copy='{address}']"
        )))
        .await
        .expect("a copy button for the address");
    snap(&maker, "13-onchain-payout-waiting").await;

    let sandbox = app.sandbox().await;
    sandbox
        .sandbox_deposit(&paydesk_api::models::control::SimulateDeposit {
            chain: "tron".into(),
            address,
            currency: "USDT".into(),
            amount: paydesk_api::units::BaseUnits(10_100_000),
        })
        .await
        .unwrap();
    sandbox.sandbox_advance_clock(60).await.unwrap();
    let paid = wait_for_text(&maker, "payout PENDING").await;
    assert!(!paid.contains("Send exactly"), "{paid}");
    snap(&maker, "14-onchain-payout-finalized").await;
    maker.close().await.unwrap();
}

#[tokio::test]
async fn a_trader_gets_a_quote_and_places_an_order_from_it_in_the_browser() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    crate::approvals::members(&app, "Operator", &["trader@example.com".into()]).await;
    let driver = start_driver().await;
    let trader = browser(&driver).await;
    trader.set_window_size(1280, 900).await.unwrap();
    sign_in(&trader, &app, "trader@example.com", "member-password-123").await;
    trader.goto(&app.url("/trading")).await.unwrap();
    select(&trader, "select[name=pair]", "BTC/USDT").await;
    select(&trader, "select[name=side]", "buy").await;
    fill(&trader, "input[name=quantity]", "0.002").await;
    click(&trader, Locator::XPath("//button[text()='Get a quote']")).await;
    // The quote comes in place, with its countdown running.
    let quoted = wait_for_text(&trader, "Expires").await;
    assert!(
        quoted.contains("You receive") && quoted.contains("0.002 BTC"),
        "{quoted}"
    );
    snap(&trader, "6-trading-quote").await;
    click(&trader, Locator::XPath("//button[text()='Place order…']")).await;
    wait_for_text(&trader, "Send").await;
    click(&trader, Locator::Css("button.primary")).await;
    let placed = wait_for_text(&trader, "Order placed.").await;
    assert!(placed.contains("Filled") && placed.contains("Fills"), "{placed}");
    snap(&trader, "7-trading-order").await;
    trader.close().await.unwrap();
}

#[tokio::test]
async fn a_dca_schedule_ticks_after_a_day_moved_in_sandbox_tools_in_the_browser() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let driver = start_driver().await;
    let c = browser(&driver).await;
    c.set_window_size(1280, 900).await.unwrap();
    let password = app.admin_password.clone();
    sign_in(&c, &app, &app.admin_email, &password).await;

    c.goto(&app.url("/trading/scheduled")).await.unwrap();
    select(&c, "select[name=currency]", "BTC").await;
    select(&c, "select[name=quote_currency]", "USDT").await;
    fill(&c, "input[name=amount]", "20").await;
    select(&c, "select[name=frequency]", "daily").await;
    fill(&c, "input[name=execution_time]", "00:30").await;
    click(&c, Locator::XPath("//button[text()='Create schedule…']")).await;
    wait_for_text(&c, "daily at 00:30 UTC").await;
    click(&c, Locator::Css("button.primary")).await;
    let created = wait_for_text(&c, "Schedule created.").await;
    assert!(created.contains("No buys yet"), "{created}");
    let schedule = c.current_url().await.unwrap();

    c.goto(&app.url("/sandbox-tools")).await.unwrap();
    click(&c, Locator::XPath("//button[contains(text(), '1 day')]")).await;
    wait_for_text(&c, "moved forward 1 day").await;
    c.goto(schedule.as_str()).await.unwrap();
    let ticked = wait_for_text(&c, "Completed").await;
    assert!(
        ticked.contains("20 USDT") && !ticked.contains("No buys yet"),
        "{ticked}"
    );
    snap(&c, "8-dca-ticked").await;
    c.close().await.unwrap();
}

#[tokio::test]
async fn an_invoice_created_in_the_browser_turns_paid_when_sandbox_tools_pay_it() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    crate::approvals::members(&app, "Operator", &["ln-seller@example.com".into()]).await;
    let driver = start_driver().await;
    let seller = browser(&driver).await;
    let admin = browser(&driver).await;
    seller.set_window_size(1280, 900).await.unwrap();
    admin.set_window_size(1280, 900).await.unwrap();
    sign_in(&seller, &app, "ln-seller@example.com", "member-password-123").await;
    seller.goto(&app.url("/lightning")).await.unwrap();
    click(&seller, Locator::XPath("//a[text()='Create an invoice']")).await;
    fill(&seller, "input[name=amount]", "21000").await;
    fill(&seller, "input[name=description]", "Coffee beans").await;
    click(&seller, Locator::XPath("//button[text()='Create invoice']")).await;
    let created = wait_for_text(&seller, "Invoice created.").await;
    assert!(
        created.contains("waiting for the payer") && created.contains("Expires in"),
        "{created}"
    );
    let request = seller
        .find(Locator::Css("input.bolt11"))
        .await
        .unwrap()
        .prop("value")
        .await
        .unwrap()
        .unwrap();
    assert!(request.starts_with("lntbs"), "{request}");
    let copy = seller
        .find(Locator::Css("button.copy"))
        .await
        .unwrap()
        .attr("data-copy")
        .await
        .unwrap();
    assert_eq!(
        copy.as_deref(),
        Some(request.as_str()),
        "the copy button copies the request"
    );
    snap(&seller, "9-lightning-invoice").await;

    // An admin pays it from Sandbox tools; the seller's page follows
    // without a reload.
    let password = app.admin_password.clone();
    sign_in(&admin, &app, &app.admin_email, &password).await;
    admin.goto(&app.url("/sandbox-tools")).await.unwrap();
    fill(&admin, "input[name=request]", &request).await;
    click(&admin, Locator::XPath("//button[text()='Pay it']")).await;
    wait_for_text(&admin, "An outside payer paid the invoice (21000 sats)").await;
    let shown = wait_for_text(&seller, "Preimage").await;
    assert!(
        shown.contains("Paid") && !shown.contains("waiting for the payer"),
        "{shown}"
    );
    snap(&seller, "10-lightning-paid").await;
    seller.close().await.unwrap();
    admin.close().await.unwrap();
}

#[tokio::test]
async fn an_operator_pays_another_companys_invoice_after_an_approver_approves_in_the_browser() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let (_sandbox, payee) = crate::lightning::two_companies(&app).await;
    let invoice = payee
        .create_invoice(&paydesk_api::models::lightning::NewInvoice {
            amount: paydesk_api::units::Sats(5_000_000),
            description: "Supplier invoice 7".into(),
            reference: "supplier-7".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    crate::approvals::members(&app, "Operator", &["ln-maker@example.com".into()]).await;
    crate::approvals::members(&app, "Approver", &["ln-checker@example.com".into()]).await;
    let driver = start_driver().await;
    let maker = browser(&driver).await;
    let checker = browser(&driver).await;
    maker.set_window_size(1280, 1000).await.unwrap();
    checker.set_window_size(1280, 1000).await.unwrap();

    sign_in(&maker, &app, "ln-maker@example.com", "member-password-123").await;
    maker.goto(&app.url("/lightning/pay")).await.unwrap();
    fill(&maker, "textarea[name=request]", &invoice.request).await;
    click(&maker, Locator::XPath("//button[text()='Check it']")).await;
    let checked = wait_for_text(&maker, "What paying it does").await;
    // Fee: 1 sat + 0.1% of 5,000,000; this much waits for an approver.
    assert!(
        checked.contains("5000000 sats")
            && checked.contains("Supplier invoice 7")
            && checked.contains("5001 sats"),
        "{checked}"
    );
    click(&maker, Locator::XPath("//button[text()='Pay…']")).await;
    let review = wait_for_text(&maker, "Fee at most").await;
    assert!(review.contains("5000000"), "{review}");
    snap(&maker, "14-lightning-pay-confirm").await;
    click(&maker, Locator::Css("button.primary")).await;
    wait_for_text(&maker, "What is approved").await;
    assert_eq!(
        payee
            .invoice(&invoice.id.to_string())
            .await
            .unwrap()
            .status
            .as_str(),
        "pending",
        "nothing is paid before approval"
    );

    sign_in(&checker, &app, "ln-checker@example.com", "member-password-123").await;
    checker.goto(&app.url("/approvals")).await.unwrap();
    click(&checker, Locator::XPath("//a[contains(text(), '5000000 sats')]")).await;
    wait_for_text(&checker, "Your decision").await;
    click(&checker, Locator::XPath("//button[text()='Approve…']")).await;
    wait_for_text(&checker, "Confirm your approval").await;
    click(&checker, Locator::XPath("//button[text()='Confirm approval']")).await;
    wait_for_text(&checker, "Executed").await;
    let paid = payee.invoice(&invoice.id.to_string()).await.unwrap();
    assert_eq!(paid.status.as_str(), "paid");

    maker
        .goto(&app.url("/lightning?direction=outgoing"))
        .await
        .unwrap();
    click(
        &maker,
        Locator::XPath("//td/a[starts-with(@href, '/lightning/invoices/')]"),
    )
    .await;
    let shown = wait_for_text(&maker, &paid.preimage).await;
    assert!(shown.contains("Paid"), "{shown}");
    snap(&maker, "15-lightning-paid-out").await;
    maker.close().await.unwrap();
    checker.close().await.unwrap();
}

#[tokio::test]
async fn an_operator_files_a_bulk_transfer_an_approver_approves_it_and_its_items_settle_live_in_the_browser()
{
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    crate::approvals::members(&app, "Operator", &["maker@example.com".into()]).await;
    crate::approvals::members(&app, "Approver", &["checker@example.com".into()]).await;
    let driver = start_driver().await;
    let maker = browser(&driver).await;
    let checker = browser(&driver).await;
    maker.set_window_size(1280, 1000).await.unwrap();
    checker.set_window_size(1280, 1000).await.unwrap();

    sign_in(&maker, &app, "maker@example.com", "member-password-123").await;
    maker.goto(&app.url("/bulk-transfers")).await.unwrap();
    wait_for_text(&maker, "Send a batch").await;
    let address = "0x52908400098527886e0f7030069857d2e4169ee7";
    // Row 2 has a mistyped address: the whole file is refused, naming it,
    // and comes back as typed.
    let typo = "0x52908400098527886e0f7030069857d2e4169ee";
    let bad = format!(
        "asset,chain,address,amount,reference\nUSDT,ethereum,{address},12,salary-1\nUSDT,ethereum,{typo},3.5,salary-2\n"
    );
    fill(&maker, "textarea[name=csv]", &bad).await;
    click(
        &maker,
        Locator::XPath("//button[text()='Check and review the batch']"),
    )
    .await;
    let refused = wait_for_text(&maker, "Row 2: ").await;
    assert!(!refused.contains("Check what will happen"), "{refused}");
    let kept = maker
        .find(Locator::Css("textarea[name=csv]"))
        .await
        .unwrap()
        .prop("value")
        .await
        .unwrap()
        .unwrap();
    assert!(kept.contains("salary-1"), "the rows are kept: {kept}");
    snap(&maker, "12-bulk-refused-row").await;
    let csv = kept
        .replace(typo, address)
        .replace(&format!("{address}7"), address);
    fill(&maker, "textarea[name=csv]", &csv).await;
    click(
        &maker,
        Locator::XPath("//button[text()='Check and review the batch']"),
    )
    .await;
    let review = wait_for_text(&maker, "Check what will happen").await;
    assert!(
        review.contains("15.500000 USDT") && review.contains("Network fees"),
        "{review}"
    );
    snap(&maker, "13-bulk-confirm").await;
    click(&maker, Locator::XPath("//button[text()='Request approval']")).await;
    wait_for_text(&maker, "What is approved").await;

    sign_in(&checker, &app, "checker@example.com", "member-password-123").await;
    checker.goto(&app.url("/approvals")).await.unwrap();
    click(
        &checker,
        Locator::XPath("//a[starts-with(text(), 'Bulk transfer: 2 payments')]"),
    )
    .await;
    wait_for_text(&checker, "Your decision").await;
    click(&checker, Locator::XPath("//button[text()='Approve…']")).await;
    wait_for_text(&checker, "Confirm your approval").await;
    click(&checker, Locator::XPath("//button[text()='Confirm approval']")).await;
    wait_for_text(&checker, "Executed").await;

    // The batch's page follows its items without a reload.
    maker.goto(&app.url("/bulk-transfers")).await.unwrap();
    click(
        &maker,
        Locator::XPath("//td/a[starts-with(@href, '/bulk-transfers/')]"),
    )
    .await;
    wait_for_text(&maker, "this updates by itself").await;
    app.sandbox().await.sandbox_advance_clock(300).await.unwrap();
    let settled = wait_for_text(&maker, "Completed").await;
    assert!(settled.contains("salary-2"), "{settled}");
    snap(&maker, "13-bulk-settled").await;
    maker.close().await.unwrap();
    checker.close().await.unwrap();
}

/// One day of each role: the operator files a payout; the approver sees it
/// in the menu's live badge and approves it; the auditor reads the log and
/// exports it; the viewer reads balances, a statement and the search.
/// Every page at desktop and phone widths is kept as a screenshot.
#[tokio::test]
async fn each_role_walks_through_a_day_in_the_browser() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    for (role, email) in [
        ("Operator", "operator-day@example.com"),
        ("Approver", "approver-day@example.com"),
        ("Auditor", "auditor-day@example.com"),
        ("Viewer", "viewer-day@example.com"),
    ] {
        crate::approvals::members(&app, role, &[email.into()]).await;
    }
    let driver = start_driver().await;

    // The operator files a payout from the menu.
    let operator = browser(&driver).await;
    operator.set_window_size(1280, 900).await.unwrap();
    sign_in(&operator, &app, "operator-day@example.com", "member-password-123").await;
    snap_both(&operator, "day-1-operator-dashboard").await;
    click(&operator, Locator::XPath("//nav//a[text()='Payouts']")).await;
    operator.goto(&app.url("/payouts/new")).await.unwrap();
    select(&operator, "select[name=country]", "NG").await;
    wait_for_text(&operator, "Guaranty Trust Bank").await;
    select(&operator, "select[name=from_asset]", "USDT").await;
    fill(&operator, "input[name=amount]", "1250").await;
    select(&operator, "select[name=bank_code]", "058").await;
    fill(&operator, "input[name=account_number]", "0123456789").await;
    fill(&operator, "input[name=account_name]", "Ada Okafor").await;
    fill(&operator, "input[name=payment_reason]", "supplier invoice").await;
    snap_both(&operator, "day-2-operator-payout-form").await;
    click(&operator, Locator::XPath("//button[text()='Request approval']")).await;
    let filed = wait_for_text(&operator, "What is approved").await;
    assert!(filed.contains("Pending"), "{filed}");
    snap_both(&operator, "day-3-operator-request").await;

    // The approver's menu badge counts it without a reload; they approve.
    let approver = browser(&driver).await;
    approver.set_window_size(1280, 900).await.unwrap();
    sign_in(&approver, &app, "approver-day@example.com", "member-password-123").await;
    let badge = approver
        .wait()
        .for_element(Locator::Css("nav .badge"))
        .await
        .unwrap();
    assert_eq!(badge.text().await.unwrap(), "1");
    snap_both(&approver, "day-4-approver-badge").await;
    click(
        &approver,
        Locator::XPath("//nav//a[starts-with(text(), 'Approvals')]"),
    )
    .await;
    click(
        &approver,
        Locator::XPath("//a[starts-with(text(), 'Pay 1250 USDT')]"),
    )
    .await;
    wait_for_text(&approver, "Your decision").await;
    click(&approver, Locator::XPath("//button[text()='Approve…']")).await;
    wait_for_text(&approver, "Confirm your approval").await;
    click(&approver, Locator::XPath("//button[text()='Confirm approval']")).await;
    wait_for_any(&approver, &["Executing", "Executed"]).await;
    snap_both(&approver, "day-5-approver-approved").await;
    approver.goto(&app.url("/")).await.unwrap();
    wait_for_text(&approver, "0 requests wait for your approval").await;

    // The auditor reads the day in the log and exports it.
    let auditor = browser(&driver).await;
    auditor.set_window_size(1280, 900).await.unwrap();
    sign_in(&auditor, &app, "auditor-day@example.com", "member-password-123").await;
    click(&auditor, Locator::XPath("//nav//a[text()='Audit log']")).await;
    let log = wait_for_text(&auditor, "approvals.").await;
    assert!(log.contains("operator-day@example.com"), "{log}");
    snap_both(&auditor, "day-6-auditor-log").await;
    let export = auditor
        .find(Locator::XPath("//a[text()='Export CSV']"))
        .await
        .unwrap()
        .attr("href")
        .await
        .unwrap()
        .unwrap();
    assert!(export.starts_with("/audit/export.csv"), "{export}");

    // The viewer reads balances, this month's statement and a search.
    let viewer = browser(&driver).await;
    viewer.set_window_size(1280, 900).await.unwrap();
    sign_in(&viewer, &app, "viewer-day@example.com", "member-password-123").await;
    click(&viewer, Locator::XPath("//nav//a[text()='Balances']")).await;
    wait_for_text(&viewer, "10,000.000000 USDC").await;
    snap_both(&viewer, "day-7-viewer-balances").await;
    click(&viewer, Locator::XPath("//nav//a[text()='Statements']")).await;
    let statement = wait_for_text(&viewer, "Closing balance").await;
    assert!(statement.contains("Opening balance"), "{statement}");
    snap_both(&viewer, "day-8-viewer-statement").await;
    fill(&viewer, "#search-box", "OPENING_USDT\n").await;
    wait_for_text(&viewer, "1 match for").await;
    snap_both(&viewer, "day-9-viewer-search").await;
    assert!(
        viewer
            .find_all(Locator::XPath("//nav//a[text()='Members']"))
            .await
            .unwrap()
            .is_empty(),
        "a viewer's menu has no admin pages"
    );

    for c in [operator, approver, auditor, viewer] {
        c.close().await.unwrap();
    }
}

/// The visual pass: every page of the route table (filled with one of
/// everything), as an owner sees it, at desktop and phone widths, kept as
/// screenshots. No page fails, widens past a phone's width, or lacks a
/// heading; numbers in tables are right-aligned.
#[tokio::test]
async fn every_page_looks_finished_at_desktop_and_phone_widths() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let a = crate::isolation::populate_a(&app).await;
    crate::approvals::members(&app, "Owner", &["owner-look@example.com".into()]).await;
    let driver = start_driver().await;
    let c = browser(&driver).await;
    c.set_window_size(1280, 900).await.unwrap();
    sign_in(&c, &app, "owner-look@example.com", "member-password-123").await;
    let (mut seen, mut wide) = (0, Vec::new());
    for (method, template, _) in crate::isolation::ROUTES {
        let path = crate::isolation::fill(template, &a);
        // Downloads and the live parts pages poll are not pages to look at.
        let part = [
            ".csv", ".json", "/live", "/waiting", "/check", "/lookup", "/convert", "/logout",
        ]
        .iter()
        .any(|p| path.contains(p));
        if *method != "GET" || part {
            continue;
        }
        c.goto(&app.url(&path)).await.unwrap();
        let shape = c
            .execute(
                "return [document.contentType, !!document.querySelector('nav'), !!document.querySelector('main h1'),
                         [...document.querySelectorAll('td.num')].every(td => getComputedStyle(td).textAlign === 'right')];",
                vec![],
            )
            .await
            .unwrap();
        if shape[0] != json!("text/html") || shape[1] != json!(true) {
            continue;
        }
        let text = c.find(Locator::Css("body")).await.unwrap().text().await.unwrap();
        assert!(!text.contains("Something went wrong"), "{path}: {text}");
        assert_eq!(shape[2], json!(true), "{path} has a heading");
        assert_eq!(shape[3], json!(true), "{path} right-aligns its numbers");
        let name = template
            .trim_start_matches('/')
            .replace(['/', '?', '=', '&', '{', '}'], "-");
        snap(&c, &format!("look-{name}-desktop")).await;
        c.set_window_size(390, 844).await.unwrap();
        snap(&c, &format!("look-{name}-narrow")).await;
        let overflow = overflowing(&c).await;
        if overflow != json!([]) {
            wide.push(format!("{path}: {overflow}"));
        }
        c.set_window_size(1280, 900).await.unwrap();
        seen += 1;
    }
    assert!(seen > 40, "looked at {seen} pages");
    assert!(wide.is_empty(), "pages wider than a phone:\n{}", wide.join("\n"));
}

/// Opens the request whose summary starts `summary` from the inbox and
/// approves it, confirming (with a code if the page asks for one).
async fn approve_from_inbox(c: &Client, app: &crate::helpers::TestApp, email: &str, summary: &str) {
    c.goto(&app.url("/approvals")).await.unwrap();
    wait_for_text(c, summary).await;
    click(
        c,
        Locator::XPath(&format!("//a[starts-with(text(), '{summary}')]")),
    )
    .await;
    wait_for_text(c, "Your decision").await;
    click(c, Locator::XPath("//button[text()='Approve…']")).await;
    let confirm = wait_for_text(c, "Confirm your approval").await;
    if confirm.contains("Code from your authenticator app") {
        fill(c, "input[name=code]", &app.code_for(email).await).await;
    }
    click(c, Locator::XPath("//button[text()='Confirm approval']")).await;
}

/// The honest team: the Owner invites an operator and an approver, the
/// second admin (vouched for by the platform) approves both invitations,
/// the operator files a payout, the approver approves it and it runs once;
/// then the Owner's own payout is approved by the approver the second
/// admin confirmed.
#[tokio::test]
async fn an_owner_invites_a_team_a_second_admin_confirms_it_and_its_payouts_run_in_the_browser() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    crate::approvals::members(&app, "Admin", &["second-admin@example.com".into()]).await;
    let driver = start_driver().await;
    let owner = browser(&driver).await;
    let second = browser(&driver).await;
    owner.set_window_size(1280, 900).await.unwrap();
    second.set_window_size(1280, 900).await.unwrap();

    sign_in(
        &owner,
        &app,
        &app.admin_email.clone(),
        &app.admin_password.clone(),
    )
    .await;
    for (email, role) in [
        ("ops@example.com", "Operator"),
        ("checks@example.com", "Approver"),
    ] {
        owner.goto(&app.url("/members")).await.unwrap();
        fill(&owner, "input[name=email]", email).await;
        let role = crate::access::role_id(&app, role).await;
        select(&owner, "form[action='/members'] select[name=role_id]", &role).await;
        click(&owner, Locator::XPath("//button[text()='Send the invitation']")).await;
        let page = wait_for_text(&owner, "waits for a second admin").await;
        assert!(page.contains("Pending changes"), "{page}");
    }
    snap(&owner, "6-invitations-waiting").await;

    sign_in(&second, &app, "second-admin@example.com", "member-password-123").await;
    for email in ["ops@example.com", "checks@example.com"] {
        approve_from_inbox(
            &second,
            &app,
            "second-admin@example.com",
            &format!("Invite {email}"),
        )
        .await;
        wait_for_text(&second, "An invitation is on its way").await;
    }
    let operator = crate::access::accept_invitation(&app, "ops@example.com", "ops-harbour-lantern-7").await;
    crate::access::accept_invitation(&app, "checks@example.com", "checks-meadow-copper-3").await;
    let unconfirmed: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM access_grants WHERE granted_by IS NOT NULL AND confirmed_by IS NULL",
    )
    .fetch_one(&app.pool)
    .await
    .unwrap();
    assert_eq!(
        unconfirmed, 0,
        "the second admin's approvals confirmed both memberships"
    );

    let checker = browser(&driver).await;
    checker.set_window_size(1280, 900).await.unwrap();
    sign_in(&checker, &app, "checks@example.com", "checks-meadow-copper-3").await;
    let res = crate::approvals::file_payout(&operator, "0123456789", "25").await;
    assert_eq!(res.status().as_u16(), 303);
    let id = crate::approvals::request_id(&res);
    approve_from_inbox(&checker, &app, "checks@example.com", "Pay 25 USDT").await;
    wait_for_text(&checker, "executing").await;
    snap(&checker, "7-team-payout-approved").await;

    // The Owner's own payout: the approver the second admin confirmed is
    // independent of the Owner, so it is filed and approved like any other.
    let res = crate::approvals::file_payout(&app, "0123456788", "30").await;
    assert_eq!(res.status().as_u16(), 303, "{}", res.text().await.unwrap());
    let own = crate::approvals::request_id(&res);
    approve_from_inbox(&checker, &app, "checks@example.com", "Pay 30 USDT").await;
    wait_for_text(&checker, "executing").await;
    let initialized: Vec<String> = app
        .sandbox()
        .await
        .sandbox_requests(None)
        .await
        .unwrap()
        .requests
        .into_iter()
        .filter(|r| r.method == "POST" && r.path.ends_with("/initialize") && r.status < 300)
        .map(|r| r.path)
        .collect();
    assert_eq!(initialized.len(), 2, "each payout ran once: {initialized:?}");
    for request in [id, own] {
        let approvals: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM approval_decisions WHERE request_id = $1::uuid AND decision = 'approve'",
        )
        .bind(&request)
        .fetch_one(&app.pool)
        .await
        .unwrap();
        assert_eq!(approvals, 1);
    }
    owner.close().await.unwrap();
    second.close().await.unwrap();
    checker.close().await.unwrap();
}
