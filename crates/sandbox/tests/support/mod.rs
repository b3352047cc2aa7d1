//! Shared test helpers: a sandbox on a random port with its own state and
//! clock, the typed client for its demo company, and raw signed requests
//! for the cases the typed client never sends.

#![allow(dead_code)]

use paydesk_api::signing;
use paydesk_api::{Client, ClientOptions, Credentials};
use paydesk_sandbox::fixture::{ClientFixture, Fixture};
use paydesk_sandbox::RunningSandbox;
use uuid::Uuid;

pub struct TestSandbox {
    pub sandbox: RunningSandbox,
    pub client_id: String,
    pub secret: String,
    pub client: Client,
    pub http: reqwest::Client,
}

/// A sandbox with one demo company (and an inactive and a scoped client).
pub async fn spawn() -> TestSandbox {
    let mut fixture = Fixture::demo();
    let company = &mut fixture.companies[0];
    company.clients.push(ClientFixture {
        client_id: Uuid::new_v4(),
        client_secret: "inactive-secret".into(),
        name: "Retired".into(),
        active: false,
        permissions: None,
        environment: paydesk_api::models::identity::Environment::Sandbox,
    });
    company.clients.push(ClientFixture {
        client_id: Uuid::new_v4(),
        client_secret: "scoped-secret".into(),
        name: "Read balances only".into(),
        active: true,
        permissions: Some(vec!["balances:read".into()]),
        environment: paydesk_api::models::identity::Environment::Sandbox,
    });
    spawn_with(fixture).await
}

pub async fn spawn_with(fixture: Fixture) -> TestSandbox {
    let sandbox = RunningSandbox::start(&fixture).await.expect("sandbox starts");
    let first = &fixture.companies[0].clients[0];
    let client_id = first.client_id.to_string();
    let secret = first.client_secret.clone();
    let client = client_for(&sandbox, &client_id, &secret);
    TestSandbox {
        sandbox,
        client_id,
        secret,
        client,
        http: reqwest::Client::new(),
    }
}

pub fn client_for(sandbox: &RunningSandbox, client_id: &str, secret: &str) -> Client {
    Client::with_options(
        sandbox.base_url.clone(),
        Credentials::new(client_id, secret),
        ClientOptions {
            max_retries: 0,
            ..ClientOptions::default()
        },
    )
}

impl TestSandbox {
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.sandbox.base_url, path)
    }

    /// A request signed now with a fresh nonce, body sent as JSON.
    pub fn signed(&self, method: reqwest::Method, path: &str, body: &str) -> reqwest::RequestBuilder {
        let headers = signing::sign_request(
            &self.client_id,
            &self.secret,
            body.as_bytes(),
            chrono::Utc::now().timestamp(),
        );
        let mut req = self.http.request(method, self.url(path));
        for (name, value) in headers.pairs() {
            req = req.header(name, value);
        }
        if !body.is_empty() {
            req = req
                .header("content-type", "application/json")
                .body(body.to_owned());
        }
        req
    }

    /// Sends a signed request and returns status and JSON body.
    pub async fn send(&self, method: reqwest::Method, path: &str, body: &str) -> (u16, serde_json::Value) {
        let res = self
            .signed(method, path, body)
            .send()
            .await
            .expect("request sent");
        let status = res.status().as_u16();
        let text = res.text().await.unwrap_or_default();
        (
            status,
            serde_json::from_str(&text).unwrap_or(serde_json::Value::Null),
        )
    }
}
