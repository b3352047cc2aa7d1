//! Onchain payouts through the gate: funded by a deposit to the address
//! the payout is given, waited for (a state read back, not a failure), and
//! finalized exactly once when the deposit is confirmed.

use paydesk_api::models::control::SimulateDeposit;
use paydesk_api::units::BaseUnits;

use crate::approvals::{approve, members, request_id, wait_for_status};
use crate::helpers::{eventually, spawn_app, TestApp};

async fn file_onchain(maker: &TestApp, asset: &str, chain: &str) -> reqwest::Response {
    maker
        .post_form(
            "/payouts/new?country=NG",
            "/payouts",
            &[
                ("country", "NG"),
                ("from_asset", asset),
                ("amount", "10"),
                ("bank_code", "058"),
                ("account_number", "0123456789"),
                ("account_name", "Ada Okafor"),
                ("payment_reason", "salary"),
                ("source", "onchain"),
                ("chain", chain),
            ],
        )
        .await
}

/// The sandbox's answers to finalize calls, newest first.
async fn finalizes(app: &TestApp) -> Vec<u16> {
    let journal = app.sandbox().await.sandbox_requests(None).await.unwrap();
    journal
        .requests
        .iter()
        .filter(|r| r.method == "POST" && r.path.ends_with("/finalize"))
        .map(|r| r.status)
        .collect()
}

async fn progress(app: &TestApp, request: &str, path: &str) -> Option<String> {
    sqlx::query_scalar("SELECT progress #>> $2::text[] FROM action_requests WHERE id = $1::uuid")
        .bind(request)
        .bind(path.split('.').collect::<Vec<_>>())
        .fetch_one(&app.pool)
        .await
        .unwrap()
}

/// A deposit of `units` (USDT base units) to `address` on Tron, confirmed.
async fn deposit(app: &TestApp, address: &str, units: i64) {
    let sandbox = app.sandbox().await;
    sandbox
        .sandbox_deposit(&SimulateDeposit {
            chain: "tron".into(),
            address: address.to_owned(),
            currency: "USDT".into(),
            amount: BaseUnits(units),
        })
        .await
        .unwrap();
    // Confirmation comes 60 s of sandbox time later, with `deposit.success`.
    sandbox.sandbox_advance_clock(60).await.unwrap();
}

#[tokio::test]
async fn an_onchain_payout_waits_for_its_deposit_then_pays_out_once() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let operator = members(&app, "Operator", &["chain-maker@example.com".into()])
        .await
        .remove(0);
    let approver = members(&app, "Approver", &["chain-checker@example.com".into()])
        .await
        .remove(0);
    let form = operator.get_html("/payouts/new?country=NG").await;
    assert!(
        form.contains(r#"name="source" value="onchain""#) && form.contains("Tron (USDT, USDC)"),
        "{form}"
    );

    let res = file_onchain(&operator, "USDT", "TRON").await;
    assert_eq!(res.status().as_u16(), 303);
    let id = request_id(&res);
    let page = approver.get_html(&format!("/approvals/{id}")).await;
    assert!(
        page.contains("Funded by") && page.contains("an onchain deposit on Tron"),
        "the approvers see how it is funded: {page}"
    );
    approve(&approver, &id).await;

    // Initialized: the payout has its address and waits; nothing failed.
    let address = eventually("the deposit address to be saved", || async {
        progress(&app, &id, "deposit.address").await
    })
    .await;
    wait_for_status(&app, &id, "executing").await;
    let payout_id = progress(&app, &id, "payout_id").await.unwrap();
    let sandbox = app.sandbox().await;
    assert_eq!(
        sandbox.payout(&payout_id).await.unwrap().status.as_str(),
        "INITIATED"
    );
    // A read-back may try finalize already (its `payouts.initialized`
    // event wakes the run); the service refuses it and nothing moves.
    let tried = finalizes(&app).await;
    assert!(tried.iter().all(|s| *s == 422), "not finalized: {tried:?}");
    let page = operator.get_html(&format!("/approvals/{id}")).await;
    for shown in [
        "Waiting for the deposit",
        "10.1 USDT",
        "Tron",
        address.as_str(),
        &format!(r#"data-copy="{address}""#),
        "<svg",
        r#"hx-trigger="every 2s""#,
    ] {
        assert!(page.contains(shown), "the page shows {shown}: {page}");
    }
    let list = operator.get_html("/payouts").await;
    assert!(list.contains("Waiting for the deposit"), "{list}");

    // Too little arrives: finalize is refused, the payout waits on.
    let refused = finalizes(&app).await.len();
    deposit(&app, &address, 5_000_000).await;
    eventually("finalize to be refused for the short deposit", || async {
        let answers = finalizes(&app).await;
        assert!(answers.iter().all(|s| *s == 422), "{answers:?}");
        (answers.len() > refused).then_some(())
    })
    .await;
    wait_for_status(&app, &id, "executing").await;
    assert!(operator
        .get_html(&format!("/approvals/{id}"))
        .await
        .contains("Waiting for the deposit"));

    // The rest arrives: finalize goes through, once, as an offchain one.
    deposit(&app, &address, 5_100_000).await;
    eventually("the payout to be finalized", || async {
        (progress(&app, &id, "payout_status").await.as_deref() == Some("PENDING")).then_some(())
    })
    .await;
    sandbox.sandbox_settle_payout(&payout_id, true).await.unwrap();
    wait_for_status(&app, &id, "executed").await;
    let answers = finalizes(&app).await;
    assert_eq!(
        answers.iter().filter(|s| **s == 200).count(),
        1,
        "finalized exactly once: {answers:?}"
    );
    let reference = sandbox.payout(&payout_id).await.unwrap().reference;
    let debit = sandbox.transaction(&reference).await.unwrap();
    assert_eq!(debit.amount.value(), -10_000_000);
    let page = operator.get_html(&format!("/approvals/{id}")).await;
    assert_eq!(
        page.matches("<strong>waiting for the deposit</strong>").count(),
        1,
        "one timeline entry for the wait: {page}"
    );
    assert!(
        page.contains(&format!(
            "<strong>waiting for the deposit</strong> of 10.1 USDT on Tron to {address}"
        )),
        "{page}"
    );
    assert!(
        page.contains("COMPLETED") && !page.contains("awaited-deposit"),
        "{page}"
    );
}

#[tokio::test]
async fn a_chain_that_cant_carry_the_asset_is_refused_at_the_form() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let res = file_onchain(&app, "BTC", "TRON").await;
    assert_eq!(res.status().as_u16(), 422);
    let page = res.text().await.unwrap();
    assert!(
        page.contains("be deposited on Tron; choose one of: Bitcoin."),
        "{page}"
    );
    let res = file_onchain(&app, "USDT", "").await;
    assert_eq!(res.status().as_u16(), 422);
    let page = res.text().await.unwrap();
    assert!(
        page.contains("Choose the network the deposit will come on."),
        "{page}"
    );
    let filed: i64 = sqlx::query_scalar("SELECT count(*) FROM action_requests WHERE kind = 'payout'")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(filed, 0, "nothing was filed");
}

#[tokio::test]
async fn a_quote_that_expires_while_waiting_ends_the_request_as_failed() {
    let mut app = spawn_app().await;
    app.sign_in_as_admin().await;
    let operator = members(&app, "Operator", &["late-maker@example.com".into()])
        .await
        .remove(0);
    let approver = members(&app, "Approver", &["late-checker@example.com".into()])
        .await
        .remove(0);
    let id = request_id(&file_onchain(&operator, "USDT", "TRON").await);
    approve(&approver, &id).await;
    let address = eventually("the deposit address to be saved", || async {
        progress(&app, &id, "deposit.address").await
    })
    .await;
    // Quotes are valid 15 minutes of sandbox time; no deposit came.
    app.sandbox().await.sandbox_advance_clock(16 * 60).await.unwrap();
    wait_for_status(&app, &id, "failed").await;
    let reason = crate::approvals::failure_reason_of(&app, &id).await;
    assert!(
        reason.starts_with("The quote expired before the deposit of 10.1 USDT on Tron")
            && reason.contains(&address)
            && reason.contains("nothing was paid out"),
        "{reason}"
    );
    assert!(!finalizes(&app).await.contains(&200), "nothing was finalized");
    let page = operator.get_html(&format!("/approvals/{id}")).await;
    assert!(!page.contains("awaited-deposit"), "{page}");
}
