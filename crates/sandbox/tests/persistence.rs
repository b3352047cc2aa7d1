//! `--data-dir`: the sandbox binary is killed with SIGKILL and started
//! again on the same directory; every acknowledged write is still there,
//! and a clock-driven step pending at the kill completes after it.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use paydesk_api::models::addresses::GenerateAddress;
use paydesk_api::models::control::SimulateDeposit;
use paydesk_api::models::payouts::{InitializeRequest, PayoutBeneficiary, QuoteRequest};
use paydesk_api::units::BaseUnits;
use paydesk_api::{Client, ClientOptions, Credentials};
use paydesk_sandbox::fixture::Fixture;
use tokio::process::{Child, Command};

struct Running {
    child: Child,
    client: Client,
}

impl Running {
    /// SIGKILL, and wait until the process is gone.
    async fn kill_9(&mut self) {
        self.child.start_kill().unwrap();
        self.child.wait().await.unwrap();
    }
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

/// A fresh directory (removed by the test) with the demo fixture written
/// in it, and where the sandbox keeps its data.
struct Scratch {
    dir: PathBuf,
    fixture: Fixture,
    fixture_path: PathBuf,
    data: PathBuf,
}

fn scratch() -> Scratch {
    let dir = std::env::temp_dir().join(format!("paydesk-sandbox-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let fixture = Fixture::demo();
    let fixture_path = dir.join("fixture.json");
    std::fs::write(&fixture_path, serde_json::to_vec(&fixture).unwrap()).unwrap();
    Scratch {
        data: dir.join("data"),
        dir,
        fixture,
        fixture_path,
    }
}

async fn usdt(c: &Client) -> (i64, i64) {
    let b = c.balance("USDT").await.unwrap();
    (b.available_balance.value(), b.pending_balance.value())
}

#[tokio::test]
async fn acknowledged_writes_survive_kill_9_and_steps_resume() {
    let Scratch {
        dir,
        fixture,
        fixture_path,
        data,
    } = scratch();

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
    first.kill_9().await;

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
    second.kill_9().await;

    let mut third = start(&fixture_path, &data, &fixture).await;
    assert_eq!(usdt(&third.client).await, (opening + 2_500_000, 0));
    third.kill_9().await;
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Quotes are looked up by id through an index of the quotes made since
/// start; one made before a restart is not in it and is still found, by
/// its quote id and by its payout id.
#[tokio::test]
async fn a_payout_quoted_before_a_restart_is_found_and_carried_on_after_it() {
    let Scratch {
        dir,
        fixture,
        fixture_path,
        data,
    } = scratch();
    let mut first = start(&fixture_path, &data, &fixture).await;
    let quote = first
        .client
        .create_payout_quote(&QuoteRequest {
            amount: Some(10.into()),
            country: "NG".into(),
            from_asset: "USDT".into(),
            to_currency: "NGN".into(),
            source: "offchain".into(),
            reference: "before-restart".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    first.kill_9().await;

    let mut second = start(&fixture_path, &data, &fixture).await;
    let c = &second.client;
    assert_eq!(c.payout(&quote.quote_id).await.unwrap().id, quote.id);
    assert_eq!(
        c.payout(&quote.id.to_string()).await.unwrap().quote_id,
        quote.quote_id
    );
    let initialize = InitializeRequest {
        quote_id: quote.quote_id.clone(),
        reference: "before-restart".into(),
        payment_reason: "salary".into(),
        callback_url: None,
        beneficiary: PayoutBeneficiary {
            destination_type: "bank".into(),
            country: "NG".into(),
            account_name: "Ada Okafor".into(),
            account_number: "0123456789".into(),
            bank_code: Some("058".into()),
        },
    };
    c.initialize_payout(&quote.quote_id, &initialize).await.unwrap();
    let finalized = c.finalize_payout(&quote.quote_id).await.unwrap();
    assert_eq!(finalized.id, quote.id);
    assert_eq!(finalized.status.as_str(), "PENDING");
    second.kill_9().await;
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A quote and an order on it, as the bench makes them.
async fn trade(c: &Client, reference: &str) -> paydesk_api::models::trading::Order {
    use paydesk_api::models::trading::QuoteRequest;
    let quote = c
        .create_trading_quote(&QuoteRequest {
            base_currency: "BTC".into(),
            quote_currency: "USDT".into(),
            side: "buy".into(),
            quantity: "0.001".parse().unwrap(),
        })
        .await
        .unwrap();
    order_on(c, quote.id, reference).await
}

async fn order_on(c: &Client, quote_id: uuid::Uuid, reference: &str) -> paydesk_api::models::trading::Order {
    use paydesk_api::models::trading::OrderRequest;
    c.create_order(&OrderRequest {
        base_currency: "BTC".into(),
        quote_currency: "USDT".into(),
        side: "buy".into(),
        quantity: "0.001".parse().unwrap(),
        price: None,
        order_type: None,
        quote_id,
        quantity_in_base_units: None,
        reference: Some(reference.into()),
    })
    .await
    .unwrap()
}

async fn transaction_count(c: &Client) -> u64 {
    c.transactions(&Default::default()).await.unwrap().total_count
}

#[tokio::test]
async fn records_kept_one_by_one_come_back_whole_after_kill_9_reset_and_restore() {
    let Scratch {
        dir,
        fixture,
        fixture_path,
        data,
    } = scratch();

    let mut first = start(&fixture_path, &data, &fixture).await;
    let c = &first.client;
    let opening_count = transaction_count(c).await;
    let mut orders = Vec::new();
    for i in 0..5 {
        orders.push(trade(c, &format!("order-{i}")).await);
    }
    let snapshot = c.sandbox_snapshot().await.unwrap();
    let after_trades = (usdt(c).await, transaction_count(c).await);
    assert_eq!(after_trades.1, opening_count + 10, "two sides per trade");
    first.kill_9().await;

    // Every order, its ledger sides and its idempotency record are back.
    let mut second = start(&fixture_path, &data, &fixture).await;
    let c = &second.client;
    for o in &orders {
        assert_eq!(c.order(&o.id.to_string()).await.unwrap().status, o.status);
        // A quote's row is written once; its consumption comes back from
        // the order placed on it.
        let quote = c.trading_quote(&o.quote_id.to_string()).await.unwrap();
        assert_eq!(
            (quote.orders_count, quote.is_exhausted, quote.consumed_quantity),
            (1, true, o.quantity)
        );
    }
    assert_eq!((usdt(c).await, transaction_count(c).await), after_trades);
    // Writes after a restart join the records read back.
    let sixth = trade(c, "order-5").await;
    assert_eq!(transaction_count(c).await, opening_count + 12);
    // A reset drops every record of the company, on disk too.
    c.sandbox_reset().await.unwrap();
    assert_eq!(transaction_count(c).await, opening_count);
    second.kill_9().await;

    let mut third = start(&fixture_path, &data, &fixture).await;
    let c = &third.client;
    assert_eq!(transaction_count(c).await, opening_count, "the reset is kept");
    assert!(c.order(&sixth.id.to_string()).await.is_err());
    // A restored snapshot is written whole.
    c.sandbox_restore(&snapshot).await.unwrap();
    third.kill_9().await;

    let mut fourth = start(&fixture_path, &data, &fixture).await;
    let c = &fourth.client;
    assert_eq!((usdt(c).await, transaction_count(c).await), after_trades);
    for o in &orders {
        assert_eq!(c.order(&o.id.to_string()).await.unwrap().id, o.id);
    }
    assert!(c.order(&sixth.id.to_string()).await.is_err());
    fourth.kill_9().await;
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A data directory of an older format is read, rewritten in this
/// sandbox's format at the start, and its tables dropped. `make_older`
/// turns the directory (its tables emptied) into the older format, from a
/// snapshot document of the company holding one order.
async fn an_older_directory_is_read_then_rewritten(make_older: fn(&rusqlite::Connection, serde_json::Value)) {
    let Scratch {
        dir,
        fixture,
        fixture_path,
        data,
    } = scratch();

    let mut first = start(&fixture_path, &data, &fixture).await;
    let c = &first.client;
    let order = trade(c, "old-order").await;
    let document = c.sandbox_snapshot().await.unwrap();
    let kept = (usdt(c).await, transaction_count(c).await);
    first.kill_9().await;

    std::fs::remove_file(data.join("journal.log")).unwrap();
    let db = rusqlite::Connection::open(data.join("sandbox.sqlite3")).unwrap();
    db.execute_batch(
        "DELETE FROM company_heads; DELETE FROM record_rows;
         DELETE FROM meta WHERE key = 'format';",
    )
    .unwrap();
    make_older(&db, document);
    drop(db);

    let mut second = start(&fixture_path, &data, &fixture).await;
    let c = &second.client;
    assert_eq!((usdt(c).await, transaction_count(c).await), kept);
    assert_eq!(c.order(&order.id.to_string()).await.unwrap().id, order.id);
    let quote = c.trading_quote(&order.quote_id.to_string()).await.unwrap();
    assert!(quote.is_exhausted, "the quote's consumption comes from its order");
    // The idempotency record came through: the same reference replays.
    assert_eq!(order_on(c, order.quote_id, "old-order").await.id, order.id);
    second.kill_9().await;

    let db = rusqlite::Connection::open(data.join("sandbox.sqlite3")).unwrap();
    let older_tables: i64 = db
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name IN ('companies', 'heads', 'records', 'nonces')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let rows: i64 = db
        .query_row("SELECT count(*) FROM record_rows", [], |r| r.get(0))
        .unwrap();
    let format: String = db
        .query_row("SELECT value FROM meta WHERE key = 'format'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(
        older_tables, 0,
        "the older format's tables are gone once rewritten"
    );
    assert!(rows > 0);
    assert_eq!(format, paydesk_sandbox::disk::FORMAT.to_string());
    drop(db);
    let mut third = start(&fixture_path, &data, &fixture).await;
    assert_eq!(
        (usdt(&third.client).await, transaction_count(&third.client).await),
        kept
    );
    third.kill_9().await;
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The first format: each company as one whole snapshot document, some
/// books as JSON objects keyed by the records' keys.
#[tokio::test]
async fn a_data_directory_of_whole_documents_is_read_and_then_kept_as_rows() {
    an_older_directory_is_read_then_rewritten(|db, mut document| {
        let company = &mut document["company"];
        let by_key = |records: &serde_json::Value, key: &dyn Fn(&serde_json::Value) -> String| {
            serde_json::Value::Object(
                records
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| (key(r), r.clone()))
                    .collect(),
            )
        };
        company["trades"]["quotes"] = by_key(&company["trades"]["quotes"], &|r| {
            r["quote"]["id"].as_str().unwrap().to_owned()
        });
        company["idempotency"]["saved"] = by_key(&company["idempotency"]["saved"], &|r| {
            r["key"].as_str().unwrap().to_owned()
        });
        for saved in company["idempotency"]["saved"]
            .as_object_mut()
            .unwrap()
            .values_mut()
        {
            saved.as_object_mut().unwrap().remove("key");
        }
        db.execute_batch("CREATE TABLE companies (id TEXT PRIMARY KEY, state TEXT NOT NULL);")
            .unwrap();
        db.execute(
            "INSERT INTO companies (id, state) VALUES (?1, ?2)",
            [document["company_id"].as_str().unwrap(), &document.to_string()],
        )
        .unwrap();
    })
    .await;
}

/// Format 1: JSON heads, and JSON rows naming their company and kind.
#[tokio::test]
async fn a_data_directory_of_json_rows_is_read_and_rewritten() {
    an_older_directory_is_read_then_rewritten(|db, mut document| {
        let company_id = document["company_id"].as_str().unwrap().to_owned();
        let orders = document["company"]["trades"]["orders"].take();
        document["company"]["trades"]["orders"] = serde_json::json!([]);
        db.execute_batch(
            "CREATE TABLE heads (company TEXT PRIMARY KEY, state TEXT NOT NULL);
             CREATE TABLE records (id INTEGER PRIMARY KEY, company TEXT NOT NULL,
                 kind TEXT NOT NULL, body TEXT NOT NULL);",
        )
        .unwrap();
        db.execute(
            "INSERT INTO heads (company, state) VALUES (?1, ?2)",
            [&company_id, &document.to_string()],
        )
        .unwrap();
        // Row ids: the company's slot (0), the kind's place (8 for orders)
        // and the record's order, as format 2 has them too.
        for (ord, order) in orders.as_array().unwrap().iter().enumerate() {
            db.execute(
                "INSERT INTO records (id, company, kind, body) VALUES (?1, ?2, 'trade_orders', ?3)",
                rusqlite::params![(8i64 << 45) | ord as i64, company_id, order.to_string()],
            )
            .unwrap();
        }
    })
    .await;
}

/// Format 2 (the tables, no journal) and format 3 (the journal as table
/// `journal`) are read as they are and get this sandbox's format; format
/// 3's journal is folded and its table dropped.
async fn a_directory_of_format(format: u32) {
    let Scratch {
        dir,
        fixture,
        fixture_path,
        data,
    } = scratch();

    let mut first = start(&fixture_path, &data, &fixture).await;
    let c = &first.client;
    let order = trade(c, &format!("format-{format}-order")).await;
    let kept = (usdt(c).await, transaction_count(c).await);
    first.kill_9().await;

    // Loading folds the journal into the tables: what is left is format 2.
    let disk = paydesk_sandbox::disk::Disk::open(&data, false).unwrap();
    disk.load(&[], 0).unwrap();
    drop(disk);
    std::fs::remove_file(data.join("journal.log")).unwrap();
    let db = rusqlite::Connection::open(data.join("sandbox.sqlite3")).unwrap();
    db.execute(
        "UPDATE meta SET value = ?1 WHERE key = 'format'",
        [format.to_string()],
    )
    .unwrap();
    if format == 3 {
        // Format 3's journal holds the records: one PUT entry each (the
        // entry's kind, the row id and the body after its length).
        let mut entries = Vec::new();
        let mut rows = db.prepare("SELECT id, body FROM record_rows").unwrap();
        let mut rows = rows.query([]).unwrap();
        while let Some(row) = rows.next().unwrap() {
            let body: Vec<u8> = row.get(1).unwrap();
            entries.push(1u8);
            entries.extend_from_slice(&row.get::<_, i64>(0).unwrap().to_le_bytes());
            entries.extend_from_slice(&(body.len() as u32).to_le_bytes());
            entries.extend_from_slice(&body);
        }
        db.execute_batch(
            "CREATE TABLE journal (seq INTEGER PRIMARY KEY, body BLOB NOT NULL);
             DELETE FROM record_rows;",
        )
        .unwrap();
        db.execute("INSERT INTO journal (body) VALUES (?1)", [entries])
            .unwrap();
    }
    drop(db);

    let mut second = start(&fixture_path, &data, &fixture).await;
    let c = &second.client;
    assert_eq!((usdt(c).await, transaction_count(c).await), kept);
    assert_eq!(c.order(&order.id.to_string()).await.unwrap().id, order.id);
    second.kill_9().await;
    let db = rusqlite::Connection::open(data.join("sandbox.sqlite3")).unwrap();
    let format: String = db
        .query_row("SELECT value FROM meta WHERE key = 'format'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(format, paydesk_sandbox::disk::FORMAT.to_string());
    let journal_tables: i64 = db
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name = 'journal'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(journal_tables, 0);
    drop(db);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn a_data_directory_of_format_2_is_read_as_it_is() {
    a_directory_of_format(2).await;
}

#[tokio::test]
async fn a_data_directory_of_format_3_has_its_journal_table_folded() {
    a_directory_of_format(3).await;
}

/// A directory a newer sandbox wrote (another format) is refused, naming
/// the format it holds.
#[tokio::test]
async fn a_data_directory_of_a_newer_format_is_refused() {
    use paydesk_sandbox::state::{Options, Shared};
    let dir = std::env::temp_dir().join(format!("paydesk-sandbox-{}", uuid::Uuid::new_v4()));
    let options = || Options {
        data_dir: Some(dir.clone()),
        ..Options::default()
    };
    let fixture = Fixture::demo();
    drop(Shared::with_options(&fixture, options()).unwrap());
    let db = rusqlite::Connection::open(dir.join("sandbox.sqlite3")).unwrap();
    db.execute("UPDATE meta SET value = '99' WHERE key = 'format'", [])
        .unwrap();
    drop(db);
    let refused = Shared::with_options(&fixture, options())
        .err()
        .unwrap()
        .to_string();
    assert!(refused.contains("format 99"), "{refused}");
    std::fs::remove_dir_all(&dir).ok();
}

/// The portal's tests start a second sandbox on a directory while the
/// first still runs (in one process): it starts, and finds what the first
/// kept.
#[tokio::test]
async fn a_second_sandbox_on_the_same_directory_starts_beside_the_first() {
    use paydesk_sandbox::state::Options;
    use paydesk_sandbox::RunningSandbox;
    let dir = std::env::temp_dir().join(format!("paydesk-sandbox-{}", uuid::Uuid::new_v4()));
    let fixture = Fixture::demo();
    let options = || Options {
        data_dir: Some(dir.join("data")),
        ..Options::default()
    };
    let bind = || std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let c = &fixture.companies[0].clients[0];
    let client = |sandbox: &RunningSandbox| {
        Client::new(
            sandbox.base_url.clone(),
            Credentials::new(c.client_id.to_string(), c.client_secret.clone()),
        )
    };
    let first = RunningSandbox::start_with(&fixture, bind(), 1, options())
        .await
        .unwrap();
    let order = trade(&client(&first), "first-order").await;
    let second = RunningSandbox::start_with(&fixture, bind(), 1, options())
        .await
        .unwrap();
    let found = client(&second).order(&order.id.to_string()).await.unwrap();
    assert_eq!(found.id, order.id);
    // Both can still write.
    trade(&client(&second), "second-order").await;
    trade(&client(&first), "third-order").await;
    second.stop().await;
    first.stop().await;
    std::fs::remove_dir_all(&dir).ok();
}

/// Starts a sandbox in-process on `dir`, creates `customers` customers
/// (each write one journal record) and stops it without folding.
async fn customers_kept_in(dir: &Path, fixture: &Fixture, customers: usize) {
    use paydesk_sandbox::state::Options;
    use paydesk_sandbox::RunningSandbox;
    let options = Options {
        data_dir: Some(dir.to_owned()),
        ..Options::default()
    };
    let sandbox = RunningSandbox::start_with(
        fixture,
        std::net::TcpListener::bind("127.0.0.1:0").unwrap(),
        1,
        options,
    )
    .await
    .unwrap();
    let c = &fixture.companies[0].clients[0];
    let client = Client::new(
        sandbox.base_url.clone(),
        Credentials::new(c.client_id.to_string(), c.client_secret.clone()),
    );
    for n in 0..customers {
        client
            .create_customer(&paydesk_api::models::customers::NewCustomer {
                email: format!("kept-{n}@example.com"),
                customer_type: "individual".into(),
                ..Default::default()
            })
            .await
            .unwrap();
    }
    sandbox.stop().await;
}

/// The customers a start on `dir` finds (with `repair`), or why it refused.
async fn customers_found(dir: &Path, fixture: &Fixture, repair: bool) -> Result<u64, String> {
    use paydesk_sandbox::state::Options;
    use paydesk_sandbox::RunningSandbox;
    let options = Options {
        data_dir: Some(dir.to_owned()),
        repair,
        ..Options::default()
    };
    let sandbox = RunningSandbox::start_with(
        fixture,
        std::net::TcpListener::bind("127.0.0.1:0").unwrap(),
        1,
        options,
    )
    .await
    .map_err(|e| e.to_string())?;
    let c = &fixture.companies[0].clients[0];
    let client = Client::new(
        sandbox.base_url.clone(),
        Credentials::new(c.client_id.to_string(), c.client_secret.clone()),
    );
    let found = client.customers(&Default::default()).await.unwrap().total;
    sandbox.stop().await;
    Ok(found)
}

#[tokio::test]
async fn a_damaged_journal_record_refuses_the_start_until_repair_drops_it() {
    let Scratch {
        dir, fixture, data, ..
    } = scratch();
    customers_kept_in(&data, &fixture, 5).await;
    let journal = data.join("journal.log");
    let mut bytes = std::fs::read(&journal).unwrap();
    assert!(!bytes.is_empty(), "the writes are in the journal");
    // One flipped byte in the last record (the fifth customer's write).
    let last = bytes.len() - 3;
    bytes[last] ^= 0x20;
    std::fs::write(&journal, &bytes).unwrap();

    let refused = customers_found(&data, &fixture, false).await.unwrap_err();
    assert!(refused.contains("journal.log record"), "{refused}");
    assert!(refused.contains("fails its checksum"), "{refused}");
    assert!(refused.contains("--repair"), "{refused}");
    assert_eq!(
        std::fs::read(&journal).unwrap(),
        bytes,
        "a refused start changes nothing"
    );
    assert_eq!(customers_found(&data, &fixture, true).await.unwrap(), 4);
    assert_eq!(
        customers_found(&data, &fixture, false).await.unwrap(),
        4,
        "once repaired, the directory starts"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Runs the binary on `dir` and, if it refuses to start, what it said.
async fn refused_start(fixture: &Path, dir: &Path) -> Option<String> {
    let run = Command::new(env!("CARGO_BIN_EXE_paydesk-sandbox"))
        .args(["--listen", &format!("127.0.0.1:{}", free_port())])
        .arg("--fixture")
        .arg(fixture)
        .arg("--data-dir")
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output();
    match tokio::time::timeout(Duration::from_secs(10), run).await {
        Ok(output) => {
            let output = output.unwrap();
            assert!(!output.status.success());
            Some(String::from_utf8_lossy(&output.stderr).into_owned())
        }
        Err(_) => None,
    }
}

#[tokio::test]
async fn a_store_that_lost_what_it_held_refuses_the_start() {
    let Scratch {
        dir,
        fixture,
        fixture_path,
        data,
    } = scratch();
    // Each start its own process, so no connection of this one is left
    // open on the store when it is emptied.
    let mut first = start(&fixture_path, &data, &fixture).await;
    for n in 0..3 {
        first
            .client
            .create_customer(&paydesk_api::models::customers::NewCustomer {
                email: format!("lost-{n}@example.com"),
                customer_type: "individual".into(),
                ..Default::default()
            })
            .await
            .unwrap();
    }
    first.kill_9().await;
    // A start folds the journal into the store; then the store is emptied
    // (as by a failed copy), its journal and marker left as they were.
    let mut second = start(&fixture_path, &data, &fixture).await;
    assert_eq!(
        second.client.customers(&Default::default()).await.unwrap().total,
        3
    );
    second.kill_9().await;
    std::fs::write(data.join("sandbox.sqlite3"), b"").unwrap();
    for extra in ["sandbox.sqlite3-wal", "sandbox.sqlite3-shm"] {
        std::fs::remove_file(data.join(extra)).ok();
    }
    let refused = refused_start(&fixture_path, &data)
        .await
        .expect("the start is refused");
    assert!(refused.contains("lost what it held"), "{refused}");
    assert!(refused.contains("store.marker"), "{refused}");
    assert!(refused.contains("--repair"), "{refused}");
    assert_eq!(
        std::fs::metadata(data.join("sandbox.sqlite3")).unwrap().len(),
        0,
        "a refused start writes nothing"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--repair` on a store that lost what it held starts from what it holds.
#[tokio::test]
async fn repair_goes_on_from_what_the_store_holds() {
    let Scratch {
        dir, fixture, data, ..
    } = scratch();
    std::fs::create_dir_all(&data).unwrap();
    // A marker of a store this directory's database never held.
    std::fs::write(
        data.join("store.marker"),
        format!("store {} folds 3\n", uuid::Uuid::new_v4()),
    )
    .unwrap();
    let refused = customers_found(&data, &fixture, false).await.unwrap_err();
    assert!(refused.contains("holds no store"), "{refused}");
    assert_eq!(customers_found(&data, &fixture, true).await.unwrap(), 0);
    assert_eq!(customers_found(&data, &fixture, false).await.unwrap(), 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn the_data_directory_is_readable_by_its_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let Scratch {
        dir, fixture, data, ..
    } = scratch();
    customers_kept_in(&data, &fixture, 1).await;
    let mode = |name: &str| std::fs::metadata(data.join(name)).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(""), 0o700);
    for file in ["sandbox.sqlite3", "journal.log", "store.marker"] {
        assert_eq!(mode(file), 0o600, "{file}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
