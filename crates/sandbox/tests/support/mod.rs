//! Shared test helpers: a sandbox on a random port with its own state and
//! clock, the typed client for its demo company, and raw signed requests
//! for the cases the typed client never sends.

#![allow(dead_code)]

use futures_util::TryStreamExt;
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
        self.signed_as(method, path, body, "application/json")
    }

    /// A signed request whose body is sent with `content_type`.
    pub fn signed_as(
        &self,
        method: reqwest::Method,
        path: &str,
        body: &str,
        content_type: &str,
    ) -> reqwest::RequestBuilder {
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
            req = req.header("content-type", content_type).body(body.to_owned());
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

/// A webhook receiver on a random port that records every delivery and
/// answers 500 to the first `failures` of them.
pub struct Receiver {
    pub url: String,
    pub received: std::sync::Arc<std::sync::Mutex<Vec<Delivery>>>,
}

#[derive(Debug, Clone)]
pub struct Delivery {
    pub signature: String,
    /// Every header, names lowercase.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub json: serde_json::Value,
}

impl Receiver {
    pub async fn start(failures: usize) -> Receiver {
        use actix_web::{web, App, HttpRequest, HttpResponse, HttpServer};
        let received: std::sync::Arc<std::sync::Mutex<Vec<Delivery>>> = Default::default();
        let store = received.clone();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let server = HttpServer::new(move || {
            let store = store.clone();
            App::new().route(
                "/hook",
                web::post().to(move |req: HttpRequest, body: web::Bytes| {
                    let store = store.clone();
                    async move {
                        let mut all = store.lock().unwrap();
                        all.push(Delivery {
                            signature: req
                                .headers()
                                .get("x-service-signature")
                                .and_then(|v| v.to_str().ok())
                                .unwrap_or_default()
                                .to_owned(),
                            headers: req
                                .headers()
                                .iter()
                                .map(|(k, v)| {
                                    (k.as_str().to_owned(), v.to_str().unwrap_or_default().to_owned())
                                })
                                .collect(),
                            json: serde_json::from_slice(&body).unwrap_or_default(),
                            body: body.to_vec(),
                        });
                        if all.len() <= failures {
                            HttpResponse::InternalServerError().finish()
                        } else {
                            HttpResponse::Ok().finish()
                        }
                    }
                }),
            )
        })
        .workers(1)
        .listen(listener)
        .unwrap()
        .run();
        tokio::spawn(server);
        Receiver { url, received }
    }

    pub fn deliveries(&self) -> Vec<Delivery> {
        self.received.lock().unwrap().clone()
    }

    /// The first delivery of `event`, waiting up to 5 s: events a request
    /// emits are sent just after its answer.
    pub async fn wait_for(&self, event: &str) -> Delivery {
        for _ in 0..250 {
            if let Some(d) = self.deliveries().into_iter().find(|d| d.json["event"] == event) {
                return d;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        panic!("no {event} delivery arrived");
    }
}

/// Recounts every balance from the ledger's records and compares.
pub async fn assert_ledger_adds_up(c: &Client) {
    let txs: Vec<_> = c
        .all_transactions(paydesk_api::models::transactions::TransactionQuery {
            limit: Some(100),
            ..Default::default()
        })
        .try_collect::<Vec<_>>()
        .await
        .unwrap();
    let mut counted: std::collections::HashMap<String, (i64, i64)> = Default::default();
    for tx in txs {
        let net = tx.amount.value() - tx.fee.value();
        let entry = counted.entry(tx.currency.code().to_owned()).or_default();
        match tx.state {
            paydesk_api::models::transactions::TransactionState::Settled => entry.0 += net,
            paydesk_api::models::transactions::TransactionState::Pending
            | paydesk_api::models::transactions::TransactionState::InProgress
                if net < 0 =>
            {
                entry.0 += net
            }
            paydesk_api::models::transactions::TransactionState::Pending
            | paydesk_api::models::transactions::TransactionState::InProgress => entry.1 += net,
            paydesk_api::models::transactions::TransactionState::Failed
            | paydesk_api::models::transactions::TransactionState::Reversed => {}
        }
    }
    for account in c.balances().await.unwrap().accounts {
        let code = account.currency.code().to_owned();
        let balance = c.balance(&code).await.unwrap();
        let (available, pending) = counted.get(&code).copied().unwrap_or_default();
        assert_eq!(balance.available_balance.value(), available, "{code} available");
        assert_eq!(balance.pending_balance.value(), pending, "{code} pending");
    }
}
