//! Faults on webhook deliveries (drop, duplicate, delay, out of order) and
//! call faults drawn by a seeded chance, over real HTTP.

mod support;

use paydesk_api::models::addresses::GenerateAddress;
use paydesk_api::models::control::{AddChanceFault, AddWebhookFault, SimulateDeposit};
use paydesk_api::units::BaseUnits;

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

/// A deposit of `amount`: its `deposit.success` goes out 60 s later.
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

fn webhook_fault(mode: &str) -> AddWebhookFault {
    AddWebhookFault {
        mode: mode.into(),
        event: Some("deposit.".into()),
        count: 1,
        ..Default::default()
    }
}

/// The amounts of the deposits the receiver got, in order of arrival.
fn amounts(receiver: &support::Receiver) -> Vec<String> {
    receiver
        .deliveries()
        .iter()
        .map(|d| d.json["data"]["amount"].to_string())
        .collect()
}

async fn armed(t: &support::TestSandbox, receiver: &support::Receiver, mode: &str) -> String {
    t.client.sandbox_set_webhook(&receiver.url, None).await.unwrap();
    let listed = t
        .client
        .sandbox_add_webhook_fault(&webhook_fault(mode))
        .await
        .unwrap();
    assert_eq!(listed.faults[0].mode, mode);
    address(t).await
}

#[tokio::test]
async fn a_dropped_delivery_never_arrives_and_shows_failed_until_resent() {
    let t = support::spawn().await;
    let receiver = support::Receiver::start(0).await;
    let a = armed(&t, &receiver, "drop").await;
    deposit(&t, &a, 1_000).await;
    t.client.sandbox_advance_clock(86_400).await.unwrap();
    assert!(receiver.deliveries().is_empty(), "dropped, and not retried");
    let d = t.client.sandbox_webhook_deliveries().await.unwrap().deliveries[0].clone();
    assert_eq!(
        (d.event.as_str(), d.status.as_str()),
        ("deposit.success", "failed")
    );
    assert!(d.attempts[0].error.as_deref().unwrap().contains("dropped"));
    assert!(
        t.client.sandbox_webhook_faults().await.unwrap().faults.is_empty(),
        "used up"
    );
    // The next event is not dropped; a resend delivers the dropped one.
    deposit(&t, &a, 2_000).await;
    t.client.sandbox_advance_clock(60).await.unwrap();
    assert_eq!(receiver.deliveries().len(), 1);
    let resent = t.client.sandbox_resend_delivery(d.id).await.unwrap();
    assert_eq!(resent.status.as_str(), "delivered");
    assert_eq!(receiver.deliveries().len(), 2);
}

#[tokio::test]
async fn a_duplicated_delivery_arrives_twice_with_one_event_id_and_signature() {
    let t = support::spawn().await;
    let receiver = support::Receiver::start(0).await;
    let a = armed(&t, &receiver, "duplicate").await;
    deposit(&t, &a, 1_000).await;
    t.client.sandbox_advance_clock(60).await.unwrap();
    let got = receiver.deliveries();
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].json["event_id"], got[1].json["event_id"]);
    assert_eq!(got[0].body, got[1].body);
    assert_eq!(got[0].signature, got[1].signature);
}

#[tokio::test]
async fn a_delayed_delivery_waits_its_sandbox_seconds() {
    let t = support::spawn().await;
    let receiver = support::Receiver::start(0).await;
    let a = armed(&t, &receiver, "delay_s:120").await;
    deposit(&t, &a, 1_000).await;
    t.client.sandbox_advance_clock(60).await.unwrap();
    t.client.sandbox_advance_clock(100).await.unwrap();
    assert!(receiver.deliveries().is_empty(), "due 120 s after the event");
    t.client.sandbox_advance_clock(30).await.unwrap();
    assert_eq!(receiver.deliveries().len(), 1);
}

#[tokio::test]
async fn an_out_of_order_delivery_arrives_after_the_next_event() {
    let t = support::spawn().await;
    let receiver = support::Receiver::start(0).await;
    let a = armed(&t, &receiver, "out_of_order").await;
    deposit(&t, &a, 1_000).await;
    t.client.sandbox_advance_clock(30).await.unwrap();
    deposit(&t, &a, 2_000).await;
    t.client.sandbox_advance_clock(60).await.unwrap();
    assert_eq!(amounts(&receiver), ["\"2000\"", "\"1000\""]);

    // With no later event, a held delivery goes out 300 s after it.
    t.client
        .sandbox_add_webhook_fault(&webhook_fault("out_of_order"))
        .await
        .unwrap();
    deposit(&t, &a, 3_000).await;
    t.client.sandbox_advance_clock(60).await.unwrap();
    assert_eq!(receiver.deliveries().len(), 2);
    t.client.sandbox_advance_clock(300).await.unwrap();
    assert_eq!(receiver.deliveries().len(), 3);
}

#[tokio::test]
async fn webhook_faults_are_refused_when_malformed_and_cleared_on_request() {
    let t = support::spawn().await;
    for (body, field) in [
        (r#"{"mode": "explode", "count": 1}"#, "mode"),
        (r#"{"mode": "delay_s:0", "count": 1}"#, "mode"),
        (r#"{"mode": "drop", "count": 0}"#, "count"),
        (r#"{"mode": "drop", "count": 1, "probability": 2}"#, "probability"),
    ] {
        let (status, answer) = t
            .send(reqwest::Method::POST, "/sandbox/webhooks/faults", body)
            .await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(answer["errors"][0]["field"], field, "{body}");
    }
    t.client
        .sandbox_add_webhook_fault(&webhook_fault("drop"))
        .await
        .unwrap();
    assert!(t
        .client
        .sandbox_clear_webhook_faults()
        .await
        .unwrap()
        .faults
        .is_empty());
    assert!(t.client.sandbox_webhook_faults().await.unwrap().faults.is_empty());
}

/// Which of `n` balance reads fail.
async fn pattern(t: &support::TestSandbox, n: usize) -> Vec<bool> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(t.client.balance("USDT").await.is_err());
    }
    out
}

#[tokio::test]
async fn a_seeded_chance_fault_fails_the_same_calls_every_run() {
    let t = support::spawn().await;
    let chaos = AddChanceFault {
        method: "GET".into(),
        path_prefix: "/api/balances".into(),
        mode: "503".into(),
        count: 1_000,
        probability: 0.4,
        seed: Some(20261125),
    };
    let listed = t.client.sandbox_add_chance_fault(&chaos).await.unwrap();
    assert_eq!(listed.faults[0].seed, Some(20261125));
    assert_eq!(listed.faults[0].probability, Some(0.4));
    let first = pattern(&t, 40).await;
    t.client.sandbox_clear_faults().await.unwrap();
    t.client.sandbox_add_chance_fault(&chaos).await.unwrap();
    let second = pattern(&t, 40).await;
    assert_eq!(first, second, "the same seed, the same faults");
    let failed = first.iter().filter(|f| **f).count();
    assert!((5..=30).contains(&failed), "{failed} of 40 failed at 0.4");
    // Without a seed one is drawn, and shown so the run can be repeated.
    t.client.sandbox_clear_faults().await.unwrap();
    let listed = t
        .client
        .sandbox_add_chance_fault(&AddChanceFault { seed: None, ..chaos })
        .await
        .unwrap();
    assert!(listed.faults[0].seed.is_some());
}
