//! `--data-dir`: the sandbox binary is killed with SIGKILL and started
//! again on the same directory; every acknowledged write is still there,
//! and a clock-driven step pending at the kill completes after it.

use std::net::TcpListener;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use paydesk_api::models::addresses::GenerateAddress;
use paydesk_api::models::control::SimulateDeposit;
use paydesk_api::units::BaseUnits;
use paydesk_api::{Client, ClientOptions, Credentials};
use paydesk_sandbox::fixture::Fixture;
use tokio::process::{Child, Command};

struct Running {
    child: Child,
    client: Client,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts the binary and waits until it answers.
async fn start(fixture: &Path, dir: &Path, fixture_data: &Fixture) -> Running {
    let port = free_port();
    let child = Command::new(env!("CARGO_BIN_EXE_paydesk-sandbox"))
        .args(["--listen", &format!("127.0.0.1:{port}"), "--workers", "1"])
        .arg("--fixture")
        .arg(fixture)
        .arg("--data-dir")
        .arg(dir)
        .stdout(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the sandbox binary starts");
    let base = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(30);
    let http = reqwest::Client::new();
    while http.get(format!("{base}/healthz")).send().await.is_err() {
        assert!(Instant::now() < deadline, "the sandbox never answered");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let c = &fixture_data.companies[0].clients[0];
    let client = Client::with_options(
        base,
        Credentials::new(c.client_id.to_string(), c.client_secret.clone()),
        ClientOptions {
            max_retries: 0,
            ..ClientOptions::default()
        },
    );
    Running { child, client }
}

async fn usdt(c: &Client) -> (i64, i64) {
    let b = c.balance("USDT").await.unwrap();
    (b.available_balance.value(), b.pending_balance.value())
}

#[tokio::test]
async fn acknowledged_writes_survive_kill_9_and_steps_resume() {
    let dir = std::env::temp_dir().join(format!("paydesk-sandbox-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let fixture = Fixture::demo();
    let fixture_path = dir.join("fixture.json");
    std::fs::write(&fixture_path, serde_json::to_vec(&fixture).unwrap()).unwrap();
    let data = dir.join("data");

    let mut first = start(&fixture_path, &data, &fixture).await;
    let c = &first.client;
    let (opening, _) = usdt(c).await;
    let address = c
        .generate_address(&GenerateAddress {
            chain: "ethereum".into(),
            reference: Some("addr-1".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    c.sandbox_advance_clock(3_600).await.unwrap();
    let clock_before = c.sandbox_clock().await.unwrap().now;
    c.sandbox_deposit(&SimulateDeposit {
        chain: "ethereum".into(),
        address: address.address.clone(),
        currency: "USDT".into(),
        amount: BaseUnits(2_500_000),
    })
    .await
    .unwrap();
    assert_eq!(usdt(c).await, (opening, 2_500_000));
    c.sandbox_set_price("BTC", "USDT", 61_234.into()).await.unwrap();
    first.child.start_kill().unwrap();
    first.child.wait().await.unwrap();

    let mut second = start(&fixture_path, &data, &fixture).await;
    let c = &second.client;
    assert!(
        c.sandbox_clock().await.unwrap().now >= clock_before,
        "the clock offset is kept"
    );
    let again = c.address(&address.id.to_string()).await.unwrap();
    assert_eq!(again.address, address.address);
    assert_eq!(usdt(c).await, (opening, 2_500_000), "the pending deposit is kept");
    let btc_usdt = c
        .trading_prices()
        .await
        .unwrap()
        .prices
        .into_iter()
        .find(|p| p.base_currency == "BTC" && p.quote_currency == "USDT")
        .unwrap();
    assert_eq!(btc_usdt.price, 61_234.into(), "market prices are kept");
    // The idempotency record is kept: the same reference replays.
    let replay = c
        .generate_address(&GenerateAddress {
            chain: "ethereum".into(),
            reference: Some("addr-1".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(replay.id, address.id);
    // The confirmation pending at the kill runs after the restart.
    c.sandbox_advance_clock(60).await.unwrap();
    assert_eq!(usdt(c).await, (opening + 2_500_000, 0));
    second.child.start_kill().unwrap();
    second.child.wait().await.unwrap();

    let mut third = start(&fixture_path, &data, &fixture).await;
    assert_eq!(usdt(&third.client).await, (opening + 2_500_000, 0));
    third.child.start_kill().unwrap();
    third.child.wait().await.unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}
