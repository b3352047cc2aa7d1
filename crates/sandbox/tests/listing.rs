//! Lists never ignore a filter (sandbox-rules.md, Listing): every known
//! filter filters, an unknown one is a 400 naming it, and `page` pages.

mod support;

use paydesk_api::models::addresses::GenerateAddress;
use paydesk_api::models::control::SimulateDeposit;
use paydesk_api::models::customers::{KycDetails, NewCustomer};
use paydesk_api::units::BaseUnits;
use reqwest::Method;
use serde_json::{json, Value};

/// The ids of `data.<key>[]` (field `id_key` of each record).
fn ids(body: &Value, key: &str, id_key: &str) -> Vec<String> {
    body["data"][key]
        .as_array()
        .unwrap_or_else(|| panic!("data.{key} in {body}"))
        .iter()
        .map(|r| r[id_key].as_str().unwrap().to_owned())
        .collect()
}

/// Asserts a 400 naming `field`.
fn refused_naming(status: u16, body: &Value, field: &str) {
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["code"], "VALIDATION_ERROR");
    assert_eq!(body["errors"][0]["field"], field, "{body}");
}

#[tokio::test]
async fn an_unknown_filter_is_refused_by_name_on_every_list() {
    let t = support::spawn().await;
    for path in [
        "/api/balances",
        "/api/transactions",
        "/api/addresses",
        "/api/customers",
        "/api/cards",
        "/api/beneficiaries",
        "/api/payouts",
        "/api/payouts/",
        "/api/withdrawals",
        "/api/virtual-accounts",
        "/api/bulk-transfers",
        "/api/bulk-transfers/schedules",
        "/api/trading/orders",
        "/api/trading/scheduled-orders",
        "/api/trading/target-orders",
        "/api/lightning/invoices",
        "/sandbox/requests",
        "/sandbox/webhooks/deliveries",
    ] {
        let (status, body) = t.send(Method::GET, &format!("{path}?colour=red"), "").await;
        refused_naming(status, &body, "colour");
        assert!(
            body["detail"].as_str().unwrap().contains("colour"),
            "{path}: {body}"
        );
    }
    // The known paging parameters are not refused.
    let (status, _) = t.send(Method::GET, "/api/transactions?page=1&limit=5", "").await;
    assert_eq!(status, 200);
    let (status, body) = t.send(Method::GET, "/api/transactions?page=0", "").await;
    refused_naming(status, &body, "page");
    // A list answered whole pages too once asked: 4 wallets, pages of 3.
    let (_, second) = t.send(Method::GET, "/api/balances?limit=3&page=2", "").await;
    assert_eq!(second["data"]["accounts"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn transactions_filter_by_hash_channel_action_wallet_and_customer_reference() {
    let t = support::spawn().await;
    let address = t
        .client
        .generate_address(&GenerateAddress {
            chain: "ethereum".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let deposit = |amount: i64| SimulateDeposit {
        chain: "ethereum".into(),
        address: address.address.clone(),
        currency: "USDT".into(),
        amount: BaseUnits(amount),
    };
    let first = t.client.sandbox_deposit(&deposit(1_000_000)).await.unwrap();
    let second = t.client.sandbox_deposit(&deposit(2_000_000)).await.unwrap();
    let hash = first.metadata["tx_hash"].as_str().unwrap().to_owned();

    let (status, body) = t
        .send(Method::GET, &format!("/api/transactions?hash={hash}"), "")
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        ids(&body, "transactions", "transaction_id"),
        [first.transaction_id.to_string()]
    );
    assert_eq!(body["data"]["total_count"], 1);

    let (_, body) = t
        .send(Method::GET, "/api/transactions?channel=BLOCKCHAIN", "")
        .await;
    assert_eq!(
        ids(&body, "transactions", "transaction_id"),
        [
            second.transaction_id.to_string(),
            first.transaction_id.to_string()
        ]
    );
    // The demo company's opening balances are credits; nothing is a debit yet.
    let (_, body) = t.send(Method::GET, "/api/transactions?action=debit", "").await;
    assert_eq!(body["data"]["total_count"], 0);
    let (_, body) = t.send(Method::GET, "/api/transactions?action=credit", "").await;
    assert_eq!(body["data"]["total_count"], 6, "4 openings and 2 deposits");
    let (status, body) = t.send(Method::GET, "/api/transactions?action=sideways", "").await;
    refused_naming(status, &body, "action");

    let usdt = t.client.balance("USDT").await.unwrap();
    let (_, body) = t
        .send(
            Method::GET,
            &format!("/api/transactions?wallet_id={}", usdt.account_number),
            "",
        )
        .await;
    assert_eq!(body["data"]["total_count"], 3, "the USDT opening and 2 deposits");
    let (_, body) = t.send(Method::GET, "/api/transactions?wallet_id=nope", "").await;
    assert_eq!(body["data"]["total_count"], 0);
    let (_, body) = t
        .send(Method::GET, "/api/transactions?customer_reference=c-1", "")
        .await;
    assert_eq!(body["data"]["total_count"], 0, "no transaction names one");
}

#[tokio::test]
async fn page_pages_instead_of_being_ignored() {
    let t = support::spawn().await;
    let mut made = Vec::new();
    for n in 0..3 {
        let c = t
            .client
            .create_customer(&NewCustomer {
                email: format!("p{n}@example.com"),
                customer_type: "individual".into(),
                ..NewCustomer::default()
            })
            .await
            .unwrap();
        made.push(c.id.to_string());
    }
    let (_, first) = t.send(Method::GET, "/api/customers?limit=2&page=1", "").await;
    let (_, second) = t.send(Method::GET, "/api/customers?limit=2&page=2", "").await;
    assert_eq!(ids(&first, "customers", "id"), [made[2].clone(), made[1].clone()]);
    assert_eq!(ids(&second, "customers", "id"), [made[0].clone()]);
    assert_eq!(second["data"]["total"], 3);
    // A cursor wins over a page.
    let cursor = first["data"]["next_cursor"].as_str().unwrap();
    let (_, by_cursor) = t
        .send(
            Method::GET,
            &format!("/api/customers?limit=2&page=1&cursor={cursor}"),
            "",
        )
        .await;
    assert_eq!(ids(&by_cursor, "customers", "id"), [made[0].clone()]);
}

#[tokio::test]
async fn cards_filter_by_customer_and_page_by_offset() {
    let t = support::spawn().await;
    let mut customers = Vec::new();
    for email in ["a@example.com", "b@example.com"] {
        let c = t
            .client
            .create_customer(&NewCustomer {
                email: email.into(),
                customer_type: "individual".into(),
                first_name: Some("Ada".into()),
                last_name: Some("Okafor".into()),
                ..NewCustomer::default()
            })
            .await
            .unwrap();
        t.client
            .submit_card_kyc(
                &c.id.to_string(),
                &KycDetails {
                    country: "NGA".into(),
                    date_of_birth: "1990-04-01".into(),
                    id_type: "national_id".into(),
                    id_number: "A1234567".into(),
                    dial_code: "+234".into(),
                    phone_number: "8012345678".into(),
                    line1: "1 Marina".into(),
                    city: "Lagos".into(),
                    state: "Lagos".into(),
                    postal_code: "100001".into(),
                },
            )
            .await
            .unwrap();
        customers.push(c.id.to_string());
    }
    t.client.sandbox_advance_clock(60).await.unwrap();
    let mut cards = Vec::new();
    for customer in &customers {
        let body =
            json!({"amount": 5_000_000, "card_type": "virtual", "currency": "USD", "customer_id": customer});
        let (status, card) = t.send(Method::POST, "/api/cards", &body.to_string()).await;
        assert_eq!(status, 201, "{card}");
        cards.push(card["data"]["card"]["id"].as_str().unwrap().to_owned());
    }
    let (_, body) = t
        .send(
            Method::GET,
            &format!("/api/cards?customer_id={}", customers[0]),
            "",
        )
        .await;
    assert_eq!(ids(&body, "cards", "id"), [cards[0].clone()]);
    assert_eq!(body["data"]["page_info"]["total"], 1);
    // The official client's names beside the spec's (issue 42).
    assert_eq!(body["data"]["total"], 1);
    let card = &body["data"]["cards"][0];
    assert_eq!(card["last_four"], card["last_four_digit"]);
    assert_eq!(card["currency"], card["balance_currency"]);
    assert_eq!(card["balance"], card["balance_amount"]);
    let (_, one) = t.send(Method::GET, &format!("/api/cards/{}", cards[0]), "").await;
    assert_eq!(one["data"]["card"]["currency"], "USD");
    let (_, body) = t.send(Method::GET, "/api/cards?limit=1&offset=1", "").await;
    assert_eq!(ids(&body, "cards", "id"), [cards[0].clone()]);
    let (_, body) = t.send(Method::GET, "/api/cards?limit=1&page=1", "").await;
    assert_eq!(ids(&body, "cards", "id"), [cards[1].clone()]);
    let (status, body) = t.send(Method::GET, "/api/cards?customer_id=x", "").await;
    assert_eq!(status, 400, "{body}");
}

#[tokio::test]
async fn a_beneficiary_keeps_is_blacklisted_as_sent() {
    let t = support::spawn().await;
    let body = json!({"type": "bank", "name": "Ada", "is_blacklisted": true,
        "destination": {"account_name": "Ada Okafor", "account_number": "0123456789", "bank_code": "058"}});
    let (status, created) = t
        .send(Method::POST, "/api/beneficiaries", &body.to_string())
        .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["data"]["is_blacklisted"], true);
    let id = created["data"]["id"].as_str().unwrap();
    let update = paydesk_api::models::beneficiaries::BeneficiaryUpdate {
        is_blacklisted: Some(false),
        ..Default::default()
    };
    let updated = t.client.update_beneficiary(id, &update).await.unwrap();
    assert!(!updated.is_blacklisted);
    assert!(!t.client.beneficiary(id).await.unwrap().is_blacklisted);
    let (status, _) = t
        .send(
            Method::PUT,
            &format!("/api/beneficiaries/{id}"),
            r#"{"is_blacklisted": true}"#,
        )
        .await;
    assert_eq!(status, 200);
    assert!(t.client.beneficiary(id).await.unwrap().is_blacklisted);
    // `page` pages the beneficiaries too (oldest first, by offset).
    let (_, page) = t.send(Method::GET, "/api/beneficiaries?limit=1&page=2", "").await;
    assert_eq!(page["data"]["beneficiaries"].as_array().unwrap().len(), 0);
}
