//! The approvals engine with payouts: maker, checker, exactly-once
//! execution against the sandbox, and the separation-of-duties refusals.

use std::time::Duration;

use crate::helpers::{csrf_in, eventually, location, spawn_app, within, TestApp};

/// Adds members with `role` straight in the database (one password hash
/// for all, to keep the test fast) and signs each in through the form.
pub async fn members(app: &TestApp, role: &str, emails: &[String]) -> Vec<TestApp> {
    let hash =
        paydesk::auth::password::hash(secrecy::SecretString::from("member-password-123".to_owned())).await;
    let (tenant, role_id): (uuid::Uuid, uuid::Uuid) = sqlx::query_as(
        "SELECT t.id, r.id FROM tenants t JOIN roles r ON r.tenant_id = t.id WHERE t.name = 'Demo Company' AND r.name = $1",
    )
    .bind(role)
    .fetch_one(&app.pool)
    .await
    .unwrap();
    for email in emails {
        let id = uuid::Uuid::new_v4();
        // Set up with two-factor, as their roles may require.
        let secret = app.key.seal(&secrecy::SecretString::from(
            totp_rs::Secret::generate().to_base32(),
        ));
        sqlx::query(
            "INSERT INTO users (id, email, display_name, password_hash, totp_secret_enc, totp_enabled_at) \
             VALUES ($1, $2, $2, $3, $4, now())",
        )
        .bind(id)
        .bind(email)
        .bind(&hash)
        .bind(secret)
        .execute(&app.pool)
        .await
        .unwrap();
        sqlx::query("INSERT INTO memberships (tenant_id, user_id, role_id) VALUES ($1, $2, $3)")
            .bind(tenant)
            .bind(id)
            .bind(role_id)
            .execute(&app.pool)
            .await
            .unwrap();
    }
    let sign_ins = emails.iter().map(|email| async move {
        let browser = app.another_browser();
        let res = browser.sign_in_with_code(email, "member-password-123").await;
        assert_eq!(res.status().as_u16(), 303, "{email} signs in");
        browser
    });
    futures_util::future::join_all(sign_ins).await
}

pub async fn file_payout(maker: &TestApp, account: &str, amount: &str) -> reqwest::Response {
    maker
        .post_form(
            "/payouts/new?country=NG",
            "/payouts",
            &[
                ("country", "NG"),
                ("from_asset", "USDT"),
                ("amount", amount),
                ("bank_code", "058"),
                ("account_number", account),
                ("account_name", "Ada Okafor"),
                ("payment_reason", "salary"),
            ],
        )
        .await
}

/// Waits up to 30 s: a payout on the rail is first read back after 10 s, and a
/// loaded CI machine runs many tests at once.
pub async fn wait_for_status(app: &TestApp, request: &str, wanted: &str) -> String {
    let reached = within(move || async move {
        let status: String =
            sqlx::query_scalar("SELECT status::text FROM action_requests WHERE id = $1::uuid")
                .bind(request)
                .fetch_one(&app.pool)
                .await
                .unwrap();
        (status == wanted).then_some(status)
    })
    .await;
    if let Some(status) = reached {
        return status;
    }
    let (status, reason, progress): (String, Option<String>, serde_json::Value) = sqlx::query_as(
        "SELECT status::text, failure_reason, progress FROM action_requests WHERE id = $1::uuid",
    )
    .bind(request)
    .fetch_one(&app.pool)
    .await
    .unwrap();
    let jobs: Vec<(i32, Option<String>)> =
        sqlx::query_as("SELECT attempts, last_error FROM jobs WHERE request_id = $1::uuid")
            .bind(request)
            .fetch_all(&app.pool)
            .await
            .unwrap();
    panic!("request {request} never became {wanted}: {status} {reason:?} {progress} jobs {jobs:?}");
}

/// Polls until the request records the payout at `wanted`, for up to
/// `tries` tenths of a second; false if it never does.
async fn wait_for_payout_status(app: &TestApp, request: &str, wanted: &str, tries: u32) -> bool {
    for _ in 0..tries {
        let status: Option<String> =
            sqlx::query_scalar("SELECT progress->>'payout_status' FROM action_requests WHERE id = $1::uuid")
                .bind(request)
                .fetch_one(&app.pool)
                .await
                .unwrap();
        if status.as_deref() == Some(wanted) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

/// The digest of what a request's page shows, which a decision binds to.
pub fn digest_in(html: &str) -> String {
    let marker = "name=\"digest\" value=\"";
    match html.find(marker) {
        Some(start) => html[start + marker.len()..].split('"').next().unwrap().to_owned(),
        None => String::new(),
    }
}

/// Decides as `who` on what the request's page shows them.
pub async fn decide(who: &TestApp, request: &str, verdict: &str, comment: &str) -> reqwest::Response {
    let page = who.get_html(&format!("/approvals/{request}")).await;
    who.http
        .post(who.url(&format!("/approvals/{request}/{verdict}")))
        .form(&[
            ("csrf_token", csrf_in(&page).as_str()),
            ("digest", digest_in(&page).as_str()),
            ("comment", comment),
            ("confirmed", "yes"),
        ])
        .send()
        .await
        .unwrap()
}

/// Approves without a comment, as `approver`.
pub async fn approve(approver: &TestApp, request: &str) -> reqwest::Response {
    decide(approver, request, "approve", "").await
}

/// Waits until the payout of an approved request is finalized (on the
/// rail); the request is executing until the rail settles it.
pub async fn wait_for_finalize(app: &TestApp, request: &str) {
    assert!(
        wait_for_payout_status(app, request, "PENDING", 300).await,
        "the payout was never finalized"
    );
    wait_for_status(app, request, "executing").await;
}

/// An operator and an approver (`{name}-maker@`, `{name}-checker@`), and a
/// payout to `account` the one filed and the other approved, now on the
/// rail: the two members and the request's id.
pub async fn payout_on_the_rail(app: &TestApp, name: &str, account: &str) -> (TestApp, TestApp, String) {
    let operator = members(app, "Operator", &[format!("{name}-maker@example.com")])
        .await
        .remove(0);
    let approver = members(app, "Approver", &[format!("{name}-checker@example.com")])
        .await
        .remove(0);
    let id = request_id(&file_payout(&operator, account, "10").await);
    approve(&approver, &id).await;
    wait_for_finalize(app, &id).await;
    (operator, approver, id)
}

/// Why a request failed, in the words its page shows.
pub async fn failure_reason_of(app: &TestApp, request: &str) -> String {
    sqlx::query_scalar("SELECT failure_reason FROM action_requests WHERE id = $1::uuid")
        .bind(request)
        .fetch_one(&app.pool)
        .await
        .unwrap()
}

/// The id of the payout a request put on the rail.
pub async fn payout_id_of(app: &TestApp, request: &str) -> String {
    sqlx::query_scalar("SELECT progress->>'payout_id' FROM action_requests WHERE id = $1::uuid")
        .bind(request)
        .fetch_one(&app.pool)
        .await
        .unwrap()
}

pub fn request_id(res: &reqwest::Response) -> String {
    location(res).trim_start_matches("/approvals/").to_owned()
}

#[tokio::test]
async fn an_operator_files_an_approver_approves_and_the_payout_runs_once() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let operator = members(&app, "Operator", &["operator@example.com".into()])
        .await
        .remove(0);
    let approver = members(&app, "Approver", &["approver@example.com".into()])
        .await
        .remove(0);

    let form = operator.get_html("/payouts/new?country=NG").await;
    assert!(form.contains("Guaranty Trust Bank"));
    let res = file_payout(&operator, "0123456789", "100").await;
    assert_eq!(res.status().as_u16(), 303);
    let id = request_id(&res);
    let page = operator.get_html(&format!("/approvals/{id}")).await;
    assert!(page.contains("150000") && page.contains("Ada Okafor") && page.contains("pending"));
    assert!(
        !page.contains("Your decision"),
        "the maker is not offered a decision"
    );

    // The maker can't approve their own, even by posting the form.
    let res = approve(&operator, &id).await;
    assert_eq!(res.status().as_u16(), 422);
    assert!(res.text().await.unwrap().contains("someone else"));

    let inbox = approver.get_html("/approvals").await;
    assert!(inbox.contains("Waiting for you (1)"));
    assert!(
        inbox.contains(r#"hx-get="/approvals/waiting?as=line" hx-trigger="every 10s""#),
        "the inbox's count stays live"
    );
    // The menu's badge and the dashboard poll the count waiting for me.
    let badge = approver.get_html("/approvals/waiting").await;
    assert!(
        badge.contains(r#"class="badge""#) && badge.contains(">1</span>"),
        "{badge}"
    );
    let line = approver.get_html("/approvals/waiting?as=line").await;
    assert!(line.contains("1 request waits for your approval."), "{line}");
    // The waiting tab's rows are drawn again every 10 s, ticked picks kept.
    assert!(inbox.contains(r#"hx-get="/approvals/rows" hx-trigger="every 10s""#));
    let pick = inbox
        .split(r#"name="pick" value=""#)
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    let rows = approver.get_html(&format!("/approvals/rows?pick={pick}")).await;
    assert!(
        rows.contains(&format!(r#"value="{pick}" checked"#)) && !rows.contains("<html"),
        "{rows}"
    );
    assert!(
        !operator.get_html("/approvals/waiting").await.contains("badge"),
        "nothing waits for the maker"
    );
    let res = decide(&approver, &id, "approve", "ok").await;
    assert_eq!(res.status().as_u16(), 303);
    let rows = approver.get_html("/approvals/rows").await;
    assert!(
        rows.contains("Nothing waits for your decision."),
        "decided rows leave: {rows}"
    );
    wait_for_finalize(&app, &id).await;

    let (payout_id, reference): (String, String) = sqlx::query_as(
        "SELECT progress->>'payout_id', upstream_reference FROM action_requests WHERE id = $1::uuid",
    )
    .bind(&id)
    .fetch_one(&app.pool)
    .await
    .unwrap();
    let sandbox = app.sandbox().await;
    let payout = sandbox.payout(&payout_id).await.unwrap();
    assert_eq!(payout.status.as_str(), "PENDING");
    assert_eq!(payout.reference, reference);
    let debit = sandbox.transaction(&reference).await.unwrap();
    assert_eq!(debit.amount.value(), -100_000_000);

    // The rail settles; the webhook brings the news to the request.
    sandbox.sandbox_settle_payout(&payout_id, true).await.unwrap();
    assert!(
        wait_for_payout_status(&app, &id, "COMPLETED", 300).await,
        "the request never saw the payout complete"
    );
    wait_for_status(&app, &id, "executed").await;
    let badge = approver.get_html("/approvals/waiting").await;
    assert!(
        !badge.contains("badge"),
        "decided requests leave the badge: {badge}"
    );
    let page = operator.get_html(&format!("/approvals/{id}")).await;
    assert!(page.contains("COMPLETED"), "{page}");
    // The All tab filters by the day filed and exports what it shows.
    let today = chrono::Utc::now().date_naive();
    let all = approver
        .get_html(&format!("/approvals?tab=all&from={today}&to={today}"))
        .await;
    assert!(all.contains(&format!("/approvals/{id}")), "{all}");
    let before = approver
        .get_html(&format!("/approvals?tab=all&to={}", today.pred_opt().unwrap()))
        .await;
    assert!(before.contains("No requests match."), "{before}");
    let csv = approver
        .get(&format!("/approvals/export.csv?from={today}"))
        .await
        .text()
        .await
        .unwrap();
    assert!(csv.starts_with("\"filed_at\",\"id\""), "{csv}");
    assert!(
        csv.contains(&format!("\"{id}\"")) && csv.contains("\"executed\""),
        "{csv}"
    );
    // The request and its ledger movement link to each other.
    assert!(page.contains(&format!("/search?q={reference}")), "{page}");
    let movement = app.get_html(&format!("/transactions/{reference}")).await;
    assert!(
        movement.contains("Belongs to") && movement.contains(&format!("/approvals/{id}")),
        "{movement}"
    );
    for member in [&operator, &approver] {
        let notices = member.get_html("/notifications").await;
        assert!(notices.contains("Carried out"), "{notices}");
    }
}

#[tokio::test]
async fn fifty_approvers_clicking_at_once_pay_exactly_once() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let operator = members(&app, "Operator", &["maker@example.com".into()])
        .await
        .remove(0);
    let emails: Vec<String> = (0..50).map(|i| format!("checker{i}@example.com")).collect();
    let approvers = members(&app, "Approver", &emails).await;
    // Two approvals needed, so the fifty race for the last one.
    let res = app
        .post_form(
            "/policies",
            "/policies/payout",
            &[
                ("required_approvals", "2"),
                ("expires_after_hours", "24"),
                ("rate_tolerance_percent", "1"),
                ("reason", "four eyes on payouts"),
            ],
        )
        .await;
    assert_eq!(res.status().as_u16(), 303, "the policy is saved");
    let id = request_id(&file_payout(&operator, "0123456789", "10").await);

    let path = format!("/approvals/{id}/approve");
    let pages: Vec<String> = futures_util::future::join_all(
        approvers
            .iter()
            .map(|a| async { a.get_html(&format!("/approvals/{id}")).await }),
    )
    .await;
    let clicks = approvers.iter().zip(&pages).map(|(a, page)| {
        a.http
            .post(a.url(&path))
            .form(&[
                ("csrf_token", csrf_in(page).as_str()),
                ("digest", digest_in(page).as_str()),
                ("comment", ""),
                ("confirmed", "yes"),
            ])
            .send()
    });
    let answers = futures_util::future::join_all(clicks).await;
    let accepted = answers
        .iter()
        .filter(|r| r.as_ref().unwrap().status().as_u16() == 303)
        .count();
    assert!(accepted >= 2, "at least the two needed approvals were taken");
    wait_for_finalize(&app, &id).await;

    let jobs: i64 = sqlx::query_scalar("SELECT count(*) FROM jobs WHERE request_id = $1::uuid")
        .bind(&id)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(jobs, 1, "one job for one approval transition");
    // Upstream calls are recorded by the asynchronous audit writer: wait
    // until the finalize is on record.
    let audit = &app;
    let calls: Vec<(String,)> = eventually("the finalize on record", move || async move {
        audit.link_audit().await;
        let calls: Vec<(String,)> = sqlx::query_as(
            "SELECT details->>'path' FROM audit_log WHERE action = 'upstream.call' AND details->>'method' = 'POST' \
             AND (details->>'path' LIKE '%/initialize' OR details->>'path' LIKE '%/finalize')",
        )
        .fetch_all(&audit.pool)
        .await
        .unwrap();
        calls.iter().any(|(p,)| p.ends_with("/finalize")).then_some(calls)
    })
    .await;
    let initialize = calls.iter().filter(|(p,)| p.ends_with("/initialize")).count();
    let finalize = calls.iter().filter(|(p,)| p.ends_with("/finalize")).count();
    assert_eq!(
        (initialize, finalize),
        (1, 1),
        "exactly one initialize and one finalize upstream"
    );
    let sandbox = app.sandbox().await;
    let finalized = sandbox.payouts(Some("PENDING"), None).await.unwrap();
    assert_eq!(finalized.total, 1);
}

#[tokio::test]
async fn separation_of_duties_refusals() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    // Alone, the owner has no one else to approve.
    let res = file_payout(&app, "0123456789", "10").await;
    assert_eq!(res.status().as_u16(), 422);
    let body = res.text().await.unwrap();
    assert!(
        body.contains("someone independent of you") && body.contains("(such as Approver)"),
        "{body}"
    );

    let approver = members(&app, "Approver", &["only-checks@example.com".into()])
        .await
        .remove(0);
    // An approve-only member can't initiate: no form, and a forged post is refused.
    assert_eq!(
        approver.get("/payouts/new?country=NG").await.status().as_u16(),
        403
    );
    let res = approver
        .post_form(
            "/approvals",
            "/payouts",
            &[("country", "NG"), ("from_asset", "USDT"), ("amount", "10")],
        )
        .await;
    assert_eq!(res.status().as_u16(), 403);

    // A second pending request for the same account is refused.
    let first = file_payout(&app, "0123456789", "10").await;
    assert_eq!(first.status().as_u16(), 303);
    let second = file_payout(&app, "0123456789", "12").await;
    assert_eq!(second.status().as_u16(), 422);
    let body = second.text().await.unwrap();
    assert!(body.contains("already waiting for approval"));
    assert!(body.contains(&location(&first)));
    // The refused filing wrote nothing: its audit record is staged by the
    // statement that files, so one request filed is one record.
    let requested = app
        .audit_actions()
        .await
        .into_iter()
        .filter(|(action, _)| action == "approvals.requested")
        .count();
    assert_eq!(requested, 1, "one filing, one record");

    // The maker cancels; a rejection needs no second voice.
    let id = request_id(&first);
    let res = app
        .post_form(
            &format!("/approvals/{id}"),
            &format!("/approvals/{id}/cancel"),
            &[("confirmed", "yes")],
        )
        .await;
    assert_eq!(res.status().as_u16(), 303);
    let res = approve(&approver, &id).await;
    assert_eq!(res.status().as_u16(), 422);
    let again = request_id(&file_payout(&app, "0123456789", "10").await);
    let res = decide(&approver, &again, "reject", "wrong account").await;
    assert_eq!(res.status().as_u16(), 303);
    wait_for_status(&app, &again, "rejected").await;
    app.link_audit().await;
    let audit: i64 = sqlx::query_scalar("SELECT count(*) FROM audit_log WHERE action LIKE 'approvals.%'")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert!(audit >= 4);
}

#[tokio::test]
async fn requests_expire_and_lost_answers_are_reconciled_by_reference() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let operator = members(&app, "Operator", &["op@example.com".into()])
        .await
        .remove(0);
    let approver = members(&app, "Approver", &["ap@example.com".into()])
        .await
        .remove(0);

    let stale = request_id(&file_payout(&operator, "0123456789", "10").await);
    sqlx::query("UPDATE action_requests SET expires_at = now() - interval '1 second' WHERE id = $1::uuid")
        .bind(&stale)
        .execute(&app.pool)
        .await
        .unwrap();
    let res = approve(&approver, &stale).await;
    assert_eq!(res.status().as_u16(), 422);
    assert!(res.text().await.unwrap().contains("expired"));

    // The next two payout writes lose their answers: the quote runs but its
    // answer is lost, twice. The engine retries with the same reference and
    // gets the same quote; one payout results.
    let sandbox = app.sandbox().await;
    let id = request_id(&file_payout(&operator, "0123456789", "10").await);
    sandbox
        .sandbox_add_fault(&paydesk_api::models::control::AddFault {
            method: "POST".into(),
            path_prefix: "/api/payouts/quotes".into(),
            mode: "500_no_body".into(),
            count: 2,
        })
        .await
        .unwrap();
    approve(&approver, &id).await;
    wait_for_finalize(&app, &id).await;
    let reference: String =
        sqlx::query_scalar("SELECT upstream_reference FROM action_requests WHERE id = $1::uuid")
            .bind(&id)
            .fetch_one(&app.pool)
            .await
            .unwrap();
    let mine: Vec<_> = sandbox
        .payouts(None, Some(100))
        .await
        .unwrap()
        .payouts
        .into_iter()
        .filter(|p| p.reference == reference)
        .collect();
    assert_eq!(mine.len(), 1, "one quote for the reference, however many tries");
    assert_eq!(mine[0].status.as_str(), "PENDING");
}

#[tokio::test]
async fn a_lost_webhook_is_made_up_for_by_reading_the_payout_back() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let (_, _, id) = payout_on_the_rail(&app, "lost-webhook", "0123456789").await;

    // The service's events stop reaching the portal; the payout completes.
    let sandbox = app.sandbox().await;
    sandbox
        .sandbox_set_webhook("http://127.0.0.1:9/nowhere", None)
        .await
        .unwrap();
    let payout_id = payout_id_of(&app, &id).await;
    sandbox.sandbox_settle_payout(&payout_id, true).await.unwrap();
    assert!(
        wait_for_payout_status(&app, &id, "COMPLETED", 300).await,
        "the request never saw the payout complete"
    );
}

/// The quote the engine will ask for, made ahead by the test with the same
/// reference and body, so the test knows its id (the service de-duplicates
/// by reference and hands the engine this same quote).
async fn quote_ahead(
    app: &TestApp,
    request: &str,
    amount: &str,
) -> (paydesk_api::Client, paydesk_api::models::payouts::Payout, String) {
    let reference: String =
        sqlx::query_scalar("SELECT upstream_reference FROM action_requests WHERE id = $1::uuid")
            .bind(request)
            .fetch_one(&app.pool)
            .await
            .unwrap();
    let sandbox = app.sandbox().await;
    let quote = sandbox
        .create_payout_quote(&paydesk_api::models::payouts::QuoteRequest {
            amount: Some(amount.parse().unwrap()),
            country: "NG".into(),
            from_asset: "USDT".into(),
            to_currency: "NGN".into(),
            source: "offchain".into(),
            reference: reference.clone(),
            ..Default::default()
        })
        .await
        .unwrap();
    (sandbox, quote, reference)
}

#[tokio::test]
async fn a_finalize_whose_answer_is_lost_is_settled_by_reading_back() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let operator = members(&app, "Operator", &["op3@example.com".into()])
        .await
        .remove(0);
    let approver = members(&app, "Approver", &["ap3@example.com".into()])
        .await
        .remove(0);
    let id = request_id(&file_payout(&operator, "0123456789", "10").await);
    let (sandbox, quote, reference) = quote_ahead(&app, &id, "10").await;
    sandbox
        .sandbox_add_fault(&paydesk_api::models::control::AddFault {
            method: "POST".into(),
            path_prefix: format!("/api/payouts/{}/finalize", quote.quote_id),
            mode: "500_no_body".into(),
            count: 1,
        })
        .await
        .unwrap();
    let before = sandbox.balance("USDT").await.unwrap().available_balance.value();
    approve(&approver, &id).await;
    wait_for_finalize(&app, &id).await;
    let timeline = operator.get_html(&format!("/approvals/{id}")).await;
    assert!(timeline.contains("finalize unconfirmed"), "{timeline}");
    assert_eq!(
        sandbox
            .payout(&quote.id.to_string())
            .await
            .unwrap()
            .status
            .as_str(),
        "PENDING"
    );
    let after = sandbox.balance("USDT").await.unwrap().available_balance.value();
    assert_eq!(before - after, 10_100_000, "paid once: 10 USDT and 0.1 fee");
    assert_eq!(
        sandbox.transaction(&reference).await.unwrap().amount.value(),
        -10_000_000
    );
}

#[tokio::test]
async fn a_run_that_died_after_initialize_is_finished_without_paying_twice() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let operator = members(&app, "Operator", &["op4@example.com".into()])
        .await
        .remove(0);
    let id = request_id(&file_payout(&operator, "0123456789", "10").await);
    // What a run that died after initialize leaves behind: the quote
    // initialized upstream, its payout id saved, the request executing and
    // its job still queued.
    let (sandbox, quote, reference) = quote_ahead(&app, &id, "10").await;
    sandbox
        .initialize_payout(
            &quote.quote_id,
            &paydesk_api::models::payouts::InitializeRequest {
                quote_id: quote.quote_id.clone(),
                reference: reference.clone(),
                payment_reason: "salary".into(),
                callback_url: None,
                beneficiary: paydesk_api::models::payouts::PayoutBeneficiary {
                    destination_type: "bank".into(),
                    country: "NG".into(),
                    account_name: "Ada Okafor".into(),
                    account_number: "0123456789".into(),
                    bank_code: Some("058".into()),
                },
            },
        )
        .await
        .unwrap();
    sqlx::query(
        "UPDATE action_requests SET status = 'executing', \
         progress = jsonb_build_object('payout_id', $2::text, 'quote_id', $3::text, 'reference', $4::text) WHERE id = $1::uuid",
    )
    .bind(&id)
    .bind(quote.id.to_string())
    .bind(&quote.quote_id)
    .bind(&reference)
    .execute(&app.pool)
    .await
    .unwrap();
    sqlx::query("INSERT INTO jobs (kind, request_id) VALUES ('execute', $1::uuid)")
        .bind(&id)
        .execute(&app.pool)
        .await
        .unwrap();
    wait_for_finalize(&app, &id).await;
    let mine: Vec<_> = sandbox
        .payouts(None, Some(100))
        .await
        .unwrap()
        .payouts
        .into_iter()
        .filter(|p| p.reference == reference)
        .collect();
    assert_eq!(mine.len(), 1, "no second quote or payout");
    assert_eq!(mine[0].status.as_str(), "PENDING");
}

#[tokio::test]
async fn a_quote_that_expired_before_execution_is_replaced() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let operator = members(&app, "Operator", &["op5@example.com".into()])
        .await
        .remove(0);
    let approver = members(&app, "Approver", &["ap5@example.com".into()])
        .await
        .remove(0);
    let id = request_id(&file_payout(&operator, "0123456789", "10").await);
    // The quote for this request's reference exists and then runs out.
    let (sandbox, quote, reference) = quote_ahead(&app, &id, "10").await;
    sandbox.sandbox_advance_clock(901).await.unwrap();
    assert_eq!(
        sandbox
            .payout(&quote.id.to_string())
            .await
            .unwrap()
            .status
            .as_str(),
        "EXPIRED"
    );

    approve(&approver, &id).await;
    wait_for_finalize(&app, &id).await;
    let payout_id = payout_id_of(&app, &id).await;
    let payout = sandbox.payout(&payout_id).await.unwrap();
    assert_ne!(payout.id, quote.id, "a fresh quote");
    assert_eq!(payout.reference, format!("{reference}-1"));
    assert_eq!(payout.status.as_str(), "PENDING");
    let timeline = operator.get_html(&format!("/approvals/{id}")).await;
    assert!(timeline.contains("quote expired"));
}

#[tokio::test]
async fn a_rate_that_moved_beyond_tolerance_sends_the_request_back() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let operator = members(&app, "Operator", &["op6@example.com".into()])
        .await
        .remove(0);
    let approver = members(&app, "Approver", &["ap6@example.com".into()])
        .await
        .remove(0);
    let id = request_id(&file_payout(&operator, "0123456789", "10").await);
    // 1,500 -> 1,520 is a 1.33% move; the default tolerance is 1%.
    let sandbox = app.sandbox().await;
    sandbox
        .sandbox_set_price("USDT", "NGN", "1520".parse().unwrap())
        .await
        .unwrap();
    approve(&approver, &id).await;
    // The page reads the request and its timeline one after the other;
    // wait until both show the send-back.
    let (maker, request) = (&operator, &id);
    let page = eventually("the request's page to show the send-back", move || async move {
        let page = maker.get_html(&format!("/approvals/{request}")).await;
        (page.contains("back for approval") && page.contains("status-pending")).then_some(page)
    })
    .await;
    assert!(
        page.contains("1520 NGN per USDT"),
        "approvers now see the new rate: {page}"
    );
    wait_for_status(&app, &id, "pending").await;
    app.link_audit().await;
    let paid: i64 =
        sqlx::query_scalar("SELECT count(*) FROM audit_log WHERE details->>'path' LIKE '%/finalize'")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    assert_eq!(paid, 0, "nothing was paid at the worse rate");

    // Approved again at the new rate, it runs.
    let res = approve(&approver, &id).await;
    assert_eq!(res.status().as_u16(), 303);
    wait_for_finalize(&app, &id).await;
}

#[tokio::test]
async fn a_saved_beneficiary_changed_after_filing_fails_at_approval() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let operator = members(&app, "Operator", &["op7@example.com".into()])
        .await
        .remove(0);
    let approver = members(&app, "Approver", &["ap7@example.com".into()])
        .await
        .remove(0);
    let sandbox = app.sandbox().await;
    let saved = sandbox
        .create_beneficiary(&paydesk_api::models::beneficiaries::NewBeneficiary {
            kind: "bank".into(),
            name: "Ada payroll".into(),
            destination: serde_json::json!({"account_name": "Ada Okafor", "account_number": "0123456789",
                                            "bank_code": "058", "country": "NG"}),
        })
        .await
        .unwrap();
    let form = operator.get_html("/payouts/new?country=NG").await;
    assert!(form.contains("Ada payroll (account 0123456789)"));
    let res = operator
        .post_form(
            "/payouts/new?country=NG",
            "/payouts",
            &[
                ("country", "NG"),
                ("from_asset", "USDT"),
                ("amount", "10"),
                ("beneficiary_id", &saved.id.to_string()),
                ("payment_reason", "salary"),
            ],
        )
        .await;
    assert_eq!(res.status().as_u16(), 303);
    let id = request_id(&res);
    assert!(operator
        .get_html(&format!("/approvals/{id}"))
        .await
        .contains("account 0123456789"));

    // Someone changes the saved account before the approval.
    sandbox
        .update_beneficiary(
            &saved.id.to_string(),
            &paydesk_api::models::beneficiaries::BeneficiaryUpdate {
                destination: Some(
                    serde_json::json!({"account_name": "Mallory", "account_number": "5555555555",
                                                     "bank_code": "058", "country": "NG"}),
                ),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    approve(&approver, &id).await;
    wait_for_status(&app, &id, "failed").await;
    let page = operator.get_html(&format!("/approvals/{id}")).await;
    assert!(page.contains("beneficiary changed"), "{page}");
    assert_eq!(
        sandbox.payouts(Some("PENDING"), None).await.unwrap().total,
        0,
        "nothing was paid"
    );
}

async fn notices(member: &TestApp, wanted: &str) -> bool {
    within(move || async move {
        member
            .get_html("/notifications")
            .await
            .contains(wanted)
            .then_some(())
    })
    .await
    .is_some()
}

#[tokio::test]
async fn waiting_requests_remind_approvers_and_escalate_to_the_backup_role() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let operator = members(&app, "Operator", &["op8@example.com".into()])
        .await
        .remove(0);
    let approver = members(&app, "Approver", &["ap8@example.com".into()])
        .await
        .remove(0);
    let backup = members(&app, "Viewer", &["backup@example.com".into()])
        .await
        .remove(0);
    let res = app
        .post_form(
            "/policies",
            "/policies/payout",
            &[
                ("required_approvals", "1"),
                ("approver_roles", "Approver"),
                ("expires_after_hours", "24"),
                ("reminder_after_minutes", "30"),
                ("escalation_after_hours", "1"),
                ("escalation_role", "Viewer"),
                ("rate_tolerance_percent", "1"),
                ("reason", "backup when approvers are away"),
            ],
        )
        .await;
    assert_eq!(res.status().as_u16(), 303, "the policy is saved");
    let id = request_id(&file_payout(&operator, "0123456789", "10").await);
    // Before escalation the backup role (Viewers read payouts) can't approve.
    let res = approve(&backup, &id).await;
    assert_eq!(res.status().as_u16(), 422);
    assert!(!backup
        .get_html(&format!("/approvals/{id}"))
        .await
        .contains("Your decision"));

    // Two hours pass (the members joined before the request was filed).
    sqlx::query("UPDATE memberships SET created_at = now() - interval '3 hours'")
        .execute(&app.pool)
        .await
        .unwrap();
    sqlx::query("UPDATE action_requests SET created_at = now() - interval '2 hours' WHERE id = $1::uuid")
        .bind(&id)
        .execute(&app.pool)
        .await
        .unwrap();
    // The runner sleeps until the reminder it was told of at filing;
    // moving the clock back must tell it too, as its timer would.
    sqlx::query("SELECT pg_notify('paydesk_gate', 'due:' || extract(epoch FROM now()))")
        .execute(&app.pool)
        .await
        .unwrap();
    assert!(notices(&approver, "Reminder: still waiting for your approval").await);
    assert!(notices(&backup, "Escalated to you").await);
    let page = backup.get_html(&format!("/approvals/{id}")).await;
    assert!(page.contains("Your decision"), "{page}");
    let res = approve(&backup, &id).await;
    assert_eq!(res.status().as_u16(), 303);
    wait_for_finalize(&app, &id).await;
}

/// The security tester's reproduction: an admin files a payout, adds a new
/// member with the Approver role and approves as them. The new member's
/// approval doesn't count (the maker made them), and an Admin can't make
/// themselves Owner.
#[tokio::test]
async fn an_approver_the_maker_added_cannot_approve_and_admins_cannot_become_owners() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    // An independent approver exists, so the payout can be filed.
    members(&app, "Approver", &["independent@example.com".into()]).await;
    let res = file_payout(&app, "0123456789", "10").await;
    assert_eq!(res.status().as_u16(), 303);
    let id = request_id(&res);

    let puppet =
        crate::access::add_member(&app, "sockpuppet@example.com", "Approver", "puppet-password-123").await;
    let res = approve(&puppet, &id).await;
    assert_eq!(res.status().as_u16(), 422);
    let body = res.text().await.unwrap();
    assert!(body.contains("not be independent"), "{body}");
    let status: String = sqlx::query_scalar("SELECT status::text FROM action_requests WHERE id = $1::uuid")
        .bind(&id)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(status, "pending", "the payout did not run");

    // An Admin (added by the owner) can't promote themselves to Owner.
    let admin =
        crate::access::add_member(&app, "second-admin@example.com", "Admin", "admin-password-123").await;
    let me: String =
        sqlx::query_scalar("SELECT id::text FROM users WHERE email = 'second-admin@example.com'")
            .fetch_one(&app.pool)
            .await
            .unwrap();
    let owner_role: String = sqlx::query_scalar("SELECT id::text FROM roles WHERE name = 'Owner'")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    let res = admin
        .post_form(
            "/members",
            &format!("/members/{me}/role"),
            &[("role_id", &owner_role)],
        )
        .await;
    assert_eq!(res.status().as_u16(), 422);
    assert!(res.text().await.unwrap().contains("Only an Owner"));
    let owner: String = sqlx::query_scalar("SELECT id::text FROM users WHERE email = $1")
        .bind(&app.admin_email)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    let viewer_role: String = sqlx::query_scalar("SELECT id::text FROM roles WHERE name = 'Viewer'")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    let res = admin
        .post_form(
            "/members",
            &format!("/members/{owner}/role"),
            &[("role_id", &viewer_role)],
        )
        .await;
    assert_eq!(res.status().as_u16(), 422, "an Admin can't demote the Owner");
    let res = admin
        .post_form("/members", &format!("/members/{owner}/remove"), &[])
        .await;
    assert_eq!(res.status().as_u16(), 422, "nor remove them");
}

/// A payout the rail fails (account ending 9999) ends the request as
/// failed, with the rail's reason, and tells the maker and the approver.
#[tokio::test]
async fn a_payout_that_fails_on_the_rail_ends_the_request_as_failed() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let (operator, approver, id) = payout_on_the_rail(&app, "rail-fails", "0123459999").await;
    let payout_id = payout_id_of(&app, &id).await;
    // The rail takes its time on the sandbox clock.
    let sandbox = app.sandbox().await;
    sandbox.sandbox_advance_clock(3600).await.unwrap();
    assert_eq!(
        sandbox.payout(&payout_id).await.unwrap().status.as_str(),
        "FAILED"
    );
    wait_for_status(&app, &id, "failed").await;
    let page = operator.get_html(&format!("/approvals/{id}")).await;
    assert!(page.contains("failed on the rail"), "{page}");
    assert!(!page.contains("status-executed"));
    let dashboard = operator.get_html("/").await;
    let failed = dashboard
        .split("Failed in the last 24 hours")
        .nth(1)
        .unwrap_or_else(|| panic!("{dashboard}"));
    assert!(failed.contains(&format!("/approvals/{id}")), "{failed}");
    for member in [&operator, &approver] {
        assert!(notices(member, "Failed: Pay 10 USDT").await);
    }
}

/// An approval binds to the digest of what the approver saw: a decision
/// posted for anything else is refused, and one decision per request
/// wins a race with the maker's cancel.
#[tokio::test]
async fn approvals_bind_to_what_was_seen_and_race_a_cancel_atomically() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let operator = members(&app, "Operator", &["op10@example.com".into()])
        .await
        .remove(0);
    let approver = members(&app, "Approver", &["ap10@example.com".into()])
        .await
        .remove(0);
    let id = request_id(&file_payout(&operator, "0123456789", "10").await);
    let page = approver.get_html(&format!("/approvals/{id}")).await;
    let res = approver
        .http
        .post(approver.url(&format!("/approvals/{id}/approve")))
        .form(&[
            ("csrf_token", csrf_in(&page).as_str()),
            ("digest", "0000"),
            ("comment", ""),
            ("confirmed", "yes"),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 422);
    assert!(res.text().await.unwrap().contains("changed since you opened it"));

    for round in 0..5 {
        let id = request_id(&file_payout(&operator, &format!("01234567{round}0"), "10").await);
        let approver_page = approver.get_html(&format!("/approvals/{id}")).await;
        let maker_page = operator.get_html(&format!("/approvals/{id}")).await;
        let approve = approver
            .http
            .post(approver.url(&format!("/approvals/{id}/approve")))
            .form(&[
                ("csrf_token", csrf_in(&approver_page).as_str()),
                ("digest", digest_in(&approver_page).as_str()),
                ("confirmed", "yes"),
            ])
            .send();
        let cancel = operator
            .http
            .post(operator.url(&format!("/approvals/{id}/cancel")))
            .form(&[
                ("csrf_token", csrf_in(&maker_page).as_str()),
                ("confirmed", "yes"),
            ])
            .send();
        let (approved, cancelled) = tokio::join!(approve, cancel);
        let won = [
            approved.unwrap().status().as_u16(),
            cancelled.unwrap().status().as_u16(),
        ];
        assert_eq!(
            won.iter().filter(|s| **s == 303).count(),
            1,
            "exactly one wins: {won:?}"
        );
        let status: String =
            sqlx::query_scalar("SELECT status::text FROM action_requests WHERE id = $1::uuid")
                .bind(&id)
                .fetch_one(&app.pool)
                .await
                .unwrap();
        let jobs: i64 = sqlx::query_scalar("SELECT count(*) FROM jobs WHERE request_id = $1::uuid")
            .bind(&id)
            .fetch_one(&app.pool)
            .await
            .unwrap();
        match won {
            [303, _] => assert_ne!(status, "cancelled"),
            _ => assert_eq!((status.as_str(), jobs), ("cancelled", 0)),
        }
    }
}

async fn request_row(app: &TestApp, id: &str) -> (i32, String, Vec<String>) {
    sqlx::query_as("SELECT required_approvals, value::text || ' ' || value_currency, rules_fired FROM action_requests WHERE id = $1::uuid")
        .bind(id)
        .fetch_one(&app.pool)
        .await
        .unwrap()
}

/// The running totals a policy weighs come from per-hour totals kept by a
/// trigger and the requests of the period's first, partial hour: they
/// equal a plain sum of the period's requests wherever the requests fall
/// against the hours, and follow cancellations and changed values.
#[tokio::test]
async fn running_totals_equal_the_sum_of_the_periods_requests() {
    use paydesk::approvals::Action;
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let makers = members(
        &app,
        "Operator",
        &["rt1@example.com".into(), "rt2@example.com".into()],
    )
    .await;
    let mut ids = Vec::new();
    for (i, amount) in ["10", "20", "40", "80"].into_iter().enumerate() {
        ids.push(request_id(
            &file_payout(&makers[i % 2], &format!("012345679{i}"), amount).await,
        ));
    }
    let kind = paydesk::payouts::action::PayoutAction::KIND;
    let (tenant, member): (uuid::Uuid, uuid::Uuid) =
        sqlx::query_as("SELECT tenant_id, requested_by FROM action_requests WHERE id = $1::uuid")
            .bind(&ids[0])
            .fetch_one(&app.pool)
            .await
            .unwrap();
    let since = chrono::Utc::now() - chrono::Duration::hours(24);
    let plain = || async {
        let sums: (rust_decimal::Decimal, rust_decimal::Decimal) = sqlx::query_as(
            "SELECT COALESCE(sum(value) FILTER (WHERE requested_by = $3), 0), COALESCE(sum(value), 0)
             FROM action_requests WHERE tenant_id = $1 AND kind = $2 AND created_at >= $4
               AND status NOT IN ('rejected', 'cancelled', 'expired', 'failed')",
        )
        .bind(tenant)
        .bind(kind.key)
        .bind(member)
        .bind(since)
        .fetch_one(&app.pool)
        .await
        .unwrap();
        sums
    };
    // Filed now; in the period's first hour, after and before `since`;
    // just before `since`; then one cancelled and one revalued.
    let moves = [
        "UPDATE action_requests SET created_at = $2::timestamptz + interval '1 second' WHERE id = $1::uuid",
        "UPDATE action_requests SET created_at = date_trunc('hour', $2::timestamptz, 'UTC') + interval '59 minutes' WHERE id = $1::uuid",
        "UPDATE action_requests SET created_at = $2::timestamptz - interval '1 second' WHERE id = $1::uuid",
        "UPDATE action_requests SET created_at = $2::timestamptz + interval '3 hours' WHERE id = $1::uuid",
        "UPDATE action_requests SET status = 'cancelled' WHERE id = $1::uuid AND $2::timestamptz IS NOT NULL",
        "UPDATE action_requests SET value = value * 3 WHERE id = $1::uuid AND $2::timestamptz IS NOT NULL",
    ];
    for (i, change) in std::iter::once(None).chain(moves.iter().map(Some)).enumerate() {
        if let Some(change) = change {
            sqlx::query(change)
                .bind(&ids[i % ids.len()])
                .bind(since)
                .execute(&app.pool)
                .await
                .unwrap();
        }
        let kept = paydesk::approvals::store::running_totals(&app.pool, tenant, kind, member, since)
            .await
            .unwrap();
        let expected = plain().await;
        assert_eq!(kept, expected, "after change {i}");
        assert!(expected.1 > rust_decimal::Decimal::ZERO);
    }
}

/// Policies weigh the value in the reporting currency at the service's
/// rate (0.01 BTC and 600 USDT alike), keep running totals so a payment
/// can't be split under a tier, and the first payment to an account
/// always waits.
#[tokio::test]
async fn policies_weigh_value_totals_and_first_payments() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let operator = members(&app, "Operator", &["op11@example.com".into()])
        .await
        .remove(0);
    let checkers = members(
        &app,
        "Approver",
        &["ap11@example.com".into(), "ap12@example.com".into()],
    )
    .await;
    let res = app
        .post_form(
            "/policies",
            "/policies/payout",
            &[
                ("required_approvals", "0"),
                ("tier1_above", "500"),
                ("tier1_approvals", "2"),
                ("period_hours", "24"),
                ("member_limit", "1000"),
                ("first_time_rule", "yes"),
                ("expires_after_hours", "24"),
                ("rate_tolerance_percent", "1"),
                ("reason", "value-aware tiers"),
            ],
        )
        .await;
    assert_eq!(res.status().as_u16(), 303, "the policy is saved");

    // 0.01 BTC at 60,000 USDT is 600 USD, like 600 USDT: both above the tier.
    let btc = request_id(
        &operator
            .post_form(
                "/payouts/new?country=NG",
                "/payouts",
                &[
                    ("country", "NG"),
                    ("from_asset", "BTC"),
                    ("amount", "0.01"),
                    ("bank_code", "058"),
                    ("account_number", "0123456781"),
                    ("account_name", "Ada Okafor"),
                    ("payment_reason", "salary"),
                ],
            )
            .await,
    );
    let (needed, value, fired) = request_row(&app, &btc).await;
    assert_eq!((needed, value.as_str()), (2, "600.00 USD"), "{fired:?}");
    let usdt = request_id(&file_payout(&operator, "0123456782", "600").await);
    assert_eq!(request_row(&app, &usdt).await.0, 2);
    let page = operator.get_html(&format!("/approvals/{usdt}")).await;
    assert!(
        page.contains("Above 500 USD: 2 approval(s)") && page.contains("600.00 USD"),
        "{page}"
    );

    // 1,200 USD filed today: 100 more is beyond the member's 1,000 limit.
    let split = request_id(&file_payout(&operator, "0123456783", "100").await);
    let (needed, _, fired) = request_row(&app, &split).await;
    assert_eq!(needed, 2, "{fired:?}");
    assert!(
        fired
            .iter()
            .any(|f| f.contains("24-hour total would be 1300.00 USD")),
        "{fired:?}"
    );

    // Below every rule but the first-time one: the first payment to an
    // account waits for one approval; once paid, the next runs at once.
    sqlx::query("UPDATE action_requests SET status = 'cancelled' WHERE status = 'pending'")
        .execute(&app.pool)
        .await
        .unwrap();
    sqlx::query("UPDATE action_requests SET value = 0")
        .execute(&app.pool)
        .await
        .unwrap();
    let first = request_id(&file_payout(&operator, "0123456784", "10").await);
    let (needed, _, fired) = request_row(&app, &first).await;
    assert_eq!(needed, 1);
    assert!(
        fired
            .iter()
            .any(|f| f.starts_with("First payment to account ····6784")),
        "{fired:?}"
    );
    approve(&checkers[0], &first).await;
    wait_for_finalize(&app, &first).await;
    let again = request_id(&file_payout(&operator, "0123456784", "10").await);
    let (needed, _, fired) = request_row(&app, &again).await;
    assert_eq!(needed, 0, "{fired:?}");
    wait_for_finalize(&app, &again).await;

    // Settled on the rail, the account is still a known one.
    sqlx::query("UPDATE action_requests SET status = 'executed' WHERE status = 'executing'")
        .execute(&app.pool)
        .await
        .unwrap();
    let settled = request_id(&file_payout(&operator, "0123456784", "10").await);
    let (needed, _, fired) = request_row(&app, &settled).await;
    assert_eq!(needed, 0, "{fired:?}");
    wait_for_finalize(&app, &settled).await;

    // Paid means carried out or running: had every payment failed, the
    // next is a first payment again.
    sqlx::query("UPDATE action_requests SET status = 'failed' WHERE status IN ('executing', 'executed')")
        .execute(&app.pool)
        .await
        .unwrap();
    let after_failures = request_id(&file_payout(&operator, "0123456784", "10").await);
    let (needed, _, fired) = request_row(&app, &after_failures).await;
    assert_eq!(needed, 1, "{fired:?}");
}

/// A tier can ask for one approval from a named role: other approvals
/// don't complete the request until that role approves.
#[tokio::test]
async fn a_tier_can_require_an_approval_from_a_named_role() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let operator = members(&app, "Operator", &["op13@example.com".into()])
        .await
        .remove(0);
    let approvers = members(
        &app,
        "Approver",
        &["ap13@example.com".into(), "ap14@example.com".into()],
    )
    .await;
    let res = app
        .post_form(
            "/policies",
            "/policies/payout",
            &[
                ("required_approvals", "1"),
                ("tier1_above", "50"),
                ("tier1_approvals", "2"),
                ("tier1_role", "Admin"),
                ("expires_after_hours", "24"),
                ("rate_tolerance_percent", "1"),
                ("reason", "an admin signs large payouts"),
            ],
        )
        .await;
    assert_eq!(res.status().as_u16(), 303, "the policy is saved");
    // A second admin joins once the policy is in force (with two admins,
    // policy changes wait for four eyes).
    let admin = members(&app, "Admin", &["admin13@example.com".into()])
        .await
        .remove(0);
    let id = request_id(&file_payout(&operator, "0123456785", "100").await);
    approve(&approvers[0], &id).await;
    approve(&approvers[1], &id).await;
    let page = operator.get_html(&format!("/approvals/{id}")).await;
    assert!(
        page.contains("one of them from Admin") && page.contains("admin13@example.com"),
        "{page}"
    );
    wait_for_status(&app, &id, "pending").await;
    assert_eq!(approve(&admin, &id).await.status().as_u16(), 303);
    wait_for_finalize(&app, &id).await;
}

/// The payee is checked before filing: the bank's name for the account is
/// shown while typing and to the approvers; an account the bank doesn't
/// know is refused and nothing is filed.
#[tokio::test]
async fn payees_are_looked_up_before_anything_is_filed() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let operator = members(&app, "Operator", &["op15@example.com".into()])
        .await
        .remove(0);
    members(&app, "Approver", &["ap15@example.com".into()]).await;
    let shown = operator
        .get_html("/payouts/lookup?country=NG&bank_code=058&account_number=0123456789")
        .await;
    assert!(shown.contains("Account holder at the bank"), "{shown}");
    let unknown = operator
        .get_html("/payouts/lookup?country=NG&bank_code=058&account_number=0000000000")
        .await;
    assert!(unknown.contains("no account with this number"), "{unknown}");

    for (amount, says) in [
        ("1e3", "plain number of USDT"),
        ("1,000.5", "plain number of USDT"),
        ("-0", "plain number of USDT"),
        ("0x10", "plain number of USDT"),
        ("0.0000001", "6 at most"),
    ] {
        let res = file_payout(&operator, "0123456789", amount).await;
        assert_eq!(res.status().as_u16(), 422, "{amount}");
        assert!(res.text().await.unwrap().contains(says), "{amount}");
    }
    let res = file_payout(&operator, "0000000000", "10").await;
    assert_eq!(res.status().as_u16(), 422);
    assert!(res.text().await.unwrap().contains("no account with this number"));
    let filed: i64 = sqlx::query_scalar("SELECT count(*) FROM action_requests")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(filed, 0, "nothing was filed");

    let id = request_id(&file_payout(&operator, "0123456789", "10").await);
    let page = operator.get_html(&format!("/approvals/{id}")).await;
    assert!(page.contains("Name at the bank"), "{page}");
}

/// The inbox as reviewers work: "Waiting for you" and "All" with counts,
/// value, kind and requester columns, filters; approving asks for
/// confirmation, rejecting for a reason; bulk approval confirms the count
/// and decides each request on its own.
#[tokio::test]
async fn reviewers_work_the_inbox_in_tabs_and_approve_in_bulk() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let operator = members(&app, "Operator", &["op16@example.com".into()])
        .await
        .remove(0);
    let approver = members(&app, "Approver", &["ap16@example.com".into()])
        .await
        .remove(0);
    let ids: Vec<String> = futures_util::future::join_all(
        ["0123456711", "0123456722", "0123456733"]
            .iter()
            .map(|account| async { request_id(&file_payout(&operator, account, "10").await) }),
    )
    .await;
    let inbox = approver.get_html("/approvals").await;
    assert!(inbox.contains("Waiting for you (3)"), "{inbox}");
    assert!(inbox.contains("10.00 USD") && inbox.contains("Payouts") && inbox.contains("op16@example.com"));
    let filtered = approver.get_html("/approvals?tab=all&status=executed").await;
    assert!(filtered.contains("No requests match"));

    // Approve asks to confirm first; reject needs a reason.
    let page = approver.get_html(&format!("/approvals/{}", ids[0])).await;
    let res = approver
        .http
        .post(approver.url(&format!("/approvals/{}/approve", ids[0])))
        .form(&[
            ("csrf_token", csrf_in(&page).as_str()),
            ("digest", digest_in(&page).as_str()),
        ])
        .send()
        .await
        .unwrap();
    assert!(res.text().await.unwrap().contains("Confirm your approval"));
    let res = decide(&approver, &ids[0], "reject", "  ").await;
    assert_eq!(res.status().as_u16(), 422);
    assert!(res.text().await.unwrap().contains("Say why you reject it"));

    // Bulk: two picked, confirmed by count, each decided.
    let picks: Vec<String> = ids[..2]
        .iter()
        .map(|id| {
            let digest = inbox
                .split(&format!("value=\"{id}:"))
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .to_owned();
            format!("{id}:{digest}")
        })
        .collect();
    let token = csrf_in(&inbox);
    let form = |confirmed: bool| {
        let mut fields = vec![("csrf_token".to_owned(), token.clone())];
        fields.extend(picks.iter().map(|p| ("pick".to_owned(), p.clone())));
        if confirmed {
            fields.push(("confirmed".to_owned(), "yes".to_owned()));
        }
        fields
    };
    let res = approver
        .http
        .post(approver.url("/approvals/bulk"))
        .form(&form(false))
        .send()
        .await
        .unwrap();
    assert!(res.text().await.unwrap().contains("Approve 2 requests?"));
    let res = approver
        .http
        .post(approver.url("/approvals/bulk"))
        .form(&form(true))
        .send()
        .await
        .unwrap();
    assert!(res.text().await.unwrap().contains("Approved 2 of 2 requests."));
    // The same picks again (a resent form): each is refused by name, and
    // nothing is approved twice.
    let again = approver
        .http
        .post(approver.url("/approvals/bulk"))
        .form(&form(true))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(again.contains("Approved 0 of 2 requests."), "{again}");
    assert!(
        again.contains("Pay 10 USDT"),
        "each refusal names its request: {again}"
    );
    assert!(again.contains("can no longer be decided"), "{again}");
    wait_for_finalize(&app, &ids[0]).await;
    wait_for_finalize(&app, &ids[1]).await;
    let inbox = approver.get_html("/approvals").await;
    assert!(inbox.contains("Waiting for you (1)"), "{inbox}");
}

/// Auditors and Viewers read requests (an auditor every kind, with its
/// timeline, every policy version and every event) and act on none.
#[tokio::test]
async fn auditors_and_viewers_read_requests_without_acting() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let operator = members(&app, "Operator", &["op17@example.com".into()])
        .await
        .remove(0);
    members(&app, "Approver", &["ap17@example.com".into()]).await;
    let auditor = members(&app, "Auditor", &["auditor17@example.com".into()])
        .await
        .remove(0);
    let viewer = members(&app, "Viewer", &["viewer17@example.com".into()])
        .await
        .remove(0);
    let id = request_id(&file_payout(&operator, "0123456789", "10").await);
    for reader in [&auditor, &viewer] {
        let page = reader.get(&format!("/approvals/{id}")).await;
        assert_eq!(page.status().as_u16(), 200);
        let page = page.text().await.unwrap();
        assert!(
            page.contains("Timeline") && !page.contains("Your decision"),
            "{page}"
        );
        let res = approve(reader, &id).await;
        assert_ne!(res.status().as_u16(), 303, "readers never decide");
        let all = reader.get_html("/approvals?tab=all").await;
        assert!(all.contains("Pay 10 USDT"), "{all}");
    }
    for path in ["/policies", "/events"] {
        assert_eq!(auditor.get(path).await.status().as_u16(), 200, "{path}");
    }
    let status: String = sqlx::query_scalar("SELECT status::text FROM action_requests WHERE id = $1::uuid")
        .bind(&id)
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(status, "pending");
}
