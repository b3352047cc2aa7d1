//! Throughput of quote + order pairs against a running sandbox: each of
//! `CONCURRENCY` tasks requests a quote and places an order on it, over
//! and over, for `SECONDS`, through the typed client (signed, one nonce per
//! request). Run by `bench/sandbox_trading.sh`, which starts the release
//! sandbox with a fixture rich enough not to run dry.
//!
//! Usage: trading_pairs BASE_URL CLIENT_ID SECRET SECONDS CONCURRENCY

use std::str::FromStr;
use std::time::{Duration, Instant};

use paydesk_api::models::trading::{OrderRequest, QuoteRequest};
use paydesk_api::{Client, ClientOptions, Credentials};
use rust_decimal::Decimal;

async fn pair(client: &Client) -> Result<(), paydesk_api::ApiError> {
    let quantity = Decimal::from_str("0.0001").expect("a decimal");
    let quote = client
        .create_trading_quote(&QuoteRequest {
            base_currency: "BTC".into(),
            quote_currency: "USDT".into(),
            side: "buy".into(),
            quantity,
        })
        .await?;
    client
        .create_order(&OrderRequest {
            base_currency: "BTC".into(),
            quote_currency: "USDT".into(),
            side: "buy".into(),
            quantity,
            quote_id: quote.id,
            ..OrderRequest::default()
        })
        .await?;
    Ok(())
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 6 {
        eprintln!("usage: trading_pairs BASE_URL CLIENT_ID SECRET SECONDS CONCURRENCY");
        std::process::exit(2);
    }
    let seconds: u64 = args[4].parse().expect("SECONDS is a number");
    let concurrency: usize = args[5].parse().expect("CONCURRENCY is a number");
    let client = Client::with_options(
        args[1].clone(),
        Credentials::new(args[2].clone(), args[3].clone()),
        ClientOptions {
            max_retries: 0,
            ..ClientOptions::default()
        },
    );
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let tasks: Vec<_> = (0..concurrency)
        .map(|_| {
            let client = client.clone();
            tokio::spawn(async move {
                let (mut latencies, mut errors) = (Vec::new(), 0u64);
                while Instant::now() < deadline {
                    let started = Instant::now();
                    match pair(&client).await {
                        Ok(()) => latencies.push(started.elapsed()),
                        Err(_) => errors += 1,
                    }
                }
                (latencies, errors)
            })
        })
        .collect();
    let mut all = Vec::new();
    let mut errors = 0;
    for task in tasks {
        let (latencies, e) = task.await.expect("a bench task");
        all.extend(latencies);
        errors += e;
    }
    all.sort();
    let at = |q: f64| {
        all.get(((all.len() as f64 * q) as usize).min(all.len().saturating_sub(1)))
            .copied()
    };
    println!(
        "quote+order pairs: {} in {seconds} s = {:.0} pairs/s ({:.0} requests/s), {errors} errors",
        all.len(),
        all.len() as f64 / seconds as f64,
        2.0 * all.len() as f64 / seconds as f64
    );
    if let (Some(p50), Some(p99)) = (at(0.5), at(0.99)) {
        println!(
            "pair latency p50 {:.2} ms, p99 {:.2} ms",
            p50.as_secs_f64() * 1e3,
            p99.as_secs_f64() * 1e3
        );
    }
}
