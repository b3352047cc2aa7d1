//! Load for the approval gate, driven by `bench/approvals.sh`: four makers
//! file payouts and two approvers approve them in bulk, each a member
//! signed in through the forms with a two-factor code, spread over the
//! portal replicas given. After the filing period it waits for the queue
//! to drain, then prints executions per minute, approval-to-execution
//! p50/p95 (from the request timeline and the payout's finalize time) and
//! each request's payout as the sandbox holds it, to show each ran once.
//!
//! Environment: BENCH_PORTALS (comma-separated URLs), DATABASE_URL,
//! PAYDESK_MASTER_KEY, BENCH_TENANT, BENCH_SECONDS, SANDBOX_URL,
//! SANDBOX_CLIENT_ID, SANDBOX_CLIENT_SECRET.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use futures_util::StreamExt;
use paydesk::crypto::MasterKey;
use secrecy::SecretString;
use sqlx::PgPool;
use uuid::Uuid;

const MAKERS: usize = 4;
const APPROVERS: usize = 2;
const PASSWORD: &str = "bench-member-password-123";

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"))
}

/// Every `name="field" value="..."` in a page.
fn values_of(html: &str, field: &str) -> Vec<String> {
    let marker = format!("name=\"{field}\" value=\"");
    html.match_indices(&marker)
        .filter_map(|(at, _)| html[at + marker.len()..].split('"').next())
        .map(str::to_owned)
        .collect()
}

fn location(res: &reqwest::Response) -> String {
    res.headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

/// A member signed in through the forms: their browser and its CSRF token.
struct Member {
    http: reqwest::Client,
    portal: String,
    csrf: String,
}

/// Adds a member with `role` and two-factor on, straight in the database
/// (as the tests do); returns their email and TOTP key.
async fn add_member(pool: &PgPool, key: &MasterKey, tenant: Uuid, role: &str, email: &str) -> String {
    let secret = totp_rs::Secret::generate().to_base32();
    let hash = paydesk::auth::password::hash(SecretString::from(PASSWORD.to_owned())).await;
    let id = Uuid::new_v4();
    sqlx::query(
        "INSERT INTO users (id, email, display_name, password_hash, totp_secret_enc, totp_enabled_at) \
         VALUES ($1, $2, $2, $3, $4, now())",
    )
    .bind(id)
    .bind(email)
    .bind(&hash)
    .bind(key.seal(&SecretString::from(secret.clone())))
    .execute(pool)
    .await
    .expect("the member is added");
    sqlx::query(
        "INSERT INTO memberships (tenant_id, user_id, role_id) \
         SELECT $1, $2, id FROM roles WHERE tenant_id = $1 AND name = $3",
    )
    .bind(tenant)
    .bind(id)
    .bind(role)
    .execute(pool)
    .await
    .expect("the membership is added");
    secret
}

async fn sign_in(portal: &str, email: &str, secret: &str) -> Member {
    let http = reqwest::Client::builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let page = http
        .get(format!("{portal}/login"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let token = values_of(&page, "csrf_token").remove(0);
    let res = http
        .post(format!("{portal}/login"))
        .form(&[
            ("csrf_token", token.as_str()),
            ("email", email),
            ("password", PASSWORD),
        ])
        .send()
        .await
        .unwrap();
    let step = location(&res);
    assert!(step.starts_with("/login/two-factor"), "{email}: asked for {step}");
    let page = http
        .get(format!("{portal}{step}"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let token = values_of(&page, "csrf_token").remove(0);
    let secret = totp_rs::Secret::try_from_base32(secret).unwrap();
    let code = paydesk::auth::two_factor::totp(secret, email)
        .unwrap()
        .generate(Utc::now().timestamp() as u64)
        .to_string();
    let res = http
        .post(format!("{portal}/login/two-factor"))
        .form(&[
            ("csrf_token", token.as_str()),
            ("code", code.as_str()),
            ("next", ""),
        ])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status().as_u16(), 303, "{email} signs in");
    let page = http
        .get(format!("{portal}/approvals"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let csrf = values_of(&page, "csrf_token").remove(0);
    Member {
        http,
        portal: portal.to_owned(),
        csrf,
    }
}

/// Files payouts, each to its own account, until `stop`.
async fn maker(m: Member, n: usize, stop: Arc<AtomicBool>, filed: Arc<AtomicU64>, refused: Arc<AtomicU64>) {
    let mut i = 0u64;
    while !stop.load(Ordering::Relaxed) {
        i += 1;
        let account = format!("{}{:09}", n + 1, i);
        let res = m
            .http
            .post(format!("{}/payouts", m.portal))
            .form(&[
                ("csrf_token", m.csrf.as_str()),
                ("country", "NG"),
                ("from_asset", "USDT"),
                ("amount", "100"),
                ("bank_code", "058"),
                ("account_number", account.as_str()),
                ("account_name", "Ada Okafor"),
                ("payment_reason", "salary"),
            ])
            .send()
            .await;
        match res {
            Ok(r) if r.status().as_u16() == 303 => filed.fetch_add(1, Ordering::Relaxed),
            _ => refused.fetch_add(1, Ordering::Relaxed),
        };
    }
}

/// Approves its share of the inbox (the requests whose id's first hex
/// digit is `n` modulo `APPROVERS`: a share that does not shift as the
/// other approver empties the inbox, so no request is approved by both),
/// in bulk, until `stop` and no share is left.
async fn approver(m: Member, n: usize, stop: Arc<AtomicBool>, approved: Arc<AtomicU64>) {
    loop {
        let page = match m.http.get(format!("{}/approvals", m.portal)).send().await {
            Ok(r) => r.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        };
        let picks: Vec<String> = values_of(&page, "pick")
            .into_iter()
            .filter(|pick| u32::from_str_radix(&pick[..1], 16).is_ok_and(|d| d as usize % APPROVERS == n))
            .take(100)
            .collect();
        if picks.is_empty() {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        }
        let mut form = vec![("csrf_token", m.csrf.clone()), ("confirmed", "yes".to_owned())];
        form.extend(picks.iter().map(|p| ("pick", p.clone())));
        if m.http
            .post(format!("{}/approvals/bulk", m.portal))
            .form(&form)
            .send()
            .await
            .is_ok()
        {
            approved.fetch_add(picks.len() as u64, Ordering::Relaxed);
        }
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

#[tokio::main]
async fn main() {
    let portals: Vec<String> = env("BENCH_PORTALS").split(',').map(str::to_owned).collect();
    let pool = PgPool::connect(&env("DATABASE_URL")).await.expect("the database");
    let key = MasterKey::from_base64(&env("PAYDESK_MASTER_KEY")).expect("the master key");
    let seconds: u64 = env("BENCH_SECONDS").parse().unwrap();
    let tenant: Uuid = sqlx::query_scalar("SELECT id FROM tenants WHERE name = $1")
        .bind(env("BENCH_TENANT"))
        .fetch_one(&pool)
        .await
        .expect("the bench tenant");

    let run = Uuid::new_v4().simple().to_string()[..8].to_owned();
    let mut members = Vec::new();
    for (i, role) in std::iter::repeat_n("Operator", MAKERS)
        .chain(std::iter::repeat_n("Approver", APPROVERS))
        .enumerate()
    {
        let email = format!("{}-{i}-{run}@bench.example", role.to_lowercase());
        let secret = add_member(&pool, &key, tenant, role, &email).await;
        members.push(sign_in(&portals[i % portals.len()], &email, &secret).await);
    }
    let approvers = members.split_off(MAKERS);

    let stop = Arc::new(AtomicBool::new(false));
    let drained = Arc::new(AtomicBool::new(false));
    let (filed, refused, approved) = (
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
    );
    let started = Utc::now();
    let clock = Instant::now();
    let mut tasks = Vec::new();
    for (n, m) in members.into_iter().enumerate() {
        tasks.push(tokio::spawn(maker(
            m,
            n,
            stop.clone(),
            filed.clone(),
            refused.clone(),
        )));
    }
    let mut checkers = Vec::new();
    for (n, m) in approvers.into_iter().enumerate() {
        checkers.push(tokio::spawn(approver(m, n, drained.clone(), approved.clone())));
    }
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    stop.store(true, Ordering::Relaxed);
    let ended = Utc::now();
    for t in tasks {
        t.await.unwrap();
    }
    drained.store(true, Ordering::Relaxed);
    for t in checkers {
        t.await.unwrap();
    }
    println!(
        "filed {} (refused {}), approvals given {} in {:.1} s",
        filed.load(Ordering::Relaxed),
        refused.load(Ordering::Relaxed),
        approved.load(Ordering::Relaxed),
        clock.elapsed().as_secs_f64()
    );

    // Wait (up to two minutes) for every approved request to reach the rail.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let waiting: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM action_requests WHERE tenant_id = $1 AND status IN ('approved', 'executing') \
               AND progress->>'finalized_at' IS NULL",
        )
        .bind(tenant)
        .fetch_one(&pool)
        .await
        .unwrap();
        if waiting == 0 || Instant::now() > deadline {
            println!("still waiting for execution at the end: {waiting}");
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let rows: Vec<(DateTime<Utc>, Option<DateTime<Utc>>)> = sqlx::query_as(
        "SELECT a.at, (r.progress->>'finalized_at')::timestamptz FROM action_requests r \
           JOIN request_timeline a ON a.request_id = r.id AND a.what = 'approved' \
         WHERE r.tenant_id = $1 AND r.kind = 'payout'",
    )
    .bind(tenant)
    .fetch_all(&pool)
    .await
    .unwrap();
    let executed: Vec<(DateTime<Utc>, DateTime<Utc>)> =
        rows.iter().filter_map(|(a, f)| f.map(|f| (*a, f))).collect();
    let in_window = executed
        .iter()
        .filter(|(_, f)| *f >= started && *f <= ended)
        .count();
    let window_min = (ended - started).num_milliseconds() as f64 / 60_000.0;
    let mut waits: Vec<f64> = executed
        .iter()
        .map(|(a, f)| (*f - *a).num_microseconds().unwrap_or(i64::MAX) as f64 / 1000.0)
        .collect();
    waits.sort_by(f64::total_cmp);
    let statuses: Vec<(String, i64)> = sqlx::query_as(
        "SELECT status::text, count(*) FROM action_requests WHERE tenant_id = $1 GROUP BY 1 ORDER BY 1",
    )
    .bind(tenant)
    .fetch_all(&pool)
    .await
    .unwrap();
    println!("requests by status: {statuses:?}");
    println!(
        "executions: {} in all; {in_window} during the {:.0} s of filing = {:.0} executions/min",
        executed.len(),
        window_min * 60.0,
        in_window as f64 / window_min
    );
    println!(
        "approval to execution: p50 {:.1} ms, p95 {:.1} ms",
        percentile(&waits, 0.5),
        percentile(&waits, 0.95)
    );

    // Each executed request's payout, read back from the sandbox: on the
    // rail, under the request's reference, and no two requests sharing one.
    let sandbox = paydesk_api::Client::new(
        env("SANDBOX_URL"),
        paydesk_api::Credentials::new(env("SANDBOX_CLIENT_ID"), env("SANDBOX_CLIENT_SECRET")),
    );
    let paid: Vec<(String, String)> = sqlx::query_as(
        "SELECT progress->>'payout_id', upstream_reference FROM action_requests \
         WHERE tenant_id = $1 AND kind = 'payout' AND progress->>'finalized_at' IS NOT NULL",
    )
    .bind(tenant)
    .fetch_all(&pool)
    .await
    .unwrap();
    let checks = futures_util::stream::iter(paid.iter().map(|(id, reference)| {
        let sandbox = &sandbox;
        async move {
            let payout = sandbox.payout(id).await.expect("the sandbox has the payout");
            payout.reference == *reference
                && !matches!(payout.status.as_str(), "QUOTE" | "INITIATED" | "EXPIRED")
        }
    }))
    .buffer_unordered(16)
    .collect::<Vec<bool>>()
    .await;
    let on_rail = checks.iter().filter(|ok| **ok).count();
    let distinct: std::collections::HashSet<&String> = paid.iter().map(|(id, _)| id).collect();
    let all = sandbox
        .payouts(None, Some(1))
        .await
        .expect("the sandbox lists payouts")
        .total;
    let exactly_once = on_rail == executed.len() && distinct.len() == executed.len();
    println!(
        "sandbox: {all} payout records (an indicative quote at filing and the payout per request); \
         {on_rail} of {} executed requests have their own payout on the rail: {}",
        executed.len(),
        if exactly_once {
            "each executed exactly once"
        } else {
            "MISMATCH"
        }
    );
    if !exactly_once {
        std::process::exit(1);
    }
}
