//! Bad input never reaches a 500: each refusal is an RFC 7807 problem with
//! the right status.

mod support;

use reqwest::Method;

#[tokio::test]
async fn malformed_bodies_and_fields_are_400_with_field_errors() {
    let t = support::spawn().await;
    let cases = [
        ("{", None),
        ("[1,2]", None),
        ("{}", Some("chain")),
        (r#"{"chain": 5}"#, Some("chain")),
        (r#"{"chain": "ethereum", "label": ["x"]}"#, Some("label")),
    ];
    for (body, field) in cases {
        let (status, problem) = t.send(Method::POST, "/api/addresses", body).await;
        assert_eq!(status, 400, "{body}");
        assert_eq!(problem["code"], "VALIDATION_ERROR", "{body}");
        assert_eq!(problem["status"], 400);
        if let Some(field) = field {
            assert_eq!(problem["errors"][0]["field"], field, "{body}: {problem}");
        }
    }
}

#[tokio::test]
async fn amounts_must_be_positive_integers_that_fit() {
    let t = support::spawn().await;
    let address = t
        .client
        .generate_address(&paydesk_api::models::addresses::GenerateAddress {
            chain: "ethereum".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .address;
    for amount in [
        "\"-1\"",
        "0",
        "\"1.5\"",
        "1.5",
        "\"99999999999999999999\"",
        "99999999999999999999",
        "\"ten\"",
        "null",
    ] {
        let body =
            format!(r#"{{"chain":"ethereum","address":"{address}","currency":"USDT","amount":{amount}}}"#);
        let (status, problem) = t.send(Method::POST, "/sandbox/deposits", &body).await;
        assert_eq!(status, 400, "amount {amount}: {problem}");
        assert_eq!(problem["code"], "VALIDATION_ERROR");
    }
}

#[tokio::test]
async fn content_type_size_routes_and_methods() {
    let t = support::spawn().await;
    let body = r#"{"chain":"ethereum"}"#;
    for content_type in ["text/plain", "application/x-www-form-urlencoded"] {
        let res = t
            .signed_as(Method::POST, "/api/addresses", body, content_type)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status().as_u16(), 415, "{content_type}");
    }

    let huge = format!(r#"{{"chain":"ethereum","label":"{}"}}"#, "x".repeat(1024 * 1024));
    let (status, problem) = t.send(Method::POST, "/api/addresses", &huge).await;
    assert_eq!(status, 413);
    assert_eq!(problem["status"], 413);

    let (status, problem) = t.send(Method::GET, "/api/nothing-here", "").await;
    assert_eq!(status, 404);
    assert_eq!(problem["code"], "NOT_FOUND");

    let (status, problem) = t.send(Method::DELETE, "/api/balances", "").await;
    assert_eq!(status, 405);
    assert_eq!(problem["status"], 405);

    let (status, _) = t.send(Method::PUT, "/api/addresses/validate", "").await;
    assert_eq!(status, 405);
}

#[tokio::test]
async fn problems_carry_the_request_id() {
    let t = support::spawn().await;
    let res = t
        .signed(Method::GET, "/api/balances/XYZ", "")
        .send()
        .await
        .unwrap();
    let request_id = res
        .headers()
        .get("x-request-id")
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    let problem: serde_json::Value = res.json().await.unwrap();
    assert_eq!(problem["correlation_id"], request_id);
    let res = t.signed(Method::GET, "/api/balances", "").send().await.unwrap();
    let request_id = res
        .headers()
        .get("x-request-id")
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    let body: serde_json::Value = res.json().await.unwrap();
    assert_eq!(body["metadata"]["request_id"], request_id);
}
