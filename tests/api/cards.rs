//! Customers and cards through the portal, against the built-in sandbox
//! with its clock advanced: KYC, issuing (with the rules checked before the
//! call), provisioning, funding with its pending state and rate limit,
//! freezing, limits, revealing details (never stored or logged), and
//! termination under approval.

use paydesk_api::models::cards::{CardQuery, NewCard};
use paydesk_api::models::customers::{KycDetails, NewCustomer};
use paydesk_api::units::MicroUnits;
use paydesk_api::Client;

use crate::approvals::{approve, members, request_id, wait_for_status};
use crate::helpers::{captured_logs, location, spawn_app, TestApp};

pub fn kyc(id_number: &str) -> KycDetails {
    KycDetails {
        country: "NGA".into(),
        date_of_birth: "1990-04-01".into(),
        id_type: "national_id".into(),
        id_number: id_number.into(),
        dial_code: "+234".into(),
        phone_number: "8012345678".into(),
        line1: "1 Marina".into(),
        city: "Lagos".into(),
        state: "Lagos".into(),
        postal_code: "100001".into(),
    }
}

/// A customer of the demo company with approved card KYC.
pub async fn approved_customer(sandbox: &Client, email: &str) -> String {
    let id = sandbox
        .create_customer(&NewCustomer {
            email: email.into(),
            customer_type: "individual".into(),
            first_name: Some("Ada".into()),
            last_name: Some("Okafor".into()),
            ..NewCustomer::default()
        })
        .await
        .unwrap()
        .id
        .to_string();
    sandbox.submit_card_kyc(&id, &kyc("A1234567")).await.unwrap();
    sandbox.sandbox_advance_clock(60).await.unwrap();
    id
}

/// The reference a form fixes when it is shown (`name="reference"`).
pub async fn form_reference(app: &TestApp, page: &str) -> String {
    let body = app.get_html(page).await;
    body.split("name=\"reference\" value=\"")
        .nth(1)
        .expect("the form has a reference")
        .split('"')
        .next()
        .unwrap()
        .to_owned()
}

/// Posts a money-moving form as a member would: first the form, which
/// answers with the confirmation page (checked for `shown`), then the
/// confirmation.
pub async fn confirm(
    app: &TestApp,
    page: &str,
    action: &str,
    fields: &[(&str, &str)],
    shown: &str,
) -> reqwest::Response {
    let res = app.post_form(page, action, fields).await;
    assert_eq!(res.status().as_u16(), 200);
    let body = res.text().await.unwrap();
    assert!(
        body.contains(shown) && body.contains("name=\"confirmed\""),
        "{body}"
    );
    let mut confirmed = fields.to_vec();
    confirmed.push(("confirmed", "yes"));
    app.post_form(page, action, &confirmed).await
}

/// Issues a virtual card through the portal's form; returns its id.
pub async fn issue_card(app: &TestApp, customer: &str, amount: &str) -> String {
    let reference = form_reference(app, "/cards/new").await;
    let fields = [
        ("card_type", "virtual"),
        ("customer_id", customer),
        ("card_brand", "visa"),
        ("amount", amount),
        ("reference", reference.as_str()),
    ];
    let res = confirm(
        app,
        "/cards/new",
        "/cards",
        &fields,
        "Debited from the USDT wallet",
    )
    .await;
    assert_eq!(res.status().as_u16(), 303, "{}", res.text().await.unwrap());
    location(&res).trim_start_matches("/cards/").to_owned()
}

async fn usdt(sandbox: &Client) -> i64 {
    sandbox.balance("USDT").await.unwrap().available_balance.value()
}

#[tokio::test]
async fn customers_are_created_edited_verified_and_deactivated_in_the_portal() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let sandbox = app.sandbox().await;

    let bad = app
        .post_form(
            "/customers/new",
            "/customers",
            &[("email", "not-an-email"), ("customer_type", "individual")],
        )
        .await;
    assert_eq!(bad.status().as_u16(), 422);
    assert!(bad.text().await.unwrap().contains("email address"));
    let res = app
        .post_form(
            "/customers/new",
            "/customers",
            &[
                ("email", "ada@example.com"),
                ("customer_type", "individual"),
                ("first_name", "Ada"),
                ("last_name", "Okafor"),
                ("reference", "cust-1"),
            ],
        )
        .await;
    assert_eq!(res.status().as_u16(), 303);
    let page = location(&res);
    let id = page.trim_start_matches("/customers/").to_owned();
    // The same form sent twice is one customer; another email is refused plainly.
    let again = app
        .post_form(
            "/customers/new",
            "/customers",
            &[
                ("email", "ada@example.com"),
                ("customer_type", "individual"),
                ("first_name", "Ada"),
                ("last_name", "Okafor"),
                ("reference", "cust-1"),
            ],
        )
        .await;
    assert_eq!(location(&again), page);
    let dup = app
        .post_form(
            "/customers/new",
            "/customers",
            &[("email", "ADA@example.com"), ("customer_type", "business")],
        )
        .await;
    assert_eq!(dup.status().as_u16(), 422);
    assert!(dup.text().await.unwrap().contains("already exists"));

    let list = app.get_html("/customers?email=ada%40example.com").await;
    assert!(
        list.contains("Ada Okafor") && list.contains("1 customer"),
        "{list}"
    );

    app.post_form(&page, &page, &[("first_name", "Ada"), ("last_name", "Mensah")])
        .await;
    assert_eq!(sandbox.customer(&id).await.unwrap().last_name, "Mensah");

    // KYC: a bad date is named before the call; then pending, then approved.
    let mut fields = vec![
        ("country", "nga"),
        ("date_of_birth", "01/04/1990"),
        ("id_type", "passport"),
        ("id_number", "A7654321"),
        ("dial_code", "+234"),
        ("phone_number", "8012345678"),
        ("line1", "1 Marina"),
        ("city", "Lagos"),
        ("state", "Lagos"),
        ("postal_code", "100001"),
    ];
    let res = app.post_form(&page, &format!("{page}/kyc"), &fields).await;
    assert_eq!(res.status().as_u16(), 422);
    assert!(res.text().await.unwrap().contains("YYYY-MM-DD"));
    fields[1] = ("date_of_birth", "2090-01-01");
    let res = app.post_form(&page, &format!("{page}/kyc"), &fields).await;
    assert_eq!(res.status().as_u16(), 422);
    assert!(res.text().await.unwrap().contains("must be in the past"));
    fields[1] = ("date_of_birth", "1990-04-01");
    let res = app.post_form(&page, &format!("{page}/kyc"), &fields).await;
    assert_eq!(res.status().as_u16(), 303);
    let block = app.get_html(&format!("{page}/kyc")).await;
    assert!(
        block.contains("pending") && block.contains("hx-trigger=\"every 2s\""),
        "{block}"
    );
    sandbox.sandbox_advance_clock(60).await.unwrap();
    let block = app.get_html(&format!("{page}/kyc")).await;
    assert!(
        block.contains("approved") && !block.contains("hx-trigger"),
        "{block}"
    );
    assert_eq!(
        sandbox.customer(&id).await.unwrap().country.as_deref(),
        Some("NGA")
    );

    let ask = app
        .post_form(&page, &format!("{page}/active"), &[("active", "no")])
        .await;
    assert!(ask
        .text()
        .await
        .unwrap()
        .contains("can&#39;t be issued new cards"));
    assert!(
        sandbox.customer(&id).await.unwrap().is_active,
        "nothing changed yet"
    );
    app.post_form(
        &page,
        &format!("{page}/active"),
        &[("active", "no"), ("confirmed", "yes")],
    )
    .await;
    assert!(!sandbox.customer(&id).await.unwrap().is_active);
    let inactive = app.get_html("/customers?active=no").await;
    assert!(inactive.contains("deactivated") && inactive.contains("ada@example.com"));
    let actions: Vec<String> = app.audit_actions().await.into_iter().map(|(a, _)| a).collect();
    for wanted in [
        "customers.created",
        "customers.updated",
        "customers.kyc_submitted",
        "customers.deactivated",
    ] {
        assert!(actions.iter().any(|a| a == wanted), "{wanted} in {actions:?}");
    }
}

#[tokio::test]
async fn card_rules_are_checked_before_the_call_and_refusals_create_nothing() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let sandbox = app.sandbox().await;
    let ada = approved_customer(&sandbox, "ada@example.com").await;
    let pending = sandbox
        .create_customer(&NewCustomer {
            email: "kofi@example.com".into(),
            customer_type: "individual".into(),
            ..NewCustomer::default()
        })
        .await
        .unwrap()
        .id
        .to_string();
    sandbox.submit_card_kyc(&pending, &kyc("B1")).await.unwrap();
    let today = sandbox.sandbox_clock().await.unwrap().now.date_naive();
    let tomorrow = (today + chrono::Duration::days(1)).to_string();
    let today_text = today.to_string();
    let before = usdt(&sandbox).await;

    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (
            vec![
                ("card_type", "lite"),
                ("customer_id", &ada),
                ("card_brand", "visa"),
                ("amount", "1.99"),
                ("swipe_count", "3"),
                ("terminate_date", &tomorrow),
            ],
            "2.00 to 250.00 USD",
        ),
        (
            vec![
                ("card_type", "lite"),
                ("customer_id", &ada),
                ("card_brand", "visa"),
                ("amount", "5"),
                ("swipe_count", "0"),
                ("terminate_date", &tomorrow),
            ],
            "at least one use",
        ),
        (
            vec![
                ("card_type", "lite"),
                ("customer_id", &ada),
                ("card_brand", "visa"),
                ("amount", "5"),
                ("swipe_count", "2"),
                ("terminate_date", &today_text),
            ],
            "after today",
        ),
        (
            vec![
                ("card_type", "lite"),
                ("customer_id", &ada),
                ("amount", "5"),
                ("swipe_count", "2"),
                ("terminate_date", &tomorrow),
            ],
            "card brand",
        ),
        (
            vec![
                ("card_type", "virtual"),
                ("customer_id", &pending),
                ("card_brand", "visa"),
                ("amount", "5"),
            ],
            "still under review",
        ),
        (
            vec![
                ("card_type", "virtual"),
                ("customer_id", &ada),
                ("card_brand", "visa"),
                ("amount", "99999"),
            ],
            "the USDT wallet holds",
        ),
    ];
    let reference = form_reference(&app, "/cards/new").await;
    for (mut fields, message) in cases {
        fields.push(("reference", &reference));
        let res = app.post_form("/cards/new", "/cards", &fields).await;
        assert_eq!(res.status().as_u16(), 422, "{message}");
        let body = res.text().await.unwrap();
        assert!(
            body.to_lowercase().contains(&message.to_lowercase()),
            "{message}: {body}"
        );
    }
    assert_eq!(
        sandbox
            .cards(&CardQuery::default())
            .await
            .unwrap()
            .page_info
            .total,
        0
    );
    assert_eq!(usdt(&sandbox).await, before, "refusals move nothing");

    // A valid lite card is issued, counts its uses, and lists under its filter.
    let res = confirm(
        &app,
        "/cards/new",
        "/cards",
        &[
            ("card_type", "lite"),
            ("customer_id", &ada),
            ("card_brand", "mastercard"),
            ("amount", "250"),
            ("swipe_count", "2"),
            ("terminate_date", &tomorrow),
            ("reference", &reference),
        ],
        "252.50 USDT",
    )
    .await;
    assert_eq!(res.status().as_u16(), 303);
    let lite = app.get_html("/cards?card_type=lite").await;
    assert!(lite.contains("1 card") && lite.contains("lite"), "{lite}");
    assert!(app
        .get_html("/cards?card_type=virtual")
        .await
        .contains("No cards match"));
}

#[tokio::test]
async fn a_card_is_provisioned_funded_frozen_limited_and_terminated_after_approval() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let sandbox = app.sandbox().await;
    let approver = members(&app, "Approver", &["checker@example.com".into()])
        .await
        .remove(0);
    let ada = approved_customer(&sandbox, "ada@example.com").await;
    let id = issue_card(&app, &ada, "20").await;
    let page = format!("/cards/{id}");

    // Pending: the live part polls until provisioning completes.
    let live = app.get_html(&format!("{page}/live")).await;
    assert!(
        live.contains("Provisioning") && live.contains("every 2s"),
        "{live}"
    );
    sandbox.sandbox_advance_clock(30).await.unwrap();
    // A page drawn while pending reloads itself, since it may now do more.
    let drawn_pending = app.get(&format!("{page}/live?status=pending")).await;
    assert_eq!(
        drawn_pending
            .headers()
            .get("hx-refresh")
            .map(|v| v.to_str().unwrap()),
        Some("true")
    );
    let live = app.get_html(&format!("{page}/live")).await;
    assert!(
        live.contains("state-active") && live.contains("20.00 USD"),
        "{live}"
    );
    assert!(!live.contains("every 2s"));

    // Fund: pending, then completed; a second fund within 30 s is explained.
    let body = app.get_html(&page).await;
    let reference = body
        .split("name=\"reference\" value=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_owned();
    let fund = [
        ("direction", "fund"),
        ("amount", "10"),
        ("reference", reference.as_str()),
    ];
    let res = confirm(&app, &page, &format!("{page}/balance"), &fund, "10.10 USDT").await;
    assert_eq!(location(&res), page, "back to the card, with a notice");
    let fund = [
        ("direction", "fund"),
        ("amount", "10"),
        ("reference", reference.as_str()),
        ("confirmed", "yes"),
    ];
    let again = app.post_form(&page, &format!("{page}/balance"), &fund).await;
    assert_eq!(again.status().as_u16(), 303, "the same form twice is one funding");
    let live = app.get_html(&format!("{page}/live")).await;
    assert!(
        live.contains("state-pending") && live.contains("every 2s"),
        "{live}"
    );
    let txs = sandbox
        .card_transactions(&id, None, None)
        .await
        .unwrap()
        .transactions;
    assert_eq!(
        txs.iter().filter(|t| t.kind == "funding").count(),
        2,
        "the load and one funding"
    );
    let too_soon = app
        .post_form(
            &page,
            &format!("{page}/balance"),
            &[
                ("direction", "fund"),
                ("amount", "1"),
                (
                    "reference",
                    &format!("paydesk-card-balance-{}", uuid::Uuid::new_v4().simple()),
                ),
                ("confirmed", "yes"),
            ],
        )
        .await;
    assert_eq!(too_soon.status().as_u16(), 422);
    assert!(too_soon.text().await.unwrap().contains("once every 30 seconds"));
    sandbox.sandbox_advance_clock(20).await.unwrap();
    let live = app.get_html(&format!("{page}/live")).await;
    assert!(live.contains("30.00 USD") && !live.contains("every 2s"), "{live}");

    // Freeze and unfreeze; limits.
    app.post_form(&page, &format!("{page}/status"), &[("status", "frozen")])
        .await;
    assert_eq!(sandbox.card(&id).await.unwrap().status.as_str(), "frozen");
    app.post_form(&page, &format!("{page}/status"), &[("status", "active")])
        .await;
    assert_eq!(sandbox.card(&id).await.unwrap().status.as_str(), "active");
    let res = app
        .post_form(
            &page,
            &format!("{page}/limits"),
            &[("daily_limit", "50"), ("transaction_limit", "0")],
        )
        .await;
    assert_eq!(res.status().as_u16(), 422, "a zero limit is refused");
    app.post_form(&page, &format!("{page}/limits"), &[("daily_limit", "50")])
        .await;
    assert_eq!(
        sandbox.card(&id).await.unwrap().card_limits.daily_limit,
        Some(MicroUnits(50_000_000))
    );

    // Under 24 hours: refused early, with a way to freeze instead.
    let young = app
        .post_form(&page, &format!("{page}/terminate"), &[("reason", "lost")])
        .await;
    assert_eq!(young.status().as_u16(), 422);
    let body = young.text().await.unwrap();
    assert!(
        body.contains("24 hours") && body.contains("Freeze instead"),
        "{body}"
    );
    let filed: i64 =
        sqlx::query_scalar("SELECT count(*) FROM action_requests WHERE kind = 'card_termination'")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert_eq!(filed, 0);

    // A day later: filed, approved by another member, carried out once.
    sandbox.sandbox_advance_clock(24 * 3600).await.unwrap();
    let wallet = usdt(&sandbox).await;
    let res = app
        .post_form(
            &page,
            &format!("{page}/terminate"),
            &[("reason", "customer left")],
        )
        .await;
    assert_eq!(res.status().as_u16(), 303);
    let request = request_id(&res);
    let self_approval = approve(&app, &request).await;
    assert_ne!(
        self_approval.status().as_u16(),
        303,
        "the requester never approves"
    );
    assert_eq!(approve(&approver, &request).await.status().as_u16(), 303);
    wait_for_status(&app, &request, "executed").await;
    let card = sandbox.card(&id).await.unwrap();
    assert_eq!(card.status.as_str(), "terminated");
    assert_eq!(usdt(&sandbox).await, wallet + 30_000_000, "the balance went back");
    let detail = app.get_html(&format!("/approvals/{request}")).await;
    assert!(detail.contains("30.00 USD returned"), "{detail}");
    let page_after = app.get_html(&page).await;
    assert!(page_after.contains("state-terminated") && !page_after.contains("Fund card"));
}

#[tokio::test]
async fn revealed_card_details_are_shown_once_and_never_stored_or_logged() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let sandbox = app.sandbox().await;
    let ada = approved_customer(&sandbox, "ada@example.com").await;
    let id = issue_card(&app, &ada, "5").await;
    sandbox.sandbox_advance_clock(30).await.unwrap();
    let page = format!("/cards/{id}");
    let token = crate::helpers::csrf_in(&app.get_html(&page).await);
    let res = app
        .http
        .post(app.url(&format!("{page}/reveal")))
        .header("HX-Request", "true")
        .form(&[("csrf_token", token.as_str())])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 200);
    let cache = res
        .headers()
        .get("cache-control")
        .map(|v| v.to_str().unwrap().to_owned());
    assert_eq!(cache.as_deref(), Some("no-store"));
    let fragment = res.text().await.unwrap();
    assert!(fragment.contains("data-expire-after=\"30\""), "{fragment}");
    let pan: String = fragment
        .split("<dt>Number</dt><dd><code class=\"card-line\">")
        .nth(1)
        .unwrap()
        .split('<')
        .next()
        .unwrap()
        .replace(' ', "");
    assert_eq!(pan.len(), 16);
    let last_four = sandbox.card(&id).await.unwrap().last_four_digit;
    assert!(pan.ends_with(&last_four));
    let cvv: String = fragment
        .split("<dt>CVV</dt><dd><code class=\"card-line\">")
        .nth(1)
        .unwrap()
        .split('<')
        .next()
        .unwrap()
        .to_owned();
    // Each detail on one line, with a copy button holding it unspaced.
    assert!(fragment.contains(&format!("data-copy=\"{pan}\"")), "{fragment}");
    assert!(fragment.contains(&format!("data-copy=\"{cvv}\"")), "{fragment}");

    // Recorded as viewed, without the details.
    app.link_audit().await;
    let viewed: Vec<String> =
        sqlx::query_scalar("SELECT details::text FROM audit_log WHERE action = 'cards.details_revealed'")
            .fetch_all(&app.pool)
            .await
            .unwrap();
    assert_eq!(viewed.len(), 1);
    let target: String =
        sqlx::query_scalar("SELECT target FROM audit_log WHERE action = 'cards.details_revealed'")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert!(
        target.ends_with(&format!("•••• {last_four}")),
        "named, masked: {target}"
    );
    // The second view in a minute is fine; the third is explained.
    let third = async || {
        app.http
            .post(app.url(&format!("{page}/reveal")))
            .header("HX-Request", "true")
            .form(&[("csrf_token", token.as_str())])
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    };
    third().await;
    assert!(third().await.contains("twice a minute"));

    // Search every table of the database and every log line for the number.
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
    )
    .fetch_all(&app.pool)
    .await
    .unwrap();
    assert!(tables.len() > 5);
    for table in tables {
        let rows: Vec<String> =
            sqlx::query_scalar(&format!("SELECT row_to_json(t)::text FROM \"{table}\" t"))
                .fetch_all(&app.pool)
                .await
                .unwrap();
        for row in rows {
            assert!(!row.contains(&pan), "the card number is in table {table}");
            assert!(
                !row.contains(&format!("\"cvv\":\"{cvv}\"")),
                "the CVV is in table {table}"
            );
        }
    }
    let logs = captured_logs();
    assert!(
        logs.contains(&format!("/cards/{id}/reveal")),
        "the request itself is logged"
    );
    assert!(!logs.contains(&pan), "the card number reached a log");
}

#[tokio::test]
async fn a_member_without_reveal_permission_never_sees_the_button() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let sandbox = app.sandbox().await;
    let ada = approved_customer(&sandbox, "ada@example.com").await;
    let card = sandbox
        .create_card(&NewCard {
            amount: MicroUnits(5_000_000),
            card_type: Some("virtual".into()),
            currency: "USD".into(),
            customer_id: Some(ada.parse().unwrap()),
            ..NewCard::default()
        })
        .await
        .unwrap();
    sandbox.sandbox_advance_clock(30).await.unwrap();
    let operator = members(&app, "Operator", &["op@example.com".into()])
        .await
        .remove(0);
    let page = operator.get_html(&format!("/cards/{}", card.id)).await;
    assert!(page.contains("Fund card") && !page.contains("Reveal card details"));
    let res = operator
        .post_form(
            &format!("/cards/{}", card.id),
            &format!("/cards/{}/reveal", card.id),
            &[],
        )
        .await;
    assert_eq!(res.status().as_u16(), 403);
}

#[tokio::test]
async fn sandbox_tools_move_the_clock_and_simulate_purchases() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let sandbox = app.sandbox().await;
    let ada = approved_customer(&sandbox, "ada@example.com").await;
    let id = issue_card(&app, &ada, "10").await;
    let page = format!("/cards/{id}");
    assert!(app.get_html(&page).await.contains("href=\"/sandbox-tools\""));

    // A day passes in the sandbox: provisioning is done, termination opens.
    let before = sandbox.sandbox_clock().await.unwrap().now;
    let tools = app.get_html("/sandbox-tools").await;
    assert!(
        tools.contains("Sandbox clock") && tools.contains("+ 1 day"),
        "{tools}"
    );
    let res = app
        .post_form(
            "/sandbox-tools",
            "/sandbox-tools/advance",
            &[("seconds", "86400")],
        )
        .await;
    assert!(app.landing(res).await.contains("moved forward 1 day"));
    let after = sandbox.sandbox_clock().await.unwrap().now;
    assert!(after - before >= chrono::Duration::days(1));
    let odd = app
        .post_form("/sandbox-tools", "/sandbox-tools/advance", &[("seconds", "5")])
        .await;
    assert_eq!(odd.status().as_u16(), 400);
    let card_page = app.get_html(&page).await;
    assert!(card_page.contains("Request termination") && card_page.contains("Charge the card"));

    // The journal shows the portal's calls; deliveries show the events
    // (provisioning done) and can be sent again.
    let tools = app.get_html("/sandbox-tools").await;
    assert!(
        tools.contains("Recent calls") && tools.contains("POST /api/cards"),
        "{tools}"
    );
    assert!(tools.contains("virtualcard.created.completed"), "{tools}");
    let delivery = tools
        .split("/sandbox-tools/deliveries/")
        .nth(1)
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    let res = app
        .post_form(
            "/sandbox-tools",
            &format!("/sandbox-tools/deliveries/{delivery}/resend"),
            &[],
        )
        .await;
    assert!(app
        .landing(res)
        .await
        .contains(&format!("Delivery {delivery} was sent again")));

    // Purchases: approved, then declined once frozen.
    let res = app
        .post_form(
            &page,
            &format!("{page}/simulate-spend"),
            &[("amount", "2.50"), ("merchant", "Coffee")],
        )
        .await;
    assert!(app.landing(res).await.contains("Purchase of 2.50 USD approved"));
    assert_eq!(
        sandbox.card(&id).await.unwrap().balance_amount,
        MicroUnits(7_500_000)
    );
    app.post_form(&page, &format!("{page}/status"), &[("status", "frozen")])
        .await;
    let declined = app
        .post_form(&page, &format!("{page}/simulate-spend"), &[("amount", "1")])
        .await
        .text()
        .await
        .unwrap();
    assert!(declined.contains("declined: the card is frozen"), "{declined}");
    let live = app.get_html(&format!("{page}/live")).await;
    assert!(live.contains("Coffee") && live.contains("Spend"), "{live}");
    let actions: Vec<String> = app.audit_actions().await.into_iter().map(|(a, _)| a).collect();
    assert!(actions.iter().any(|a| a == "sandbox.clock_advanced"));

    // Only those who manage connections move the shared clock.
    let operator = members(&app, "Operator", &["op@example.com".into()])
        .await
        .remove(0);
    assert!(!operator.get_html("/").await.contains("/sandbox-tools"));
    assert_eq!(operator.get("/sandbox-tools").await.status().as_u16(), 403);
}

/// Funding above the policy's threshold (1,000 USD by default) waits for
/// an approver with the card-money permission, then runs once; below it,
/// the same gate runs it at once.
#[tokio::test]
async fn large_card_funding_waits_for_approval_and_small_runs_at_once() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let sandbox = app.sandbox().await;
    let approver = members(&app, "Approver", &["card-checker@example.com".into()])
        .await
        .remove(0);
    let ada = approved_customer(&sandbox, "ada@example.com").await;
    let id = issue_card(&app, &ada, "20").await;
    sandbox.sandbox_advance_clock(30).await.unwrap();
    let page = format!("/cards/{id}");

    let reference = form_reference(&app, &page).await;
    let fields = [
        ("direction", "fund"),
        ("amount", "1500"),
        ("reference", reference.as_str()),
    ];
    let res = confirm(
        &app,
        &page,
        &format!("{page}/balance"),
        &fields,
        "This needs 1 approval by",
    )
    .await;
    assert_eq!(res.status().as_u16(), 303);
    let request = request_id(&res);
    assert!(location(&res).starts_with("/approvals/"), "it waits");
    let wallet = usdt(&sandbox).await;
    assert_eq!(
        sandbox
            .card_transactions(&id, None, None)
            .await
            .unwrap()
            .transactions
            .len(),
        1,
        "nothing moved before approval"
    );
    let detail = approver.get_html(&format!("/approvals/{request}")).await;
    assert!(
        detail.contains("1515.00 USDT") || detail.contains("1515 USDT"),
        "{detail}"
    );
    assert_eq!(approve(&approver, &request).await.status().as_u16(), 303);
    wait_for_status(&app, &request, "executed").await;
    assert_eq!(
        usdt(&sandbox).await,
        wallet - 1_515_000_000,
        "amount and fee, once"
    );
}

/// Sandbox tools set a market price and make a deposit arrive at one of
/// the company's addresses; a bad price is refused beside its field.
#[tokio::test]
async fn sandbox_tools_set_prices_and_make_deposits_arrive() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let res = app
        .post_form(
            "/sandbox-tools",
            "/sandbox-tools/prices",
            &[("pair", "BTC/USDT"), ("price", "61000")],
        )
        .await;
    assert!(app
        .landing(res)
        .await
        .contains("BTC/USDT now trades at 61000 USDT"));
    let prices = app.sandbox().await.trading_prices().await.unwrap().prices;
    let btc = prices
        .iter()
        .find(|p| p.base_currency == "BTC" && p.quote_currency == "USDT")
        .unwrap();
    assert_eq!(btc.price.to_string(), "61000");
    let bad = app
        .post_form(
            "/sandbox-tools",
            "/sandbox-tools/prices",
            &[("pair", "BTC/USDT"), ("price", "-1")],
        )
        .await;
    assert_eq!(bad.status().as_u16(), 422);
    assert!(bad.text().await.unwrap().contains(r#"id="price-error""#));

    let address = app
        .sandbox()
        .await
        .generate_address(&paydesk_api::models::addresses::GenerateAddress {
            chain: "ethereum".into(),
            reference: Some("tools-deposit".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let to = format!("ethereum {}", address.address);
    let res = app
        .post_form(
            "/sandbox-tools",
            "/sandbox-tools/deposits",
            &[("to", &to), ("currency", "USDT"), ("amount", "12.5")],
        )
        .await;
    let landed = app.landing(res).await;
    assert!(landed.contains("A deposit of 12.5 USDT arrived at"), "{landed}");
    let actions: Vec<String> = app.audit_actions().await.into_iter().map(|(a, _)| a).collect();
    assert!(
        actions.iter().any(|a| a == "sandbox.deposit_simulated")
            && actions.iter().any(|a| a == "sandbox.price_set")
    );
}

/// Sandbox tools arm faults on calls and on webhook deliveries, and clear
/// them; the portal's own call then meets the fault and says so.
#[tokio::test]
async fn sandbox_tools_arm_and_clear_faults() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let res = app
        .post_form(
            "/sandbox-tools",
            "/sandbox-tools/faults",
            &[
                ("method", "GET"),
                ("matching", "/api/balances"),
                ("mode", "503"),
                ("count", "1"),
            ],
        )
        .await;
    assert!(app
        .landing(res)
        .await
        .contains("The next 1 GET call(s) to /api/balances… fail: 503."));
    // A 503 is refused before running, so the typed client asks again.
    assert!(
        app.get_html("/balances").await.contains("BTC"),
        "retried past the fault"
    );
    let journal = app.get_html("/sandbox-tools").await;
    assert!(
        journal.contains("GET /api/balances") && journal.contains("503"),
        "the fault shows in the journal"
    );

    let res = app
        .post_form(
            "/sandbox-tools",
            "/sandbox-tools/webhook-faults",
            &[("matching", "virtualcard."), ("mode", "drop"), ("count", "2")],
        )
        .await;
    assert!(app
        .landing(res)
        .await
        .contains("The next 2 deliveries of virtualcard.…: drop."));
    assert!(app
        .get_html("/sandbox-tools")
        .await
        .contains("Delivery faults armed: drop ×2"));
    let bad = app
        .post_form(
            "/sandbox-tools",
            "/sandbox-tools/faults",
            &[
                ("method", "GET"),
                ("matching", "/x"),
                ("mode", "503"),
                ("count", "1"),
            ],
        )
        .await;
    assert_eq!(bad.status().as_u16(), 422);
    let res = app
        .post_form("/sandbox-tools", "/sandbox-tools/faults/clear", &[])
        .await;
    assert!(app.landing(res).await.contains("No faults are armed any more"));
    assert!(!app
        .get_html("/sandbox-tools")
        .await
        .contains("Delivery faults armed"));
}

/// Sandbox tools' Lightning payer pays one of the company's invoices; a
/// request that isn't one is refused beside the field.
#[tokio::test]
async fn sandbox_tools_pay_an_invoice_as_an_outside_payer() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let invoice = app
        .sandbox()
        .await
        .create_invoice(&paydesk_api::models::lightning::NewInvoice {
            amount: paydesk_api::units::Sats(2100),
            description: "tools".into(),
            reference: "tools-invoice".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let res = app
        .post_form(
            "/sandbox-tools",
            "/sandbox-tools/invoices/pay",
            &[("request", &invoice.request)],
        )
        .await;
    assert!(app
        .landing(res)
        .await
        .contains("An outside payer paid the invoice (2100 sats)"));
    let paid = app
        .sandbox()
        .await
        .invoice(&invoice.id.to_string())
        .await
        .unwrap();
    assert_eq!(paid.status.as_str(), "paid");
    let bad = app
        .post_form(
            "/sandbox-tools",
            "/sandbox-tools/invoices/pay",
            &[("request", "not-an-invoice")],
        )
        .await;
    assert_eq!(bad.status().as_u16(), 422);
    assert!(bad.text().await.unwrap().contains(r#"id="request-error""#));
}
