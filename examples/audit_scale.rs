//! The audit log at scale (`bench/audit_scale.sh`): loads N records with a
//! correct chain into an empty database, then measures the portal's own
//! audit code on it: the search page's queries, "verify chain" and the CSV
//! export.
//!
//! Usage (DATABASE_URL names the database):
//!   audit_scale load N      N records over three tenants and the platform log,
//!                           a year of them, 40 actors and the portal's events
//!   audit_scale search [R]  each search shape R times (p50/p95), then once
//!                           more with auto_explain, printing the plan
//!   audit_scale verify      "verify chain" of the largest tenant's log, whole,
//!                           then from the point it ended on
//!   audit_scale export      its CSV export (at most 1,000,000 records)

use std::time::{Duration, Instant};

use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use futures_util::StreamExt;
use paydesk::audit::chain::{self, Hashed, GENESIS};
use paydesk::audit::details::Details;
use paydesk::audit::store::{self, AuditFilter, ChainReport, Log};
use paydesk::audit::{export, target, verify, Actor, Event};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{Executor, PgPool};
use uuid::Uuid;

/// The logs, and the share of records each gets (in tenths).
const LOGS: [(Option<u128>, u64); 4] = [(Some(0xa), 7), (Some(0xb), 1), (Some(0xc), 1), (None, 1)];
const ACTORS: u64 = 40;
const START: i64 = 1_733_011_200; // 2024-12-01T00:00:00Z
const YEAR_SECS: i64 = 365 * 86_400;

/// The measured log: the largest tenant's.
fn measured() -> Log {
    Log::Tenant(Uuid::from_u128(0xa))
}

/// A cheap, repeatable pseudo-random number per record.
fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

struct Generated {
    occurred_at: DateTime<Utc>,
    tenant_id: Option<Uuid>,
    actor_id: Uuid,
    actor_email: String,
    action: &'static str,
    target: String,
    outcome: &'static str,
    ip: String,
    user_agent: &'static str,
    details: Details,
}

fn generate(i: u64, n: u64) -> Generated {
    let r = mix(i);
    let tenth = r % 10;
    let mut acc = 0;
    let tenant_id = LOGS
        .iter()
        .find(|(_, share)| {
            acc += share;
            tenth < acc
        })
        .and_then(|(t, _)| t.map(Uuid::from_u128));
    let actor = (r >> 8) % ACTORS;
    let pick = (r >> 16) % 100;
    let failed = (r >> 24) % 100 < 2;
    let (action, target, outcome) = match pick {
        0..=54 => {
            let outcome = if failed { "failed" } else { "ok" };
            (
                Event::UpstreamCall,
                format!("POST /api/payouts/po_{i:09}"),
                outcome,
            )
        }
        55..=64 => (
            Event::AuthSignIn,
            format!("user:{}", Uuid::from_u128(actor as u128 + 1)),
            "success",
        ),
        65..=69 => (
            Event::ApprovalsRequested,
            format!("approval:{}", i / 3),
            "success",
        ),
        70..=74 => (Event::ApprovalsApproved, format!("approval:{}", i / 3), "success"),
        75..=79 => (Event::ApprovalsExecuted, format!("approval:{}", i / 3), "success"),
        80..=89 => (
            Event::WebhooksReceived,
            format!("event:evt_{:016x}", r),
            "success",
        ),
        90..=93 => (
            Event::AuthSignInFailed,
            format!("user:{}", Uuid::from_u128(actor as u128 + 1)),
            "failure",
        ),
        94..=96 => (
            Event::MembersRoleChanged,
            format!("member:{}", (r >> 32) % 500),
            "success",
        ),
        97..=98 => (
            Event::ConnectionsCreated,
            format!("connection:{}", (r >> 32) % 50),
            "success",
        ),
        _ => (Event::AuditExported, "audit_log".to_owned(), "success"),
    };
    let offset = (i as i64) * (YEAR_SECS * 1_000_000 / n.max(1) as i64);
    Generated {
        occurred_at: Utc.timestamp_opt(START, 0).unwrap() + TimeDelta::microseconds(offset),
        tenant_id,
        actor_id: Uuid::from_u128(actor as u128 + 1),
        actor_email: format!("member{actor}@company{}.example", actor % 7),
        action: action.name(),
        target,
        outcome,
        ip: format!("10.0.{}.{}", actor % 4, actor),
        user_agent: "Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0",
        details: Details::of(
            &serde_json::json!({"status": 201, "request_id": format!("req_{i:012}"), "duration_ms": r % 300}),
        ),
    }
}

/// COPY's text format: a field with `\N` for NULL (the generated text
/// holds no tab, newline or backslash).
fn field(out: &mut String, value: &str) {
    out.push_str(value);
    out.push('\t');
}

async fn load(pool: &PgPool, n: u64) {
    for (tenant, _) in LOGS {
        if let Some(t) = tenant {
            sqlx::query("INSERT INTO tenants (id, name) VALUES ($1, $2) ON CONFLICT DO NOTHING")
                .bind(Uuid::from_u128(t))
                .bind(format!("Bench tenant {t:x}"))
                .execute(pool)
                .await
                .expect("tenant");
        }
    }
    let started = Instant::now();
    let mut heads: Vec<(i64, [u8; 32])> = vec![(0, GENESIS); LOGS.len()];
    let mut conn = pool.acquire().await.expect("connection");
    let mut copy = conn
        .copy_in_raw(
            "COPY audit_log (occurred_at, tenant_id, actor_id, actor_email, action, target, outcome, ip, \
             user_agent, details, prev_hash, hash, seq, target_kind) FROM STDIN",
        )
        .await
        .expect("copy");
    let mut buf = String::with_capacity(1 << 22);
    for i in 0..n {
        let g = generate(i, n);
        let slot = LOGS
            .iter()
            .position(|(t, _)| t.map(Uuid::from_u128) == g.tenant_id)
            .expect("a known log");
        let (seq, prev) = &mut heads[slot];
        let hash = chain::hash(
            prev,
            &Hashed {
                occurred_at: g.occurred_at,
                tenant_id: g.tenant_id,
                actor_id: Some(g.actor_id),
                actor_email: &g.actor_email,
                action: g.action,
                target: &g.target,
                outcome: g.outcome,
                ip: &g.ip,
                user_agent: g.user_agent,
                details: &g.details,
            },
        );
        *seq += 1;
        field(
            &mut buf,
            &g.occurred_at.format("%Y-%m-%d %H:%M:%S%.6f+00").to_string(),
        );
        field(&mut buf, &g.tenant_id.map_or("\\N".to_owned(), |t| t.to_string()));
        field(&mut buf, &g.actor_id.to_string());
        field(&mut buf, &g.actor_email);
        field(&mut buf, g.action);
        field(&mut buf, &g.target);
        field(&mut buf, g.outcome);
        field(&mut buf, &g.ip);
        field(&mut buf, g.user_agent);
        field(&mut buf, g.details.as_str());
        field(&mut buf, &format!("\\\\x{}", hex::encode(prev.as_slice())));
        field(&mut buf, &format!("\\\\x{}", hex::encode(hash)));
        field(&mut buf, &seq.to_string());
        buf.push_str(target::split(&g.target).0.unwrap_or("\\N"));
        buf.push('\n');
        *prev = hash;
        if buf.len() > (1 << 22) - 4096 {
            copy.send(buf.as_bytes()).await.expect("copy data");
            buf.clear();
        }
    }
    copy.send(buf.as_bytes()).await.expect("copy data");
    let rows = copy.finish().await.expect("copy end");
    println!(
        "loaded {rows} records in {:.1} s (chain computed with the portal's chain::hash)",
        started.elapsed().as_secs_f64()
    );
    conn.execute("ANALYZE audit_log").await.expect("analyze");
}

fn month(m: u32) -> DateTime<Utc> {
    let (y, m) = if m > 12 { (2025, m - 12) } else { (2024, m) };
    Utc.with_ymd_and_hms(y, m, 1, 0, 0, 0).unwrap()
}

/// The searches the page makes: each filter alone and together, with and
/// without a date range, one matching nothing, and deep pages.
async fn cases(pool: &PgPool) -> Vec<(&'static str, AuditFilter)> {
    let log = measured().tenant_id();
    let middle: i64 = sqlx::query_scalar(
        "SELECT id FROM audit_log WHERE tenant_id = $1 AND occurred_at >= $2 ORDER BY occurred_at, id LIMIT 1",
    )
    .bind(log)
    .bind(month(18))
    .fetch_one(pool)
    .await
    .expect("a record half a year in");
    let june = (Some(month(18)), Some(month(19)));
    let text = |s: &str| Some(s.to_owned());
    let f = AuditFilter::default;
    vec![
        ("first page", f()),
        (
            "actor",
            AuditFilter {
                actor: text("member7@"),
                ..f()
            },
        ),
        (
            "action",
            AuditFilter {
                action: text("approvals.approved"),
                ..f()
            },
        ),
        (
            "action prefix, rare",
            AuditFilter {
                action: text("connections."),
                ..f()
            },
        ),
        (
            "target kind:id",
            AuditFilter {
                target: text("approval:4242"),
                ..f()
            },
        ),
        (
            "target kind, rare",
            AuditFilter {
                target: text("connection"),
                ..f()
            },
        ),
        (
            "target id prefix",
            AuditFilter {
                target: text("po_00000424"),
                ..f()
            },
        ),
        (
            "target id prefix, common",
            AuditFilter {
                target: text("PO_"),
                ..f()
            },
        ),
        (
            "target, pasted beginning",
            AuditFilter {
                target: text("POST /api/payouts/po_0000042"),
                ..f()
            },
        ),
        (
            "outcome",
            AuditFilter {
                outcome: text("failed"),
                ..f()
            },
        ),
        (
            "date range (a month)",
            AuditFilter {
                from: june.0,
                to: june.1,
                ..f()
            },
        ),
        (
            "actor + action",
            AuditFilter {
                actor: text("member7@"),
                action: text("approvals.approved"),
                ..f()
            },
        ),
        (
            "actor + action + month",
            AuditFilter {
                actor: text("member7@"),
                action: text("approvals.approved"),
                from: june.0,
                to: june.1,
                ..f()
            },
        ),
        (
            "all five + month",
            AuditFilter {
                actor: text("member7@"),
                action: text("auth."),
                target: text("user:"),
                outcome: text("failure"),
                from: june.0,
                to: june.1,
                ..f()
            },
        ),
        (
            "matches nothing (actor)",
            AuditFilter {
                actor: text("nobody@nowhere"),
                ..f()
            },
        ),
        (
            "matches nothing (target)",
            AuditFilter {
                target: text("no such target"),
                ..f()
            },
        ),
        (
            "deep page",
            AuditFilter {
                before_id: Some(middle),
                ..f()
            },
        ),
        (
            "deep page, actor",
            AuditFilter {
                actor: text("member7@"),
                before_id: Some(middle),
                ..f()
            },
        ),
    ]
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

async fn search(pool: &PgPool, explain: &PgPool, rounds: usize) {
    let log = measured();
    let cases = cases(pool).await;
    println!(
        "{:<28} {:>6} {:>9} {:>9}",
        "search (page of 51)", "rows", "p50 ms", "p95 ms"
    );
    for (name, filter) in &cases {
        let mut times = Vec::with_capacity(rounds);
        let mut rows = 0;
        for round in 0..rounds + 2 {
            let started = Instant::now();
            rows = store::search(pool, log, filter, 51)
                .await
                .expect("search")
                .records
                .len();
            if round >= 2 {
                times.push(started.elapsed());
            }
        }
        times.sort();
        println!(
            "{name:<28} {rows:>6} {:>9.2} {:>9.2}",
            percentile(&times, 0.5),
            percentile(&times, 0.95)
        );
    }
    for (name, filter) in &cases {
        println!("\n-- plan: {name}");
        store::search(explain, log, filter, 51).await.expect("search");
    }
}

async fn verify(pool: &PgPool) {
    for whole in [true, false] {
        let started = Instant::now();
        let job = verify::start(pool, measured(), None, whole).await.expect("start");
        let report = verify::run(pool, &job, &Actor::default()).await.expect("verify");
        let finding = match report {
            ChainReport::Intact { records, .. } => format!("intact, {records} records verified"),
            ChainReport::Broken { id, reason, .. } => format!("broken at #{id}: {reason}"),
        };
        println!(
            "verify chain ({}): {} records walked, {finding}, {:.2} s",
            if whole {
                "whole"
            } else {
                "from the last verified point"
            },
            job.total,
            started.elapsed().as_secs_f64()
        );
    }
}

async fn export_csv(pool: &PgPool) {
    let started = Instant::now();
    let records = export::matching(pool.clone(), measured(), AuditFilter::default()).take(1_000_000);
    let response = paydesk::web::listing::export("audit", records)
        .await
        .expect("export");
    let mut body = std::pin::pin!(response.into_body());
    let (mut bytes, mut chunks) = (0usize, 0usize);
    while let Some(chunk) =
        std::future::poll_fn(|cx| actix_web::body::MessageBody::poll_next(body.as_mut(), cx)).await
    {
        bytes += chunk.expect("a chunk").len();
        chunks += 1;
    }
    println!(
        "CSV export: {:.1} MB in {chunks} chunks, {:.2} s",
        bytes as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
}

#[tokio::main]
async fn main() {
    let url = std::env::var("DATABASE_URL").expect("DATABASE_URL");
    let mut args = std::env::args().skip(1);
    let command = args.next().unwrap_or_default();
    let number: Option<u64> = args.next().and_then(|a| a.parse().ok());
    let pool = paydesk::db::connect_and_migrate(&url, 4).await.expect("database");
    match command.as_str() {
        "load" => load(&pool, number.unwrap_or(1_000_000)).await,
        "search" => {
            tracing_subscriber::fmt()
                .with_env_filter("sqlx::postgres::notice=info")
                .without_time()
                .with_target(false)
                .with_level(false)
                .init();
            // The plans of the very statements the portal sends, from
            // auto_explain, as notices on a connection of their own.
            let options: PgConnectOptions = url.parse().expect("url");
            let explain = PgPoolOptions::new()
                .max_connections(1)
                .after_connect(|conn, _| {
                    Box::pin(async move {
                        conn.execute(
                            "LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0; \
                             SET auto_explain.log_analyze = on; SET auto_explain.log_buffers = on; \
                             SET auto_explain.log_level = notice; SET client_min_messages = notice",
                        )
                        .await?;
                        Ok(())
                    })
                })
                .connect_with(options)
                .await
                .expect("explain connection");
            search(&pool, &explain, number.unwrap_or(30) as usize).await
        }
        "verify" => verify(&pool).await,
        "export" => export_csv(&pool).await,
        _ => eprintln!("usage: audit_scale load N | search [ROUNDS] | verify | export"),
    }
}
