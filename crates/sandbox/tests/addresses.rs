//! Addresses and chains, over real HTTP.

mod support;

use paydesk_api::models::addresses::{AddressQuery, AddressStatus, GenerateAddress, ValidateAddress};
use reqwest::Method;

fn gen(chain: &str, reference: Option<&str>) -> GenerateAddress {
    GenerateAddress {
        chain: chain.into(),
        label: Some("ops".into()),
        reference: reference.map(Into::into),
        ..Default::default()
    }
}

#[tokio::test]
async fn generates_on_every_supported_chain_and_reads_back() {
    let t = support::spawn().await;
    let chains = t.client.supported_chains().await.unwrap().chains;
    let names: Vec<_> = chains.iter().map(|c| c.chain.as_str()).collect();
    assert_eq!(names.len(), 8);
    for name in &names {
        let a = t.client.generate_address(&gen(name, None)).await.unwrap();
        assert_eq!(a.chain, *name);
        assert_eq!(a.status, AddressStatus::Active);
        assert!(a.created_at.is_none(), "the generate answer has no created_at");
        let back = t.client.address(&a.id.to_string()).await.unwrap();
        assert_eq!(back.address, a.address);
        assert!(back.created_at.is_some());
        let check = t
            .client
            .validate_address(&ValidateAddress {
                address: a.address.clone(),
                chain: name.to_string(),
            })
            .await
            .unwrap();
        assert!(check.valid, "{name}: {}", a.address);
    }
    let (status, raw) = t
        .send(Method::POST, "/api/addresses", r#"{"chain":"ethereum"}"#)
        .await;
    assert_eq!(status, 201);
    assert!(raw["data"].get("created_at").is_none());
    assert_eq!(raw["data"]["label"], "");
    assert_eq!(raw["data"]["reference"], "");
}

#[tokio::test]
async fn stellar_shares_one_address_and_bsc_tron_cannot_be_generated() {
    let t = support::spawn().await;
    let a = t.client.generate_address(&gen("stellar", None)).await.unwrap();
    let b = t.client.generate_address(&gen("stellar", None)).await.unwrap();
    assert_eq!(a.address, b.address);
    for chain in ["bsc", "tron", "dogecoin"] {
        let err = t.client.generate_address(&gen(chain, None)).await.unwrap_err();
        assert_eq!(err.status(), Some(400), "{chain}");
        assert_eq!(err.code(), Some("VALIDATION_ERROR"));
        assert_eq!(err.problem().unwrap().errors[0].field, "chain");
    }
    let mut with_email = gen("ethereum", None);
    with_email.customer_email = Some("nobody@example.com".into());
    let err = t.client.generate_address(&with_email).await.unwrap_err();
    assert_eq!(err.problem().unwrap().errors[0].field, "customer_email");
}

#[tokio::test]
async fn generation_is_idempotent_by_reference() {
    let t = support::spawn().await;
    let body = r#"{"chain":"polygon","label":"a","reference":"addr-1"}"#;
    let first = t
        .signed(Method::POST, "/api/addresses", body)
        .send()
        .await
        .unwrap();
    assert_eq!(first.status().as_u16(), 201);
    let first = first.bytes().await.unwrap();
    let again = t
        .signed(Method::POST, "/api/addresses", body)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status().as_u16(), 201);
    assert_eq!(again.bytes().await.unwrap(), first, "byte-identical replay");

    let (status, problem) = t
        .send(
            Method::POST,
            "/api/addresses",
            r#"{"chain":"polygon","label":"b","reference":"addr-1"}"#,
        )
        .await;
    assert_eq!(status, 409);
    assert_eq!(problem["code"], "IDEMPOTENCY_CONFLICT");

    // A refused request stores nothing: the corrected retry succeeds.
    let (status, _) = t
        .send(
            Method::POST,
            "/api/addresses",
            r#"{"chain":"bsc","reference":"addr-2"}"#,
        )
        .await;
    assert_eq!(status, 400);
    let (status, _) = t
        .send(
            Method::POST,
            "/api/addresses",
            r#"{"chain":"base","reference":"addr-2"}"#,
        )
        .await;
    assert_eq!(status, 201);

    let page = t.client.list_addresses(&AddressQuery::default()).await.unwrap();
    assert_eq!(page.addresses.len(), 2, "only two addresses were made");
}

#[tokio::test]
async fn concurrent_requests_with_one_reference_run_once() {
    let t = support::spawn().await;
    let body = r#"{"chain":"ethereum","reference":"race"}"#;
    let calls = (0..8).map(|_| t.signed(Method::POST, "/api/addresses", body).send());
    let answers = futures_util::future::join_all(calls).await;
    let mut bodies = Vec::new();
    for a in answers {
        let a = a.unwrap();
        assert_eq!(a.status().as_u16(), 201);
        bodies.push(a.bytes().await.unwrap());
    }
    assert!(bodies.windows(2).all(|w| w[0] == w[1]));
    let page = t.client.list_addresses(&AddressQuery::default()).await.unwrap();
    assert_eq!(page.addresses.len(), 1);
}

#[tokio::test]
async fn lists_with_filters_and_cursor_pagination() {
    let t = support::spawn().await;
    let mut made = Vec::new();
    for i in 0..5 {
        made.push(
            t.client
                .generate_address(&gen("ethereum", Some(&format!("e{i}"))))
                .await
                .unwrap(),
        );
    }
    t.client.generate_address(&gen("solana", None)).await.unwrap();

    let mut query = AddressQuery {
        chain: Some("ethereum".into()),
        limit: Some(2),
        ..Default::default()
    };
    let mut seen = Vec::new();
    loop {
        let page = t.client.list_addresses(&query).await.unwrap();
        assert!(page.addresses.len() <= 2);
        seen.extend(page.addresses.iter().map(|a| a.id));
        if !page.has_more {
            assert_eq!(page.next_cursor, "");
            break;
        }
        query.cursor = Some(page.next_cursor);
    }
    let newest_first: Vec<_> = made.iter().rev().map(|a| a.id).collect();
    assert_eq!(seen, newest_first);

    let two = AddressQuery {
        addresses: vec![made[0].address.clone(), made[3].address.clone()],
        ..Default::default()
    };
    assert_eq!(t.client.list_addresses(&two).await.unwrap().addresses.len(), 2);
    for chain in ["bsc", "tron"] {
        let q = AddressQuery {
            chain: Some(chain.into()),
            ..Default::default()
        };
        assert!(t.client.list_addresses(&q).await.unwrap().addresses.is_empty());
    }
    let (status, _) = t.send(Method::GET, "/api/addresses?status=deleted", "").await;
    assert_eq!(status, 400);
    let (status, _) = t.send(Method::GET, "/api/addresses?limit=101", "").await;
    assert_eq!(status, 400);
    let (status, _) = t.send(Method::GET, "/api/addresses?cursor=bm9wZQ", "").await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn get_by_id_needs_a_uuid_and_hides_other_companies() {
    let t = support::spawn().await;
    let a = t
        .client
        .generate_address(&gen("base", Some("mine")))
        .await
        .unwrap();
    for not_an_id in [a.address.as_str(), "mine"] {
        let err = t.client.address(not_an_id).await.unwrap_err();
        assert_eq!(err.status(), Some(400));
        assert_eq!(err.code(), Some("VALIDATION_ERROR"));
        assert!(err.problem().unwrap().detail.contains("invalid id"));
    }
    let err = t
        .client
        .address(&uuid::Uuid::new_v4().to_string())
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(404));

    let other = support::spawn().await;
    let err = other.client.address(&a.id.to_string()).await.unwrap_err();
    assert_eq!(
        err.status(),
        Some(404),
        "a sandbox of its own knows nothing of it"
    );
}

#[tokio::test]
async fn validation_checks_checksums_and_stores_nothing() {
    let t = support::spawn().await;
    let cases = [
        ("ethereum", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", true),
        ("ethereum", "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD", false),
        ("ethereum", "0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed", true),
        ("bitcoin", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", true),
        ("bitcoin", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5", false),
        ("bitcoin", "1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa", true),
        ("tron", "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t", true),
        ("tron", "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u", false),
    ];
    for (chain, address, valid) in cases {
        let (status, body) = t
            .send(
                Method::POST,
                "/api/addresses/validate",
                &serde_json::json!({"address": address, "chain": chain}).to_string(),
            )
            .await;
        assert_eq!(status, 200);
        assert_eq!(body["valid"], valid, "{chain} {address}");
        // Flat as the spec lists it, and the same verdict in `data`, which
        // the official client reads (sandbox-rules.md's changed rule).
        assert_eq!(body["data"]["valid"], valid, "{chain} {address}");
        assert_eq!(body["data"]["address"], body["address"]);
        assert_eq!(body["data"]["error"].is_string(), !valid);
        assert_eq!(body["success"], true);
        assert!(body["timestamp"].is_string());
        assert_eq!(body.get("error").is_some(), !valid);
    }
    assert!(t
        .client
        .list_addresses(&AddressQuery::default())
        .await
        .unwrap()
        .addresses
        .is_empty());
    let (status, _) = t
        .send(Method::POST, "/api/addresses/validate", r#"{"chain":"ethereum"}"#)
        .await;
    assert_eq!(status, 400);
}
