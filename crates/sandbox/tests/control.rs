//! The control API's reset, snapshot, request journal and webhook
//! deliveries, over real HTTP.

mod support;

use paydesk_api::models::addresses::GenerateAddress;
use paydesk_api::models::control::SimulateDeposit;
use paydesk_api::units::BaseUnits;
use reqwest::Method;

async fn address(t: &support::TestSandbox) -> String {
    t.client
        .generate_address(&GenerateAddress {
            chain: "ethereum".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .address
}

async fn deposit(t: &support::TestSandbox, address: &str, amount: i64) {
    t.client
        .sandbox_deposit(&SimulateDeposit {
            chain: "ethereum".into(),
            address: address.to_owned(),
            currency: "USDT".into(),
            amount: BaseUnits(amount),
        })
        .await
        .unwrap();
}

async fn usdt(t: &support::TestSandbox) -> i64 {
    t.client.balance("USDT").await.unwrap().available_balance.value()
}

#[tokio::test]
async fn reset_puts_the_company_back_to_its_fixture() {
    let t = support::spawn().await;
    let opening = usdt(&t).await;
    let a = address(&t).await;
    deposit(&t, &a, 5_000_000).await;
    t.client.sandbox_advance_clock(60).await.unwrap();
    assert_eq!(usdt(&t).await, opening + 5_000_000);

    let done = t.client.sandbox_reset().await.unwrap();
    assert_eq!(usdt(&t).await, opening);
    let (status, list) = t.send(Method::GET, "/api/addresses", "").await;
    assert_eq!(status, 200);
    assert_eq!(
        list["data"]["addresses"].as_array().map(Vec::len),
        Some(0),
        "{list}"
    );
    assert!(done.reset_at <= t.client.sandbox_clock().await.unwrap().now);
    // A step pending at the reset never runs on the fresh state.
    deposit(&t, &address(&t).await, 1_000).await;
    t.client.sandbox_reset().await.unwrap();
    t.client.sandbox_advance_clock(600).await.unwrap();
    assert_eq!(usdt(&t).await, opening);
}

#[tokio::test]
async fn a_snapshot_restores_the_state_and_its_pending_steps() {
    let t = support::spawn().await;
    let opening = usdt(&t).await;
    let a = address(&t).await;
    deposit(&t, &a, 7_000_000).await;
    let snapshot = t.client.sandbox_snapshot().await.unwrap();
    assert_eq!(snapshot["snapshot_version"], 1);

    t.client.sandbox_reset().await.unwrap();
    t.client.sandbox_restore(&snapshot).await.unwrap();
    let (_, list) = t.send(Method::GET, "/api/addresses", "").await;
    assert_eq!(list["data"]["addresses"][0]["address"], a);
    // The deposit pending in the snapshot confirms after the restore.
    t.client.sandbox_advance_clock(60).await.unwrap();
    assert_eq!(usdt(&t).await, opening + 7_000_000);

    let mut wrong = snapshot.clone();
    wrong["snapshot_version"] = 99.into();
    let (status, problem) = t.send(Method::PUT, "/sandbox/snapshot", &wrong.to_string()).await;
    assert_eq!(status, 400);
    assert_eq!(problem["errors"][0]["field"], "snapshot_version");
    assert!(problem["detail"].as_str().unwrap().contains("version 99"));
    let (status, problem) = t
        .send(Method::PUT, "/sandbox/snapshot", r#"{"hello": "world"}"#)
        .await;
    assert_eq!(status, 400);
    assert!(problem["detail"]
        .as_str()
        .unwrap()
        .contains("not a sandbox snapshot"));
    assert_eq!(
        usdt(&t).await,
        opening + 7_000_000,
        "a refused restore changes nothing"
    );
}

#[tokio::test]
async fn the_journal_shows_calls_newest_first_with_secrets_masked() {
    let t = support::spawn().await;
    let (status, _) = t
        .send(
            Method::PUT,
            "/sandbox/webhook",
            r#"{"url": "http://127.0.0.1:9/hook", "secret": "whsec_very_secret"}"#,
        )
        .await;
    assert_eq!(status, 200);
    let (status, _) = t.send(Method::GET, "/api/balances/XYZ", "").await;
    assert_eq!(status, 404);
    let journal = t.client.sandbox_requests(Some(10)).await.unwrap().requests;
    assert_eq!(journal[0].path, "/api/balances/XYZ");
    assert_eq!(journal[0].status, 404);
    assert_eq!(journal[0].response_body["code"], "NOT_FOUND");
    assert_eq!(journal[1].method, "PUT");
    assert_eq!(journal[1].request_body["secret"], "[masked]");
    assert_eq!(journal[1].request_body["url"], "http://127.0.0.1:9/hook");
    assert!(!journal[1].request_id.is_empty());
    assert!(journal.iter().all(|e| e.path != "/sandbox/requests"));
    let (status, _) = t.send(Method::GET, "/sandbox/requests?limit=0", "").await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn deliveries_show_their_attempts_and_can_be_resent() {
    let t = support::spawn().await;
    let receiver = support::Receiver::start(4).await;
    t.client.sandbox_set_webhook(&receiver.url, None).await.unwrap();
    let a = address(&t).await;
    deposit(&t, &a, 1_000).await;
    t.client.sandbox_advance_clock(86_400).await.unwrap();
    let list = t.client.sandbox_webhook_deliveries().await.unwrap().deliveries;
    let d = &list[0];
    assert_eq!(d.event, "deposit.success");
    assert_eq!(d.url, receiver.url);
    assert_eq!(d.status.as_str(), "failed");
    assert_eq!(d.attempts.len(), 4);
    assert!(d.attempts.iter().all(|a| a.status_code == Some(500)));

    let resent = t.client.sandbox_resend_delivery(d.id).await.unwrap();
    assert_eq!(resent.status.as_str(), "delivered");
    assert_eq!(resent.attempts.len(), 5);
    assert_eq!(resent.attempts[4].status_code, Some(200));
    let all = receiver.deliveries();
    assert_eq!(all.len(), 5);
    assert_eq!(all[4].json["event_id"], all[0].json["event_id"]);

    let (status, _) = t
        .send(Method::POST, "/sandbox/webhooks/deliveries/999999/resend", "")
        .await;
    assert_eq!(status, 404);
}

/// A sandbox whose demo company also has clients scoped to `permissions`
/// (the first is the full-access demo client).
async fn with_scoped(scopes: &[&[&str]]) -> (support::TestSandbox, Vec<paydesk_api::Client>) {
    use paydesk_sandbox::fixture::{ClientFixture, Fixture};
    let mut fixture = Fixture::demo();
    let mut ids = Vec::new();
    for (n, scope) in scopes.iter().enumerate() {
        let id = uuid::Uuid::new_v4();
        fixture.companies[0].clients.push(ClientFixture {
            client_id: id,
            client_secret: format!("scoped-secret-{n}"),
            name: format!("Scoped {n}"),
            active: true,
            permissions: Some(scope.iter().map(|s| (*s).to_owned()).collect()),
            environment: paydesk_api::models::identity::Environment::Sandbox,
        });
        ids.push((id.to_string(), format!("scoped-secret-{n}")));
    }
    let t = support::spawn_with(fixture).await;
    let clients = ids
        .iter()
        .map(|(id, secret)| support::client_for(&t.sandbox, id, secret))
        .collect();
    (t, clients)
}

#[tokio::test]
async fn control_routes_need_the_control_scope_and_the_snapshot_the_card_scope() {
    use paydesk_api::models::control::CONTROL_PERMISSION;
    let (t, clients) = with_scoped(&[
        &["balances:read"],
        &[CONTROL_PERMISSION],
        &[CONTROL_PERMISSION, "cards:read", "cards:write"],
    ])
    .await;
    let (balances_only, control, control_and_cards) = (&clients[0], &clients[1], &clients[2]);
    let target = address(&t).await;
    let forbidden = |e: paydesk_api::ApiError| {
        assert_eq!(e.status(), Some(403), "{e:?}");
        assert!(e.problem().unwrap().detail.contains("sandbox:control"), "{e:?}");
    };
    // Without the scope, nothing of the control API runs.
    forbidden(balances_only.sandbox_reset().await.unwrap_err());
    forbidden(balances_only.sandbox_snapshot().await.unwrap_err());
    forbidden(balances_only.sandbox_advance_clock(60).await.unwrap_err());
    forbidden(balances_only.sandbox_clock().await.unwrap_err());
    forbidden(
        balances_only
            .sandbox_set_webhook("http://127.0.0.1:9/hook", None)
            .await
            .unwrap_err(),
    );
    forbidden(
        balances_only
            .sandbox_deposit(&SimulateDeposit {
                chain: "ethereum".into(),
                address: target.clone(),
                currency: "USDT".into(),
                amount: BaseUnits(1),
            })
            .await
            .unwrap_err(),
    );
    forbidden(balances_only.sandbox_clear_faults().await.unwrap_err());
    assert!(balances_only.balances().await.is_ok());
    let snapshot = t.client.sandbox_snapshot().await.unwrap();
    forbidden(balances_only.sandbox_restore(&snapshot).await.unwrap_err());
    assert_eq!(
        t.client
            .transactions(&Default::default())
            .await
            .unwrap()
            .total_count,
        4,
        "nothing was minted"
    );

    // With it, the control API works, but a snapshot (card numbers and
    // CVVs) needs the card scope as well.
    assert!(control.sandbox_advance_clock(1).await.is_ok());
    let e = control.sandbox_snapshot().await.unwrap_err();
    assert_eq!(e.status(), Some(403));
    assert!(e.problem().unwrap().detail.contains("cards:read"));
    let e = control.sandbox_restore(&snapshot).await.unwrap_err();
    assert!(e.problem().unwrap().detail.contains("cards:write"));
    let read = control_and_cards.sandbox_snapshot().await.unwrap();
    assert_eq!(read["company_id"], snapshot["company_id"]);
    assert!(control_and_cards.sandbox_restore(&read).await.is_ok());
}
