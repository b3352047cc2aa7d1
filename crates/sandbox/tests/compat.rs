//! Additions for the provider's official command-line client, where the
//! spec leaves room (issue 16), and the small fixes that came with them,
//! over real HTTP with raw JSON as that client sends it.

mod support;

use std::net::TcpListener;

use paydesk_api::models::addresses::GenerateAddress;
use paydesk_api::models::control::SimulateDeposit;
use paydesk_api::units::BaseUnits;
use paydesk_sandbox::fixture::Fixture;
use paydesk_sandbox::state::Options;
use paydesk_sandbox::RunningSandbox;
use reqwest::Method;
use serde_json::{json, Value};

#[tokio::test]
async fn an_address_may_name_a_customer_just_created_by_email() {
    let t = support::spawn().await;
    let (status, _) = t
        .send(
            Method::POST,
            "/api/customers",
            r#"{"first_name": "Ada", "last_name": "Okafor", "email": "ada@example.com", "customer_type": "individual"}"#,
        )
        .await;
    assert_eq!(status, 201);
    let (status, body) = t
        .send(
            Method::POST,
            "/api/addresses",
            r#"{"chain": "ethereum", "customer_email": "ADA@example.com"}"#,
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let (status, body) = t
        .send(
            Method::POST,
            "/api/addresses",
            r#"{"chain": "ethereum", "customer_email": "nobody@example.com"}"#,
        )
        .await;
    assert_eq!(status, 400);
    assert_eq!(body["errors"][0]["field"], "customer_email");
}

#[tokio::test]
async fn identity_validation_problems_and_405_carry_the_added_fields() {
    let t = support::spawn().await;
    let (_, who) = t.send(Method::GET, "/api/whoami", "").await;
    assert_eq!(who["data"]["authenticated"], true);
    assert_eq!(who["authenticated"], true, "at the top level too");
    assert_eq!(who["data"]["client_id"], t.client_id.as_str());
    // The official client reads the identity at the top level.
    assert_eq!(who["client_id"], t.client_id.as_str());
    assert_eq!(who["environment"], "sandbox");
    assert_eq!(who["active_company_id"], who["data"]["active_company_id"]);

    let address = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed";
    let (status, v) = t
        .send(
            Method::POST,
            "/api/addresses/validate",
            &json!({"address": address, "chain": "ethereum"}).to_string(),
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(v["valid"], true);
    assert_eq!(
        v["data"]["valid"], true,
        "flat, and `data` as sandbox-rules.md now adds it"
    );

    let (status, problem) = t.send(Method::GET, "/api/balances/XYZ", "").await;
    assert_eq!(status, 404);
    assert_eq!(problem["message"], problem["detail"]);

    let res = t
        .signed(Method::DELETE, "/api/balances", "")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 405);
    assert_eq!(res.headers()["allow"], "GET");
    let res = t
        .signed(
            Method::PATCH,
            "/api/cards/00000000-0000-0000-0000-000000000000",
            "",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 405);
    assert_eq!(res.headers()["allow"], "GET, DELETE");
    // The v1 card paths stay unserved.
    let (status, _) = t
        .send(
            Method::POST,
            "/api/cards/00000000-0000-0000-0000-000000000000/fund",
            "{}",
        )
        .await;
    assert_eq!(status, 404);
}

async fn quote(t: &support::TestSandbox, reference: &str) -> String {
    let (status, q) = t
        .send(
            Method::POST,
            "/api/payouts/quotes",
            &json!({"amount": "10", "country": "NG", "from_asset": "USDT", "to_currency": "NGN", "source": "offchain", "reference": reference}).to_string(),
        )
        .await;
    assert_eq!(status, 201, "{q}");
    q["data"]["quote_id"]
        .as_str()
        .or(q["data"]["quote"]["quote_id"].as_str())
        .unwrap_or_else(|| panic!("no quote id in {q}"))
        .to_owned()
}

#[tokio::test]
async fn payouts_answer_on_the_official_clients_paths() {
    let t = support::spawn().await;
    let quote_id = quote(&t, "cli-1").await;
    let (status, init) = t
        .send(
            Method::POST,
            &format!("/api/payouts/quotes/{quote_id}/initialize"),
            &json!({"reference": "cli-1", "payment_reason": "salary", "beneficiary": {"type": "BANK", "country": "NG", "account_name": "Ada Okafor", "account_number": "0123456789", "bank_code": "058"}}).to_string(),
        )
        .await;
    assert_eq!(status, 200, "{init}");
    assert_eq!(init["payout"]["status"], "INITIATED");
    assert_eq!(init["payout"]["beneficiary"]["destination_type"], "bank");
    // The official client reads the record's fields straight in `data`.
    assert_eq!(init["data"]["status"], "INITIATED");
    assert_eq!(init["data"]["quote_id"], quote_id.as_str());
    let (status, fin) = t
        .send(
            Method::POST,
            &format!("/api/payouts/quotes/{quote_id}/finalize"),
            "",
        )
        .await;
    assert_eq!(status, 200, "{fin}");
    let id = fin["data"]["payout"]["id"].as_str().unwrap().to_owned();
    assert_eq!(fin["data"]["id"], id.as_str());
    assert_eq!(fin["data"]["status"], fin["data"]["payout"]["status"]);

    // Each read of one payout also lists it in `off_ramps`, where the
    // official client reads it.
    for path in [
        format!("/api/payouts/fetch/{id}"),
        "/api/payouts/fetch/reference/cli-1".to_owned(),
        format!("/api/payouts/quotes/{quote_id}"),
    ] {
        let (status, one) = t.send(Method::GET, &path, "").await;
        assert_eq!(status, 200, "{path}: {one}");
        assert_eq!(one["data"]["off_ramps"][0]["id"], id.as_str(), "{path}");
    }
    let (status, one) = t.send(Method::GET, &format!("/api/payouts/fetch/{id}"), "").await;
    assert_eq!((status, one["data"]["id"].as_str()), (200, Some(id.as_str())));
    let (status, one) = t
        .send(Method::GET, "/api/payouts/fetch/reference/cli-1", "")
        .await;
    assert_eq!((status, one["data"]["id"].as_str()), (200, Some(id.as_str())));
    let (_, one) = t
        .send(Method::GET, &format!("/api/payouts/quotes/{quote_id}"), "")
        .await;
    assert_eq!(one["data"]["quote"]["id"], id.as_str());
    let (status, _) = t.send(Method::GET, "/api/payouts/fetch/reference/nope", "").await;
    assert_eq!(status, 404);

    quote(&t, "cli-2").await;
    let (status, page) = t
        .send(Method::GET, "/api/payouts/?order=asc&page=1&take=1", "")
        .await;
    assert_eq!(status, 200);
    assert_eq!(page["data"]["total"], 2);
    assert_eq!(page["data"]["payouts"][0]["id"], id.as_str());
    assert_eq!(page["data"]["off_ramps"], page["data"]["payouts"]);
    assert_eq!(
        page["data"]["meta"],
        json!({"page": 1, "take": 1, "item_count": 2, "page_count": 2, "has_previous_page": false, "has_next_page": true})
    );
    let (_, page) = t.send(Method::GET, "/api/payouts/?page=2&take=1", "").await;
    assert_eq!(
        page["data"]["payouts"][0]["id"],
        id.as_str(),
        "newest first by default"
    );
    let (status, _) = t.send(Method::GET, "/api/payouts/?take=0", "").await;
    assert_eq!(status, 400);
    let (status, _) = t.send(Method::GET, "/api/payouts/?order=sideways", "").await;
    assert_eq!(status, 400);

    let (status, req) = t
        .send(
            Method::GET,
            "/api/payouts/supported-countries/GH/requirements",
            "",
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(req["data"]["payment_reasons"][0], "salary");
    // The shape the official client reads: code, dial code and the fields
    // of each destination type.
    assert_eq!(req["data"]["code"], "GH");
    assert_eq!(req["data"]["dial_code"], "+233");
    let bank = req["data"]["destination"]["bank"].as_array().unwrap();
    assert_eq!(
        bank[0],
        json!({"name": "type", "type": "string", "required": true, "const": "bank"})
    );
    assert!(bank
        .iter()
        .any(|f| f["name"] == "account_number" && f["required"] == true));
}

#[tokio::test]
async fn beneficiaries_and_lookups_take_the_official_clients_forms() {
    let t = support::spawn().await;
    let destination = json!({"account_name": "Ada Okafor", "account_number": "0123456789", "bank_code": "058", "country": "NG"});
    let (status, b) = t
        .send(
            Method::POST,
            "/api/beneficiaries",
            &json!({"type": "bank", "name": "Ada", "destination": destination.to_string()}).to_string(),
        )
        .await;
    assert_eq!(status, 201, "{b}");
    assert_eq!(b["data"]["destination"]["account_number"], "0123456789");
    let (status, found) = t
        .send(
            Method::POST,
            "/api/payouts/beneficiary-lookup",
            r#"{"country": "NG", "account_number": "0123456789", "bank_code": "058", "type": "bank_account"}"#,
        )
        .await;
    assert_eq!(status, 200, "{found}");
    assert_eq!(found["data"]["account_number"], "0123456789");
}

#[tokio::test]
async fn a_lightning_preview_gives_expires_at_as_a_string_of_unix_seconds() {
    let t = support::spawn().await;
    let (status, inv) = t
        .send(
            Method::POST,
            "/api/lightning/invoices",
            r#"{"amount": 1000, "description": "tea", "reference": "ln-1"}"#,
        )
        .await;
    assert_eq!(status, 201, "{inv}");
    let request = inv["data"]["request"].as_str().unwrap();
    let (status, preview) = t
        .send(
            Method::POST,
            "/api/lightning/payments/initiate",
            &json!({ "request": request }).to_string(),
        )
        .await;
    assert_eq!(status, 200);
    let at = preview["data"]["expires_at"].as_str().expect("a string");
    assert!(at.parse::<i64>().is_ok(), "{at}");
}

#[tokio::test]
async fn list_filters_filter_or_are_refused() {
    let t = support::spawn().await;
    let (_, all) = t
        .send(Method::GET, "/api/transactions?reference=OPENING_USDT", "")
        .await;
    let txs = all["data"]["transactions"].as_array().unwrap();
    assert_eq!(txs.len(), 1);
    assert_eq!(txs[0]["reference"], "OPENING_USDT");
    let (_, none) = t
        .send(
            Method::GET,
            "/api/transactions?address=0x0000000000000000000000000000000000000000",
            "",
        )
        .await;
    assert_eq!(none["data"]["transactions"], json!([]));

    for (email, reference) in [("a@example.com", "c-a"), ("b@example.com", "c-b")] {
        let (status, _) = t
            .send(
                Method::POST,
                "/api/customers",
                &json!({"first_name": "A", "last_name": "B", "email": email, "customer_type": "individual", "reference": reference}).to_string(),
            )
            .await;
        assert_eq!(status, 201);
    }
    let (_, list) = t.send(Method::GET, "/api/customers?reference=c-b", "").await;
    let id = list["data"]["customers"][0]["id"].as_str().unwrap().to_owned();
    let (status, _) = t
        .send(
            Method::POST,
            &format!("/api/customers/blacklist/{id}"),
            r#"{"blacklist": true}"#,
        )
        .await;
    assert_eq!(status, 200);
    let (_, listed) = t.send(Method::GET, "/api/customers?blacklisted=true", "").await;
    let emails: Vec<&Value> = listed["data"]["customers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["email"])
        .collect();
    assert_eq!(emails, [&json!("b@example.com")]);
    let (_, listed) = t.send(Method::GET, "/api/customers?blacklisted=false", "").await;
    assert_eq!(listed["data"]["customers"][0]["email"], "a@example.com");
    // `blacklist` is the name the official client sends.
    let (_, listed) = t.send(Method::GET, "/api/customers?blacklist=true", "").await;
    assert_eq!(listed["data"]["customers"].as_array().unwrap().len(), 1);
    assert_eq!(listed["data"]["customers"][0]["id"], id.as_str());
    let (status, _) = t.send(Method::GET, "/api/customers?blacklisted=maybe", "").await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn webhooks_carry_the_signature_under_extra_header_names_too() {
    let fixture = Fixture::demo();
    let sandbox = RunningSandbox::start_with(
        &fixture,
        TcpListener::bind("127.0.0.1:0").unwrap(),
        1,
        Options {
            webhook_signature_headers: vec!["X-Webhook-Signature".into()],
            ..Default::default()
        },
    )
    .await
    .unwrap();
    let first = &fixture.companies[0].clients[0];
    let client = support::client_for(&sandbox, &first.client_id.to_string(), &first.client_secret);
    let receiver = support::Receiver::start(0).await;
    client.sandbox_set_webhook(&receiver.url, None).await.unwrap();
    let address = client
        .generate_address(&GenerateAddress {
            chain: "ethereum".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .address;
    client
        .sandbox_deposit(&SimulateDeposit {
            chain: "ethereum".into(),
            address,
            currency: "USDT".into(),
            amount: BaseUnits(1_000),
        })
        .await
        .unwrap();
    client.sandbox_advance_clock(60).await.unwrap();
    let d = receiver.wait_for("deposit.success").await;
    let extra = d
        .headers
        .iter()
        .find(|(name, _)| name == "x-webhook-signature")
        .map(|(_, v)| v.clone());
    assert_eq!(extra.as_deref(), Some(d.signature.as_str()));
    assert!(!d.signature.is_empty());
    sandbox.stop().await;
}

/// Issue 42's additions: the fields the official client reads under its
/// own names, beside the spec's, and its withdrawal path.
#[tokio::test]
async fn the_official_clients_names_are_answered_beside_the_specs() {
    let t = support::spawn().await;

    // POST /api/wallets/transfers with `address`: a withdrawal, answered
    // with `address` beside `to_address`; the same reference on the spec's
    // path is the same withdrawal.
    let transfer = json!({"address": "0x52908400098527886E0F7030069857D2E4169EE7", "amount": "1000000",
        "currency": "USDT", "chain": "ethereum", "reference": "cli-transfer-1"});
    let (status, created) = t
        .send(Method::POST, "/api/wallets/transfers", &transfer.to_string())
        .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["data"]["address"], created["data"]["to_address"]);
    assert_eq!(created["data"]["status"], "pending");
    let (status, again) = t
        .send(Method::POST, "/api/wallets/transfers", &transfer.to_string())
        .await;
    assert_eq!((status, &again["data"]["id"]), (201, &created["data"]["id"]));
    let withdrawals = t.client.withdrawals(None, None, None).await.unwrap();
    assert_eq!(withdrawals.total_count, 1);
    let (status, _) = t
        .send(Method::POST, "/api/wallets/transfers", r#"{"amount": "1"}"#)
        .await;
    assert_eq!(status, 400);

    // Address validation: the flat answer, and `data` with the verdict.
    let (_, valid) = t
        .send(
            Method::POST,
            "/api/addresses/validate",
            r#"{"address": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", "chain": "ethereum"}"#,
        )
        .await;
    assert_eq!(valid["valid"], false);
    assert_eq!(
        valid["data"],
        json!({"valid": false, "address": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD",
            "chain": "ethereum", "error": valid["error"]})
    );

    // Customers: `blacklist` beside `is_active`; the list's `meta`.
    let (_, customer) = t
        .send(
            Method::POST,
            "/api/customers",
            r#"{"email": "cli@example.com", "customer_type": "individual"}"#,
        )
        .await;
    assert_eq!(customer["data"]["blacklist"], false);
    let id = customer["data"]["id"].as_str().unwrap();
    let (_, listed) = t
        .send(
            Method::POST,
            &format!("/api/customers/blacklist/{id}"),
            r#"{"blacklist": true}"#,
        )
        .await;
    assert_eq!(
        (&listed["data"]["blacklist"], &listed["data"]["is_active"]),
        (&json!(true), &json!(false))
    );
    let (_, page) = t.send(Method::GET, "/api/customers?limit=1", "").await;
    assert_eq!(
        page["data"]["meta"],
        json!({"page": 1, "limit": 1, "total": 1, "page_count": 1,
            "has_previous_page": false, "has_next_page": false})
    );

    // A beneficiary delete: the record and `success: true`.
    let (_, saved) = t
        .send(
            Method::POST,
            "/api/beneficiaries",
            r#"{"type": "bank", "name": "Ada", "destination": {"account_name": "Ada Okafor", "account_number": "0123456789", "bank_code": "058"}}"#,
        )
        .await;
    let id = saved["data"]["id"].as_str().unwrap();
    let (status, deleted) = t
        .send(Method::DELETE, &format!("/api/beneficiaries/{id}"), "")
        .await;
    assert_eq!(status, 200);
    assert_eq!(
        (&deleted["data"]["success"], &deleted["data"]["id"]),
        (&json!(true), &saved["data"]["id"])
    );

    // An order: `fills` and `quote_consumption` beside `order`.
    let (_, quote) = t
        .send(
            Method::POST,
            "/api/trading/quotes",
            r#"{"base_currency": "BTC", "quote_currency": "USDT", "side": "buy", "quantity": "0.001"}"#,
        )
        .await;
    let order = json!({"base_currency": "BTC", "quote_currency": "USDT", "side": "buy",
        "quantity": "0.001", "quote_id": quote["data"]["quote"]["id"]});
    let (status, order) = t
        .send(Method::POST, "/api/trading/orders", &order.to_string())
        .await;
    assert_eq!(status, 201, "{order}");
    assert_eq!(order["data"]["fills"], order["data"]["order"]["fills"]);
    assert_eq!(order["data"]["fills"].as_array().unwrap().len(), 1);
    assert_eq!(
        order["data"]["quote_consumption"],
        order["data"]["order"]["quote_consumption"]
    );

    // One balance: the ledger balance, every amount formatted, `as_of`.
    let usdt = t.client.balance("USDT").await.unwrap();
    assert_eq!(
        usdt.total_balance_formatted,
        usdt.total_balance.formatted(&usdt.currency)
    );
    assert!(usdt.ledger_balance.value() > 0 && usdt.as_of.is_some());
    let (_, raw) = t.send(Method::GET, "/api/balances/USDT", "").await;
    for field in [
        "ledger_balance",
        "available_balance_formatted",
        "pending_balance_formatted",
        "total_balance_formatted",
        "ledger_balance_formatted",
        "as_of",
    ] {
        assert!(!raw["data"][field].is_null(), "{field} in {raw}");
    }

    // Supported chains: `nativeToken` beside `native_token`.
    let (_, chains) = t.send(Method::GET, "/api/stablecoins/supported-chains", "").await;
    for chain in chains["data"]["chains"].as_array().unwrap() {
        assert_eq!(chain["nativeToken"], chain["native_token"]);
    }
}
