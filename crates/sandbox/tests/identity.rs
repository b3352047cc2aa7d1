//! Identity and the authentication failure matrix, over real HTTP.

mod support;

use paydesk_api::models::identity::Environment;
use paydesk_api::signing;
use reqwest::Method;

#[tokio::test]
async fn whoami_answers_with_the_identity_record() {
    let t = support::spawn().await;
    let me = t.client.whoami().await.unwrap();
    assert!(me.active);
    assert_eq!(me.auth_method, "hmac");
    assert_eq!(me.client_id.to_string(), t.client_id);
    assert_eq!(me.environment, Environment::Sandbox);
    assert_eq!(me.permissions, None);

    let (status, body) = t.send(Method::POST, "/api/whoami", r#"{"any":"payload"}"#).await;
    assert_eq!(status, 200);
    assert_eq!(body["message"], "Authenticated");
    assert_eq!(body["success"], true);
}

/// Sends whoami with the headers `tweak` produces and expects a 401 problem.
async fn expect_401(t: &support::TestSandbox, what: &str, headers: Vec<(&str, String)>, body: &str) {
    let mut req = t.http.post(t.url("/api/whoami"));
    for (k, v) in headers {
        req = req.header(k, v);
    }
    if !body.is_empty() {
        req = req
            .header("content-type", "application/json")
            .body(body.to_owned());
    }
    let res = req.send().await.unwrap();
    assert_eq!(res.status().as_u16(), 401, "{what}");
    assert_eq!(
        res.headers().get("content-type").unwrap().to_str().unwrap(),
        "application/problem+json",
        "{what}"
    );
    let problem: serde_json::Value = res.json().await.unwrap();
    assert_eq!(problem["status"], 401, "{what}");
    assert_eq!(problem["code"], "UNAUTHORIZED", "{what}");
    for key in ["type", "title", "detail", "correlation_id", "timestamp"] {
        assert!(problem[key].is_string(), "{what}: {key} missing in {problem}");
    }
}

fn headers(cid: &str, ts: &str, nonce: &str, sig: &str) -> Vec<(&'static str, String)> {
    vec![
        (signing::CLIENT_HEADER, cid.to_owned()),
        (signing::TIMESTAMP_HEADER, ts.to_owned()),
        (signing::NONCE_HEADER, nonce.to_owned()),
        (signing::SIGNATURE_HEADER, sig.to_owned()),
    ]
}

#[tokio::test]
async fn every_authentication_failure_is_a_401_problem() {
    let t = support::spawn().await;
    let now = chrono::Utc::now().timestamp().to_string();
    let body = r#"{"a":1}"#;
    let sign = |cid: &str, secret: &str, ts: &str, nonce: &str, body: &str| {
        signing::signature(secret, cid, ts, nonce, body.as_bytes())
    };

    let nonce = signing::new_nonce();
    let unknown = uuid::Uuid::new_v4().to_string();
    expect_401(
        &t,
        "unknown client",
        headers(
            &unknown,
            &now,
            &nonce,
            &sign(&unknown, &t.secret, &now, &nonce, body),
        ),
        body,
    )
    .await;

    let fixture_inactive = t
        .sandbox
        .shared
        .store()
        .clients
        .values()
        .find(|c| !c.active)
        .map(|c| c.id.to_string())
        .unwrap();
    let nonce = signing::new_nonce();
    expect_401(
        &t,
        "inactive client",
        headers(
            &fixture_inactive,
            &now,
            &nonce,
            &sign(&fixture_inactive, "inactive-secret", &now, &nonce, body),
        ),
        body,
    )
    .await;

    let nonce = signing::new_nonce();
    expect_401(
        &t,
        "wrong secret",
        headers(
            &t.client_id,
            &now,
            &nonce,
            &sign(&t.client_id, "nope", &now, &nonce, body),
        ),
        body,
    )
    .await;

    let nonce = signing::new_nonce();
    let sig = sign(&t.client_id, &t.secret, &now, &nonce, body);
    expect_401(
        &t,
        "tampered body",
        headers(&t.client_id, &now, &nonce, &sig),
        r#"{"a":2}"#,
    )
    .await;
    let nonce2 = signing::new_nonce();
    let sig = sign(&t.client_id, &t.secret, &now, &nonce2, body);
    expect_401(
        &t,
        "reordered keys",
        headers(&t.client_id, &now, &nonce2, &sig),
        r#"{ "a":1}"#,
    )
    .await;

    let old = (chrono::Utc::now().timestamp() - 301).to_string();
    let nonce = signing::new_nonce();
    expect_401(
        &t,
        "skew past",
        headers(
            &t.client_id,
            &old,
            &nonce,
            &sign(&t.client_id, &t.secret, &old, &nonce, body),
        ),
        body,
    )
    .await;
    let future = (chrono::Utc::now().timestamp() + 301).to_string();
    let nonce = signing::new_nonce();
    expect_401(
        &t,
        "skew future",
        headers(
            &t.client_id,
            &future,
            &nonce,
            &sign(&t.client_id, &t.secret, &future, &nonce, body),
        ),
        body,
    )
    .await;

    let nonce = signing::new_nonce();
    let sig = sign(&t.client_id, &t.secret, &now, &nonce, body);
    let ok = t
        .http
        .post(t.url("/api/whoami"))
        .headers(reqwest::header::HeaderMap::from_iter(
            headers(&t.client_id, &now, &nonce, &sig)
                .into_iter()
                .map(|(k, v)| (reqwest::header::HeaderName::from_static(k), v.parse().unwrap())),
        ))
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(ok.status().as_u16(), 200, "the genuine request passes");
    expect_401(
        &t,
        "replayed nonce",
        headers(&t.client_id, &now, &nonce, &sig),
        body,
    )
    .await;

    let nonce = signing::new_nonce();
    expect_401(
        &t,
        "millisecond timestamp",
        headers(
            &t.client_id,
            &format!("{now}000"),
            &nonce,
            &sign(&t.client_id, &t.secret, &format!("{now}000"), &nonce, body),
        ),
        body,
    )
    .await;
    expect_401(
        &t,
        "short nonce",
        headers(
            &t.client_id,
            &now,
            "abc",
            &sign(&t.client_id, &t.secret, &now, "abc", body),
        ),
        body,
    )
    .await;
    let nonce = signing::new_nonce();
    let upper = sign(&t.client_id, &t.secret, &now, &nonce, body).to_uppercase();
    expect_401(
        &t,
        "uppercase signature",
        headers(&t.client_id, &now, &nonce, &upper),
        body,
    )
    .await;
    expect_401(&t, "no headers", vec![], body).await;
    let nonce = signing::new_nonce();
    let mut missing = headers(
        &t.client_id,
        &now,
        &nonce,
        &sign(&t.client_id, &t.secret, &now, &nonce, body),
    );
    missing.remove(3);
    expect_401(&t, "no signature", missing, body).await;
}

#[tokio::test]
async fn scoped_clients_get_403_outside_their_permissions() {
    let t = support::spawn().await;
    let scoped = t
        .sandbox
        .shared
        .store()
        .clients
        .values()
        .find(|c| c.permissions.is_some())
        .map(|c| c.id.to_string())
        .unwrap();
    let client = support::client_for(&t.sandbox, &scoped, "scoped-secret");
    assert!(client.balances().await.is_ok());
    assert_eq!(
        client.whoami().await.unwrap().permissions,
        Some(vec!["balances:read".to_owned()])
    );
    let err = client.transactions(&Default::default()).await.unwrap_err();
    assert_eq!(err.status(), Some(403));
    assert_eq!(err.code(), Some("FORBIDDEN"));
}
