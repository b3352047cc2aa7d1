//! `paydesk-sandbox --listen ADDR [--fixture FILE] [--workers N]
//! [--webhook-signature-header NAME]... [--data-dir DIR [--repair]]`.

use std::net::TcpListener;
use std::path::{Path, PathBuf};

use actix_web::web::Data;
use clap::Parser;
use paydesk_sandbox::disk::Disk;
use paydesk_sandbox::fixture::Fixture;
use paydesk_sandbox::server;
use paydesk_sandbox::state::{Options, Shared};

/// mimalloc, not the system allocator: the sandbox allocates and frees on
/// every request, and glibc's malloc took a share of the machine in the
/// portal's benchmarks that ran against it.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A stateful sandbox of the Payments, Trading and Cards Service API v2.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8090")]
    listen: String,
    /// Fixture file (JSON) with companies, balances and clients. Without
    /// one, a demo company is created and its credentials are printed.
    #[arg(long)]
    fixture: Option<PathBuf>,
    /// Worker threads (default: one per core).
    #[arg(long)]
    workers: Option<usize>,
    /// Also send the webhook signature under this header name (repeatable),
    /// for receivers that expect another name than x-service-signature.
    #[arg(long = "webhook-signature-header", value_name = "NAME")]
    webhook_signature_headers: Vec<String>,
    /// Keep all state in this directory: every acknowledged write survives
    /// a kill and a restart. Without it the state is in memory only.
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// With --data-dir: start even though the directory is damaged,
    /// dropping a journal record that fails its checksum and every record
    /// after it, or going on from a store that lost what it held; each is
    /// said in the log. Without it such a directory refuses to start.
    #[arg(long, requires = "data_dir")]
    repair: bool,
}

/// The demo company: the one a data directory kept, else a new one.
fn demo(data_dir: Option<&Path>, repair: bool) -> std::io::Result<Fixture> {
    let kept = match data_dir {
        Some(dir) => Disk::open(dir, repair)
            .and_then(|disk| disk.kept_fixture())
            .map_err(std::io::Error::other)?,
        None => None,
    };
    let (demo, how) = match kept {
        Some(kept) => (kept, "Demo company kept in the data directory."),
        None => (Fixture::demo(), "Demo company created."),
    };
    if let Some(client) = demo.companies.first().and_then(|c| c.clients.first()) {
        println!("{how} Sign requests with:");
        println!("  client id:     {}", client.client_id);
        println!("  client secret: {}", client.client_secret);
    }
    Ok(demo)
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "paydesk_sandbox=info".into()),
        )
        .init();
    let args = Args::parse();
    let fixture = match &args.fixture {
        Some(path) => Fixture::load(path).map_err(|e| std::io::Error::other(e.to_string()))?,
        None => demo(args.data_dir.as_deref(), args.repair)?,
    };
    let listener = TcpListener::bind(&args.listen)?;
    println!("Sandbox listening on http://{}", listener.local_addr()?);
    for name in &args.webhook_signature_headers {
        reqwest::header::HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
            std::io::Error::other(format!(
                "--webhook-signature-header: '{name}' is not a valid header name"
            ))
        })?;
    }
    let options = Options {
        webhook_signature_headers: args.webhook_signature_headers,
        data_dir: args.data_dir,
        repair: args.repair,
    };
    let shared =
        Data::new(Shared::with_options(&fixture, options).map_err(|e| std::io::Error::other(e.to_string()))?);
    let workers = args
        .workers
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
    let server = server::build(shared.clone(), listener, workers, true)?;
    tokio::spawn(server::tick(shared));
    server.await
}
