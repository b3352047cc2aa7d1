//! Transactions: filters, pagination across pages, lookups.

mod support;

use futures_util::TryStreamExt;
use paydesk_api::models::addresses::GenerateAddress;
use paydesk_api::models::control::SimulateDeposit;
use paydesk_api::models::transactions::{TransactionQuery, TransactionState};
use paydesk_api::units::{BaseUnits, Currency};
use reqwest::Method;

#[tokio::test]
async fn pages_through_every_transaction_newest_first() {
    let t = support::spawn().await;
    let address = t
        .client
        .generate_address(&GenerateAddress {
            chain: "bitcoin".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .address;
    for i in 1..=7 {
        t.client
            .sandbox_deposit(&SimulateDeposit {
                chain: "bitcoin".into(),
                address: address.clone(),
                currency: "BTC".into(),
                amount: BaseUnits(i * 1000),
            })
            .await
            .unwrap();
    }
    let btc = TransactionQuery {
        currency: Some(Currency::parse("BTC").unwrap()),
        limit: Some(3),
        ..Default::default()
    };
    let first = t.client.transactions(&btc).await.unwrap();
    assert_eq!(first.total_count, 8);
    assert_eq!(first.transactions.len(), 3);
    assert!(first.has_more);
    assert_eq!(first.previous_cursor, "");
    assert_eq!(first.transactions[0].amount, BaseUnits(7000));

    let all: Vec<_> = t
        .client
        .all_transactions(btc.clone())
        .try_collect()
        .await
        .unwrap();
    assert_eq!(all.len(), 8);
    let amounts: Vec<_> = all.iter().map(|tx| tx.amount.value()).collect();
    assert_eq!(amounts, [7000, 6000, 5000, 4000, 3000, 2000, 1000, 250_000_000]);

    let second = t
        .client
        .transactions(&TransactionQuery {
            cursor: Some(first.next_cursor.clone()),
            ..btc.clone()
        })
        .await
        .unwrap();
    assert_ne!(second.previous_cursor, "");
    let back = t
        .client
        .transactions(&TransactionQuery {
            cursor: Some(second.previous_cursor.clone()),
            ..btc.clone()
        })
        .await
        .unwrap();
    let ids = |p: &paydesk_api::models::transactions::TransactionPage| {
        p.transactions
            .iter()
            .map(|t| t.transaction_id)
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&back), ids(&first));

    let pending = TransactionQuery {
        status: Some(TransactionState::Pending),
        ..Default::default()
    };
    assert_eq!(t.client.transactions(&pending).await.unwrap().total_count, 7);
    let (status, body) = t
        .send(
            Method::GET,
            "/api/transactions?type=DEPOSIT_DETECTED&limit=100",
            "",
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["total_count"], 7);
}

#[tokio::test]
async fn bad_filters_and_unknown_ids_are_refused() {
    let t = support::spawn().await;
    for query in [
        "limit=0",
        "limit=101",
        "limit=ten",
        "type=GIFT",
        "status=DONE",
        "cursor=%%%",
    ] {
        let (status, body) = t
            .send(Method::GET, &format!("/api/transactions?{query}"), "")
            .await;
        assert_eq!(status, 400, "{query}");
        assert_eq!(body["code"], "VALIDATION_ERROR");
    }
    let err = t.client.transaction("no-such-reference").await.unwrap_err();
    assert_eq!(err.status(), Some(404));
    let err = t
        .client
        .transaction(&uuid::Uuid::new_v4().to_string())
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(404));
}
