//! Writes a synthetic audit bundle for the verifier benchmark
//! (`bench/audit_verify.sh`): N records of one tenant's log, a signed
//! checkpoint every 10,000 records and one at the head, in the format
//! `paydesk audit verify` reads. With DATABASE_URL set it also times
//! signing a checkpoint against Postgres (one lock, the head, the latest
//! checkpoint, one insert).
//!
//! Usage: cargo run --release --example audit_bundle -- N FILE

use std::io::{BufWriter, Write};
use std::time::Instant;

use chrono::{DateTime, TimeDelta, Utc};
use ed25519_dalek::{Signer, SigningKey};
use paydesk::audit::bundle::{Header, Line, Record, FORMAT};
use paydesk::audit::checkpoint::{self, Checkpoint};
use paydesk::audit::details::Details;
use paydesk::audit::{chain, store, Actor, Event, NewRecord};
use sha2::{Digest, Sha256};
use uuid::Uuid;

const EVERY: i64 = 10_000;

fn record(tenant: Uuid, start: DateTime<Utc>, seq: i64, prev: &str) -> Record {
    let mut r = Record {
        seq,
        id: seq * 3,
        occurred_at: start + TimeDelta::milliseconds(seq * 250),
        tenant_id: Some(tenant),
        actor_id: Some(Uuid::from_u128(seq as u128 % 17)),
        actor_email: format!("member{}@example.com", seq % 17),
        action: "upstream.call".to_owned(),
        target: format!("POST /api/payouts/{seq}"),
        outcome: "ok".to_owned(),
        ip: "10.0.0.7".to_owned(),
        user_agent: "Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0".to_owned(),
        details: Details::of(
            &serde_json::json!({"method": "POST", "path": format!("/api/payouts/{seq}"), "status": 201,
                                    "request_id": format!("req_{seq:012}"), "duration_ms": seq % 300}),
        ),
        prev_hash: prev.to_owned(),
        hash: String::new(),
    };
    let prev = hex::decode(prev).expect("hex");
    r.hash = hex::encode(chain::hash(
        &prev,
        &chain::Hashed {
            occurred_at: r.occurred_at,
            tenant_id: r.tenant_id,
            actor_id: r.actor_id,
            actor_email: &r.actor_email,
            action: &r.action,
            target: &r.target,
            outcome: &r.outcome,
            ip: &r.ip,
            user_agent: &r.user_agent,
            details: &r.details,
        },
    ));
    r
}

fn sign(key: &SigningKey, tenant: Uuid, id: i64, length: i64, head: &str, prev: &str) -> Checkpoint {
    let at = chain::truncate_to_micros(Utc::now());
    let text = checkpoint::message(Some(tenant), length, head, at, prev);
    Checkpoint {
        id,
        tenant_id: Some(tenant),
        length,
        head_hash: head.to_owned(),
        signed_at: at,
        prev_hash: prev.to_owned(),
        hash: hex::encode(Sha256::digest(&text)),
        signature: hex::encode(key.sign(text.as_bytes()).to_bytes()),
    }
}

fn write_line(out: &mut impl Write, line: &Line) {
    serde_json::to_writer(&mut *out, line).expect("write");
    out.write_all(b"\n").expect("write");
}

async fn time_db_signing(url: &str, key: &SigningKey) {
    let pool = paydesk::db::connect_and_migrate(url, 4).await.expect("database");
    let log = store::Log::Tenant(Uuid::new_v4());
    let actor = Actor::default();
    let rounds = 200;
    let mut spent = std::time::Duration::ZERO;
    for i in 0..rounds {
        let r = NewRecord::new(
            &actor,
            log.tenant_id(),
            Event::AuditVerified,
            format!("bench:{i}"),
            "success",
        );
        store::append(&pool, &[r]).await.expect("append");
        let started = Instant::now();
        checkpoint::sign(&pool, key, log, None)
            .await
            .expect("sign")
            .expect("a new head");
        spent += started.elapsed();
    }
    println!(
        "checkpoint signing against Postgres (lock, head, latest, insert): {:.2} ms on average over {rounds}",
        spent.as_secs_f64() * 1000.0 / rounds as f64
    );
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1);
    let n: i64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let path = args.next().unwrap_or_else(|| "audit-bundle.jsonl".to_owned());
    let key = SigningKey::from_bytes(&Sha256::digest(b"paydesk bench key").into());
    let tenant = Uuid::from_u128(0x5eed);
    let start = chain::truncate_to_micros(Utc::now() - TimeDelta::days(30));

    // Checkpoints come before the records in a bundle: a first pass finds
    // the heads they sign.
    let genesis = hex::encode(chain::GENESIS);
    let mut prev = genesis.clone();
    let mut checkpoints = Vec::new();
    let mut signing = std::time::Duration::ZERO;
    for seq in 1..=n {
        prev = record(tenant, start, seq, &prev).hash;
        if seq % EVERY == 0 || seq == n {
            let before = checkpoints
                .last()
                .map_or(genesis.clone(), |c: &Checkpoint| c.hash.clone());
            let started = Instant::now();
            checkpoints.push(sign(
                &key,
                tenant,
                checkpoints.len() as i64 + 1,
                seq,
                &prev,
                &before,
            ));
            signing += started.elapsed();
        }
    }
    println!(
        "checkpoint signing (message, SHA-256, Ed25519): {:.1} µs on average over {}",
        signing.as_secs_f64() * 1e6 / checkpoints.len() as f64,
        checkpoints.len()
    );

    let mut out = BufWriter::with_capacity(1 << 20, std::fs::File::create(&path).expect("create the file"));
    let header = Header {
        format: FORMAT.to_owned(),
        log: format!("tenant:{tenant}"),
        public_key: hex::encode(key.verifying_key().as_bytes()),
        exported_at: Utc::now(),
    };
    write_line(&mut out, &Line::Header(header));
    for c in checkpoints {
        write_line(&mut out, &Line::Checkpoint(c));
    }
    let mut prev = genesis;
    for seq in 1..=n {
        let r = record(tenant, start, seq, &prev);
        prev.clone_from(&r.hash);
        write_line(&mut out, &Line::Record(r));
    }
    out.flush().expect("write");
    println!("wrote {n} records to {path}");

    if let Ok(url) = std::env::var("DATABASE_URL") {
        time_db_signing(&url, &key).await;
    }
}
