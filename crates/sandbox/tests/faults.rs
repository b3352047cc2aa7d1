//! Injected faults and the client's handling of them.

mod support;

use std::time::{Duration, Instant};

use paydesk_api::models::addresses::{AddressQuery, GenerateAddress};
use paydesk_api::models::control::AddFault;
use paydesk_api::{ApiError, Client, ClientOptions, Credentials};

fn fault(method: &str, prefix: &str, mode: &str, count: u32) -> AddFault {
    AddFault {
        method: method.into(),
        path_prefix: prefix.into(),
        mode: mode.into(),
        count,
    }
}

fn gen(reference: &str) -> GenerateAddress {
    GenerateAddress {
        chain: "ethereum".into(),
        reference: Some(reference.into()),
        ..Default::default()
    }
}

#[tokio::test]
async fn a_lost_answer_is_an_unknown_outcome_and_a_retry_by_reference_gets_the_real_one() {
    let t = support::spawn().await;
    t.client
        .sandbox_add_fault(&fault("POST", "/api/addresses", "500_no_body", 1))
        .await
        .unwrap();
    let err = t.client.generate_address(&gen("lost-1")).await.unwrap_err();
    assert!(matches!(err, ApiError::OutcomeUnknown { .. }), "{err:?}");
    let page = t.client.list_addresses(&AddressQuery::default()).await.unwrap();
    assert_eq!(page.addresses.len(), 1, "the operation ran");
    let retried = t.client.generate_address(&gen("lost-1")).await.unwrap();
    assert_eq!(
        retried.id, page.addresses[0].id,
        "the stored answer, not a second address"
    );
}

#[tokio::test]
async fn a_retrying_client_rides_over_lost_answers_for_referenced_writes() {
    let t = support::spawn().await;
    let client = Client::with_options(
        t.sandbox.base_url.clone(),
        Credentials::new(t.client_id.clone(), t.secret.clone()),
        ClientOptions {
            max_retries: 2,
            backoff: Duration::from_millis(10),
            ..ClientOptions::default()
        },
    );
    t.client
        .sandbox_add_fault(&fault("POST", "/api/addresses", "500_no_body", 1))
        .await
        .unwrap();
    let address = client.generate_address(&gen("lost-2")).await.unwrap();
    let page = t.client.list_addresses(&AddressQuery::default()).await.unwrap();
    assert_eq!(page.addresses.len(), 1);
    assert_eq!(page.addresses[0].id, address.id);

    // Without a reference the write is not retried.
    t.client
        .sandbox_add_fault(&fault("POST", "/api/addresses", "500_no_body", 1))
        .await
        .unwrap();
    let no_ref = GenerateAddress {
        chain: "base".into(),
        ..Default::default()
    };
    assert!(matches!(
        client.generate_address(&no_ref).await,
        Err(ApiError::OutcomeUnknown { .. })
    ));
}

#[tokio::test]
async fn refusals_run_nothing_and_429_carries_retry_after() {
    let t = support::spawn().await;
    t.client
        .sandbox_add_fault(&fault("*", "/api/addresses", "503", 1))
        .await
        .unwrap();
    let err = t.client.generate_address(&gen("r1")).await.unwrap_err();
    assert_eq!(err.status(), Some(503));
    t.client
        .sandbox_add_fault(&fault("POST", "/api/addresses", "429", 1))
        .await
        .unwrap();
    match t.client.generate_address(&gen("r1")).await.unwrap_err() {
        ApiError::Problem {
            status, retry_after, ..
        } => {
            assert_eq!(status, 429);
            assert_eq!(retry_after, Some(Duration::from_secs(1)));
        }
        other => panic!("expected 429, got {other:?}"),
    }
    assert!(t
        .client
        .list_addresses(&AddressQuery::default())
        .await
        .unwrap()
        .addresses
        .is_empty());
    t.client.generate_address(&gen("r1")).await.unwrap();
}

#[tokio::test]
async fn delays_and_clearing() {
    let t = support::spawn().await;
    t.client
        .sandbox_add_fault(&fault("GET", "/api/balances", "delay_ms:300", 1))
        .await
        .unwrap();
    let start = Instant::now();
    t.client.balances().await.unwrap();
    assert!(start.elapsed() >= Duration::from_millis(300));

    let armed = t
        .client
        .sandbox_add_fault(&fault("GET", "/api/balances", "503", 5))
        .await
        .unwrap();
    assert_eq!(armed.faults.len(), 1);
    assert_eq!(t.client.sandbox_clear_faults().await.unwrap().faults.len(), 0);
    t.client.balances().await.unwrap();

    let err = t
        .client
        .sandbox_add_fault(&fault("GET", "/api", "explode", 1))
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(400));
}

#[tokio::test]
async fn a_timeout_is_an_unknown_outcome_for_writes() {
    let t = support::spawn().await;
    let client = Client::with_options(
        t.sandbox.base_url.clone(),
        Credentials::new(t.client_id.clone(), t.secret.clone()),
        ClientOptions {
            timeout: Duration::from_millis(500),
            max_retries: 0,
            ..ClientOptions::default()
        },
    );
    t.client
        .sandbox_add_fault(&fault("POST", "/api/addresses", "timeout", 1))
        .await
        .unwrap();
    let err = client.generate_address(&gen("slow")).await.unwrap_err();
    assert!(matches!(err, ApiError::OutcomeUnknown { .. }), "{err:?}");
    let again = t.client.generate_address(&gen("slow")).await.unwrap();
    let page = t.client.list_addresses(&AddressQuery::default()).await.unwrap();
    assert_eq!(page.addresses.len(), 1);
    assert_eq!(page.addresses[0].id, again.id);
}
