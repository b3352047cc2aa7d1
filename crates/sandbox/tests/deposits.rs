//! The deposit flow driven by the sandbox clock, and webhook delivery with
//! retries, over real HTTP.

mod support;

use paydesk_api::models::addresses::GenerateAddress;
use paydesk_api::models::control::SimulateDeposit;
use paydesk_api::models::transactions::{TransactionQuery, TransactionState, TransactionType};
use paydesk_api::units::BaseUnits;
use paydesk_api::webhook::verify_webhook;

async fn deposit_address(t: &support::TestSandbox) -> String {
    let a = t
        .client
        .generate_address(&GenerateAddress {
            chain: "ethereum".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    a.address
}

fn deposit(address: &str, amount: i64) -> SimulateDeposit {
    SimulateDeposit {
        chain: "ethereum".into(),
        address: address.to_owned(),
        currency: "USDT".into(),
        amount: BaseUnits(amount),
    }
}

#[tokio::test]
async fn a_deposit_is_detected_then_confirmed_when_the_clock_moves() {
    let t = support::spawn().await;
    let receiver = support::Receiver::start(0).await;
    t.client
        .sandbox_set_webhook(&receiver.url, Some("whsec_test"))
        .await
        .unwrap();
    let address = deposit_address(&t).await;

    let detected = t
        .client
        .sandbox_deposit(&deposit(&address, 25_000_000))
        .await
        .unwrap();
    assert_eq!(detected.kind, TransactionType::DepositDetected);
    assert_eq!(detected.state, TransactionState::Pending);
    for key in [
        "address",
        "chain",
        "channel",
        "company_id",
        "deposit_type",
        "explorer_url",
        "tx_hash",
        "original_amount",
        "settlement_type",
        "is_simulated",
    ] {
        assert!(detected.metadata.contains_key(key), "metadata.{key}");
    }
    let balance = t.client.balance("USDT").await.unwrap();
    assert_eq!(balance.pending_balance, BaseUnits(25_000_000));
    assert_eq!(balance.available_balance, BaseUnits(10_000_000_000));
    assert_eq!(balance.total_balance, BaseUnits(10_025_000_000));

    t.client.sandbox_advance_clock(5).await.unwrap();
    let still = t
        .client
        .transaction(&detected.transaction_id.to_string())
        .await
        .unwrap();
    assert_eq!(still.state, TransactionState::Pending, "not confirmed after 5 s");
    assert!(receiver.deliveries().is_empty());

    t.client.sandbox_advance_clock(300).await.unwrap();
    let confirmed = t.client.transaction(&detected.reference).await.unwrap();
    assert_eq!(confirmed.transaction_id, detected.transaction_id);
    assert_eq!(confirmed.kind, TransactionType::DepositConfirmed);
    assert_eq!(confirmed.state, TransactionState::Settled);
    let balance = t.client.balance("USDT").await.unwrap();
    assert_eq!(balance.pending_balance, BaseUnits(0));
    assert_eq!(balance.available_balance, BaseUnits(10_025_000_000));

    let deliveries = receiver.deliveries();
    assert_eq!(
        deliveries.len(),
        1,
        "the first attempt is made within the advance"
    );
    let event = &deliveries[0];
    assert!(verify_webhook("whsec_test", &event.body, &event.signature));
    assert_eq!(event.json["event"], "deposit.success");
    assert_eq!(
        event.json["data"]["transaction_id"],
        detected.transaction_id.to_string()
    );
    for key in ["event_id", "company_id", "created_at"] {
        assert!(event.json[key].is_string(), "{key}");
    }

    let confirmed_only = TransactionQuery {
        kind: Some(TransactionType::DepositConfirmed),
        currency: Some(paydesk_api::units::Currency::parse("USDT").unwrap()),
        ..Default::default()
    };
    let page = t.client.transactions(&confirmed_only).await.unwrap();
    assert_eq!(page.total_count, 2, "the opening balance and the deposit");
}

#[tokio::test]
async fn a_receiver_that_fails_twice_gets_the_same_event_three_times() {
    let t = support::spawn().await;
    let receiver = support::Receiver::start(2).await;
    t.client.sandbox_set_webhook(&receiver.url, None).await.unwrap();
    let address = deposit_address(&t).await;
    t.client
        .sandbox_deposit(&deposit(&address, 1_000_000))
        .await
        .unwrap();

    t.client.sandbox_advance_clock(60).await.unwrap();
    assert_eq!(receiver.deliveries().len(), 1);
    t.client.sandbox_advance_clock(86_400).await.unwrap();
    let deliveries = receiver.deliveries();
    assert_eq!(
        deliveries.len(),
        3,
        "two failures, then a success, then nothing more"
    );
    let ids: Vec<_> = deliveries.iter().map(|d| d.json["event_id"].clone()).collect();
    assert!(ids.iter().all(|id| id == &ids[0]));
    // Signed with the first client's secret when no webhook secret is set.
    assert!(deliveries
        .iter()
        .all(|d| verify_webhook(&t.secret, &d.body, &d.signature)));
}

#[tokio::test]
async fn a_receiver_that_never_answers_200_gets_four_attempts() {
    let t = support::spawn().await;
    let receiver = support::Receiver::start(usize::MAX).await;
    t.client.sandbox_set_webhook(&receiver.url, None).await.unwrap();
    let address = deposit_address(&t).await;
    t.client
        .sandbox_deposit(&deposit(&address, 1_000_000))
        .await
        .unwrap();
    t.client.sandbox_advance_clock(86_400).await.unwrap();
    assert_eq!(receiver.deliveries().len(), 4);
}

#[tokio::test]
async fn deposits_are_refused_to_foreign_addresses_and_bad_amounts() {
    let t = support::spawn().await;
    let err = t
        .client
        .sandbox_deposit(&deposit("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", 1))
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(404));
    let address = deposit_address(&t).await;
    for amount in [0, -5] {
        let err = t
            .client
            .sandbox_deposit(&deposit(&address, amount))
            .await
            .unwrap_err();
        assert_eq!(err.status(), Some(400));
    }
    let err = t
        .client
        .sandbox_set_webhook("http://example.com/hook", None)
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(400));
    assert_eq!(err.problem().unwrap().errors[0].field, "url");
}
