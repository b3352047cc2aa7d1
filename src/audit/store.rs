//! The audit log's SQL: append, link (serialized per log by an advisory
//! lock so each chain has one order), search with keyset pagination, and
//! verification.
//!
//! Appending is two steps. A record is staged (`audit_staged`) by the
//! transaction of the change it describes, so it commits or rolls back
//! with it, and that transaction takes no lock and waits for no other
//! append. After commit it is linked into its log's chain (`link`) with
//! whatever else was staged for that log: one locked transaction and one
//! WAL flush per batch. A log that took one flush per record was bounded
//! by the disk (about 280 flushes a second here), and a payout appends
//! four. Each process's linker (`writer::Linker`) links a log as soon as a
//! staging commit announces it, and every reader of a log (the page, the
//! export, verify, checkpoints, bundles) links it first, so nobody reads
//! a log without the records committed before they looked.
//!
//! A record is staged by the database function `stage_audit`: through
//! `append_in`, or, for the gate's busiest changes (a filing, a move, a
//! claim's start), inside the very statement that makes the change, so
//! that change needs no transaction of its own around two statements.

use chrono::{DateTime, Utc};
use futures_util::stream::BoxStream;
use futures_util::TryStreamExt;
use serde::Serialize;
use sqlx::{PgPool, Postgres, Transaction};
use tokio::sync::mpsc;
use uuid::Uuid;

use super::chain::{self, Hashed, GENESIS};
use super::checkpoint::Checkpoint;
use super::details::Details;
use super::target::{self, TargetMatch};
use super::{Event, NewRecord};

/// The class of the advisory locks that serialize appends to a log across
/// every replica (the key within it names the log).
const CHAIN_LOCK_CLASS: i32 = 0x7061_7964;

/// Appends records in order, in their own transaction.
pub async fn append(pool: &PgPool, records: &[NewRecord]) -> Result<(), sqlx::Error> {
    let mut tx = pool.begin().await?;
    append_in(&mut tx, records).await?;
    tx.commit().await
}

/// Which log a record belongs to: a tenant's, or the platform's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Log {
    Tenant(Uuid),
    Platform,
}

impl Log {
    pub fn of(tenant_id: Option<Uuid>) -> Self {
        tenant_id.map_or(Log::Platform, Log::Tenant)
    }

    pub fn tenant_id(self) -> Option<Uuid> {
        match self {
            Log::Tenant(t) => Some(t),
            Log::Platform => None,
        }
    }
}

impl Log {
    /// The log's key within the chain locks: 32 bits of the tenant's id (0
    /// for the platform). Two logs sharing a key only wait for each other.
    fn lock_key(self) -> i32 {
        match self {
            Log::Tenant(t) => t.as_u128() as i32,
            Log::Platform => 0,
        }
    }
}

impl std::fmt::Display for Log {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Log::Tenant(t) => write!(f, "tenant:{t}"),
            Log::Platform => f.write_str("platform"),
        }
    }
}

/// Takes the logs' chain locks for the rest of the transaction, in one
/// order (by key) so two appends to the same logs cannot deadlock. Each
/// log is its own chain: appends to different tenants' logs do not wait
/// for each other.
pub async fn lock_logs(tx: &mut Transaction<'_, Postgres>, logs: &[Log]) -> Result<(), sqlx::Error> {
    let mut keys: Vec<i32> = logs.iter().map(|l| l.lock_key()).collect();
    keys.sort_unstable();
    keys.dedup();
    // unnest gives the keys in the array's (sorted) order.
    sqlx::query!(
        "SELECT pg_advisory_xact_lock($1, key) FROM unnest($2::int4[]) AS key",
        CHAIN_LOCK_CLASS,
        &keys,
    )
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The log's length and its last record's hash, when it has records.
pub async fn head(
    tx: &mut Transaction<'_, Postgres>,
    log: Log,
) -> Result<Option<(i64, Vec<u8>)>, sqlx::Error> {
    let row = sqlx::query!(
        r#"SELECT seq AS "seq!", hash FROM audit_log
           WHERE COALESCE(tenant_id, '00000000-0000-0000-0000-000000000000') =
                 COALESCE($1::uuid, '00000000-0000-0000-0000-000000000000') AND seq IS NOT NULL
           ORDER BY seq DESC LIMIT 1"#,
        log.tenant_id(),
    )
    .fetch_optional(&mut **tx)
    .await?;
    Ok(row.map(|r| (r.seq, r.hash)))
}

/// Appends records inside the caller's transaction, so they commit or roll
/// back with the change they describe: they are staged, in order, and
/// linked into their logs' chains after the commit (see the module's
/// docs). Each record goes to the end of its own log (its tenant's, or
/// the platform's).
pub async fn append_in(tx: &mut Transaction<'_, Postgres>, records: &[NewRecord]) -> Result<(), sqlx::Error> {
    if records.is_empty() {
        return Ok(());
    }
    sqlx::query_scalar!("SELECT stage_audit($1)", staged_rows(records))
        .fetch_one(&mut **tx)
        .await?;
    Ok(())
}

/// Records as the database function `stage_audit` takes them: an array of
/// `audit_staged` rows, in order. A statement that changes something
/// stages the records describing it with `stage_audit` in a CTE of its
/// own, so both commit together without a transaction around them.
pub fn staged_rows(records: &[NewRecord]) -> serde_json::Value {
    records.iter().map(staged_row).collect()
}

/// One record as an `audit_staged` row.
pub fn staged_row(r: &NewRecord) -> serde_json::Value {
    serde_json::json!({
        "occurred_at": r.occurred_at,
        "tenant_id": r.tenant_id,
        "actor_id": r.actor.user_id,
        "actor_email": r.actor.email,
        "action": r.action,
        "target": r.target,
        "outcome": r.outcome,
        "ip": r.actor.ip,
        "user_agent": r.actor.user_agent,
        "details": r.details,
    })
}

/// Staged records linked per transaction, at most: a bound on the
/// transaction a backlog (after a restart, say) makes.
const LINK_BATCH: i64 = 5_000;

/// Links every record staged for `log` and committed into the log's
/// chain, in the order they were staged; how many it linked. Safe on any
/// number of replicas at once: the log's lock serializes them, and a
/// record is taken out of the stage in the transaction that chains it.
pub async fn link(pool: &PgPool, log: Log) -> Result<u64, sqlx::Error> {
    let mut linked = 0;
    loop {
        // Without the lock first: a log with nothing staged (most reads)
        // costs one index probe.
        let waiting = sqlx::query_scalar!(
            r#"SELECT EXISTS (SELECT 1 FROM audit_staged
               WHERE COALESCE(tenant_id, '00000000-0000-0000-0000-000000000000') =
                     COALESCE($1::uuid, '00000000-0000-0000-0000-000000000000')) AS "waiting!""#,
            log.tenant_id(),
        )
        .fetch_one(pool)
        .await?;
        if !waiting {
            return Ok(linked);
        }
        let mut tx = pool.begin().await?;
        lock_logs(&mut tx, &[log]).await?;
        // Under the log's lock no other linker takes these rows.
        let staged = sqlx::query!(
            r#"SELECT id, occurred_at, tenant_id, actor_id, actor_email, action, target, outcome, ip, user_agent,
                      details AS "details: Details"
               FROM audit_staged
               WHERE COALESCE(tenant_id, '00000000-0000-0000-0000-000000000000') =
                     COALESCE($1::uuid, '00000000-0000-0000-0000-000000000000')
               ORDER BY COALESCE(tenant_id, '00000000-0000-0000-0000-000000000000'), id
               LIMIT $2"#,
            log.tenant_id(),
            LINK_BATCH,
        )
        .fetch_all(&mut *tx)
        .await?;
        let count = staged.len() as u64;
        let (mut seq, mut prev) = head(&mut tx, log).await?.unwrap_or_else(|| (0, GENESIS.to_vec()));
        let mut links = Links::default();
        for r in &staged {
            let hash = chain::hash(
                &prev,
                &Hashed {
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
            );
            seq += 1;
            let (kind, _) = target::split(&r.target);
            links.ids.push(r.id);
            links.seqs.push(seq);
            links
                .prev_hashes
                .push(std::mem::replace(&mut prev, hash.to_vec()));
            links.hashes.push(hash.to_vec());
            links.target_kinds.push(kind.map(str::to_owned));
        }
        move_into_log(&mut tx, &links).await?;
        tx.commit().await?;
        linked += count;
        if count < LINK_BATCH as u64 {
            return Ok(linked);
        }
    }
}

/// Links every log with staged records (a linker catching up, a test
/// reading the table itself); how many records it linked.
pub async fn link_all(pool: &PgPool) -> Result<u64, sqlx::Error> {
    let logs = sqlx::query_scalar!("SELECT DISTINCT tenant_id FROM audit_staged")
        .fetch_all(pool)
        .await?;
    let mut linked = 0;
    for tenant_id in logs {
        linked += link(pool, Log::of(tenant_id)).await?;
    }
    Ok(linked)
}

/// Staged records with their places in the chain, in chain order.
#[derive(Default)]
struct Links {
    ids: Vec<i64>,
    seqs: Vec<i64>,
    prev_hashes: Vec<Vec<u8>>,
    hashes: Vec<Vec<u8>>,
    target_kinds: Vec<Option<String>>,
}

/// Moves staged records into the log with their links, inside Postgres:
/// only positions and hashes travel, not the records a second time. The
/// caller holds the log's lock.
async fn move_into_log(tx: &mut Transaction<'_, Postgres>, links: &Links) -> Result<(), sqlx::Error> {
    if links.ids.is_empty() {
        return Ok(());
    }
    // WITH ORDINALITY keeps the order the chain was computed in.
    sqlx::query!(
        "INSERT INTO audit_log (occurred_at, tenant_id, actor_id, actor_email, action, target, outcome, ip, \
         user_agent, details, prev_hash, hash, seq, target_kind) \
         SELECT s.occurred_at, s.tenant_id, s.actor_id, s.actor_email, s.action, s.target, s.outcome, s.ip, \
                s.user_agent, s.details, l.prev_hash, l.hash, l.seq, l.target_kind \
         FROM UNNEST($1::bigint[], $2::bytea[], $3::bytea[], $4::bigint[], $5::text[]) WITH ORDINALITY \
              AS l(id, prev_hash, hash, seq, target_kind, n) \
         JOIN audit_staged s ON s.id = l.id \
         ORDER BY l.n",
        &links.ids,
        &links.prev_hashes,
        &links.hashes,
        &links.seqs,
        // Nullable elements: the macro's type check knows only Vec<String>.
        &links.target_kinds as _,
    )
    .execute(&mut **tx)
    .await?;
    sqlx::query!("DELETE FROM audit_staged WHERE id = ANY($1)", &links.ids)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// One stored record.
#[derive(Debug, Clone, Serialize)]
pub struct AuditRow {
    pub id: i64,
    pub occurred_at: DateTime<Utc>,
    pub tenant_id: Option<Uuid>,
    pub actor_id: Option<Uuid>,
    pub actor_email: String,
    pub action: String,
    pub target: String,
    pub outcome: String,
    pub ip: String,
    pub user_agent: String,
    pub details: Details,
    /// Its position in its log; none for records from before logs were
    /// chained apart.
    pub seq: Option<i64>,
    #[serde(skip)]
    pub prev_hash: Vec<u8>,
    #[serde(skip)]
    pub hash: Vec<u8>,
}

/// Search filters; every one optional.
#[derive(Debug, Clone, Default)]
pub struct AuditFilter {
    pub actor: Option<String>,
    pub action: Option<String>,
    pub target: Option<String>,
    pub outcome: Option<String>,
    pub from: Option<DateTime<Utc>>,
    pub to: Option<DateTime<Utc>>,
    /// Keyset: records older than this id.
    pub before_id: Option<i64>,
}

/// What a search found, and how it read the target filter.
#[derive(Debug, Default)]
pub struct Found {
    pub records: Vec<AuditRow>,
    pub target: Option<TargetMatch>,
}

/// A log's records matching `filter`, newest first (by when they
/// happened, then id): a tenant's auditors see what happened in that tenant
/// and nothing else (not its members' doings elsewhere); a filter left out
/// (NULL) matches all.
///
/// One statement serves every filter set, planned for its values each time
/// (`plan_cache_mode`): a cached generic plan cannot drop the filters left
/// out, and would walk the whole log. Each filter has an index per log
/// ending in the page's order (see the migrations 20261127000100 and
/// 20261128000100), so the planner either reads one in order and stops
/// after a page, or gathers the few matching records of a narrow filter
/// and sorts them.
pub async fn search(pool: &PgPool, log: Log, filter: &AuditFilter, limit: i64) -> Result<Found, sqlx::Error> {
    link(pool, log).await?;
    let mut tx = pool.begin().await?;
    plan_each_time(&mut tx).await?;
    let params = resolve(&mut tx, log, filter, Some(limit)).await?;
    let records = if params.matches_nothing() {
        Vec::new()
    } else {
        matching_rows(&mut tx, &params).try_collect().await?
    };
    tx.commit().await?;
    Ok(Found {
        records,
        target: params.target,
    })
}

/// Every record matching `filter`, newest first, sent to `out` in batches
/// of `batch` as one streamed statement is read (the caller holds a
/// bounded channel, so memory stays flat however many records match).
/// Stops when `out` is closed.
pub async fn send_matching(
    pool: &PgPool,
    log: Log,
    filter: &AuditFilter,
    batch: usize,
    out: &mpsc::Sender<Result<Vec<AuditRow>, sqlx::Error>>,
) -> Result<(), sqlx::Error> {
    link(pool, log).await?;
    let mut tx = pool.begin().await?;
    plan_each_time(&mut tx).await?;
    let params = resolve(&mut tx, log, filter, None).await?;
    if params.matches_nothing() {
        return Ok(());
    }
    let mut rows = matching_rows(&mut tx, &params).try_chunks(batch);
    while let Some(rows) = rows.try_next().await.map_err(|e| e.1)? {
        if out.send(Ok(rows)).await.is_err() {
            break;
        }
    }
    Ok(())
}

async fn plan_each_time(tx: &mut Transaction<'_, Postgres>) -> Result<(), sqlx::Error> {
    sqlx::query!("SET LOCAL plan_cache_mode = force_custom_plan")
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// A filter as the search statement's parameters.
struct Params {
    tenant_id: Option<Uuid>,
    /// The log's actor emails the actor filter matches.
    actors: Option<Vec<String>>,
    action_prefix: Option<String>,
    action: Option<&'static str>,
    target: Option<TargetMatch>,
    outcome: Option<String>,
    from: Option<DateTime<Utc>>,
    to: Option<DateTime<Utc>>,
    before_id: Option<i64>,
    limit: Option<i64>,
}

impl Params {
    /// An actor filter no actor of the log matches: answered at once.
    fn matches_nothing(&self) -> bool {
        self.actors.as_ref().is_some_and(Vec::is_empty)
    }
}

async fn resolve(
    tx: &mut Transaction<'_, Postgres>,
    log: Log,
    filter: &AuditFilter,
    limit: Option<i64>,
) -> Result<Params, sqlx::Error> {
    let actors = match filter.actor.as_deref() {
        Some(actor) => Some(actor_emails_like(tx, log, &format!("%{}%", escape_like(actor))).await?),
        None => None,
    };
    let action = filter.action.as_deref().map(|a| a.to_lowercase());
    let exact_action = action.as_deref().and_then(only_event_named);
    let target = match filter.target.as_deref().map(TargetMatch::parse) {
        Some(TargetMatch::Kind(kind)) if !has_target_kind(tx, log, &kind).await? => {
            let typed = filter.target.as_deref().unwrap_or_default().trim();
            Some(exact_or_prefix(tx, log, typed).await?)
        }
        Some(TargetMatch::Exact(text)) => Some(exact_or_prefix(tx, log, &text).await?),
        other => other,
    };
    Ok(Params {
        tenant_id: log.tenant_id(),
        actors,
        action_prefix: action
            .filter(|_| exact_action.is_none())
            .map(|a| format!("{}%", escape_like(&a))),
        action: exact_action,
        target,
        outcome: filter.outcome.clone(),
        from: filter.from,
        to: filter.to,
        before_id: filter.before_id,
        limit,
    })
}

/// The search statement, streamed.
fn matching_rows<'a>(
    tx: &'a mut Transaction<'_, Postgres>,
    p: &'a Params,
) -> BoxStream<'a, Result<AuditRow, sqlx::Error>> {
    // One actor is matched by equality, so its index is read in the
    // page's order and stops after a page (with ANY, Postgres reads the
    // actor's whole range and sorts it: 14,000 records for a month at 10M).
    let (actor, actors) = match p.actors.as_deref() {
        Some([one]) => (Some(one.as_str()), None),
        several => (None, several),
    };
    let (kind, exact, prefix) = match &p.target {
        Some(TargetMatch::Kind(kind)) => (Some(kind.as_str()), None, None),
        Some(TargetMatch::Exact(text)) => (None, Some(text.as_str()), None),
        Some(TargetMatch::Prefix(text)) => (None, None, Some(format!("{}%", escape_like(text)))),
        None => (None, None, None),
    };
    sqlx::query_as!(
        AuditRow,
        r#"SELECT id, occurred_at, tenant_id, actor_id, actor_email, action, target, outcome, ip, user_agent,
                  details AS "details: Details", seq, prev_hash, hash
           FROM audit_log
           WHERE COALESCE(tenant_id, '00000000-0000-0000-0000-000000000000') =
                 COALESCE($1::uuid, '00000000-0000-0000-0000-000000000000')
             AND ($2::text[] IS NULL OR actor_email = ANY($2))
             AND ($13::text IS NULL OR actor_email = $13)
             AND ($3::text IS NULL OR action LIKE $3)
             AND ($4::text IS NULL OR action = $4)
             AND ($5::text IS NULL OR target_kind = $5)
             AND ($6::text IS NULL OR lower(target) = lower($6) OR lower(audit_target_ref(target)) = lower($6))
             AND ($7::text IS NULL OR lower(target) LIKE lower($7) OR lower(audit_target_ref(target)) LIKE lower($7))
             AND ($8::text IS NULL OR outcome = $8)
             AND ($9::timestamptz IS NULL OR occurred_at >= $9)
             AND ($10::timestamptz IS NULL OR occurred_at < $10)
             AND ($11::bigint IS NULL OR
                  (occurred_at, id) < (SELECT b.occurred_at, b.id FROM audit_log b WHERE b.id = $11))
           ORDER BY occurred_at DESC, id DESC LIMIT $12"#,
        p.tenant_id,
        actors,
        p.action_prefix.as_deref(),
        p.action,
        kind,
        exact,
        prefix,
        p.outcome.as_deref(),
        p.from,
        p.to,
        p.before_id,
        p.limit,
        actor,
    )
    .fetch(&mut **tx)
}

/// True when some record of the log has a target of this kind (one index
/// probe), so a bare word in the target filter is read as a kind.
async fn has_target_kind(
    tx: &mut Transaction<'_, Postgres>,
    log: Log,
    kind: &str,
) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT EXISTS (
             SELECT 1 FROM audit_log
             WHERE COALESCE(tenant_id, '00000000-0000-0000-0000-000000000000') =
                   COALESCE($1::uuid, '00000000-0000-0000-0000-000000000000')
               AND target_kind = $2) AS "exists!""#,
        log.tenant_id(),
        kind,
    )
    .fetch_one(&mut **tx)
    .await
}

/// `Exact` when some record of the log has this target or id (ignoring
/// case; one probe of each index), otherwise `Prefix`: a pasted id finds
/// its own records, and its beginning every id that starts so.
async fn exact_or_prefix(
    tx: &mut Transaction<'_, Postgres>,
    log: Log,
    text: &str,
) -> Result<TargetMatch, sqlx::Error> {
    let exists = sqlx::query_scalar!(
        r#"SELECT EXISTS (
             SELECT 1 FROM audit_log
             WHERE COALESCE(tenant_id, '00000000-0000-0000-0000-000000000000') =
                   COALESCE($1::uuid, '00000000-0000-0000-0000-000000000000')
               AND lower(target) = lower($2))
           OR EXISTS (
             SELECT 1 FROM audit_log
             WHERE COALESCE(tenant_id, '00000000-0000-0000-0000-000000000000') =
                   COALESCE($1::uuid, '00000000-0000-0000-0000-000000000000')
               AND lower(audit_target_ref(target)) = lower($2)) AS "exists!""#,
        log.tenant_id(),
        text,
    )
    .fetch_one(&mut **tx)
    .await?;
    Ok(if exists {
        TargetMatch::Exact(text.to_owned())
    } else {
        TargetMatch::Prefix(text.to_owned())
    })
}

/// The one event an action filter names, when no other event's name
/// starts with it: matched by equality, so its index is read in order.
/// Actions are the events' lower-case names.
fn only_event_named(prefix: &str) -> Option<&'static str> {
    let mut named = Event::ALL
        .iter()
        .map(|e| e.name())
        .filter(|n| n.starts_with(prefix));
    match (named.next(), named.next()) {
        (Some(name), None) if name == prefix => Some(name),
        _ => None,
    }
}

/// The log's distinct actor emails matching `pattern`: a log has few
/// actors, so they are found by skipping through the actor index (one
/// probe each) and the search then matches them exactly; an actor no
/// record has answers at once instead of walking the whole log.
async fn actor_emails_like(
    tx: &mut Transaction<'_, Postgres>,
    log: Log,
    pattern: &str,
) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"WITH RECURSIVE actors(email) AS (
             (SELECT actor_email FROM audit_log
              WHERE COALESCE(tenant_id, '00000000-0000-0000-0000-000000000000') =
                    COALESCE($1::uuid, '00000000-0000-0000-0000-000000000000')
              ORDER BY COALESCE(tenant_id, '00000000-0000-0000-0000-000000000000'), actor_email LIMIT 1)
             UNION ALL
             SELECT (SELECT a.actor_email FROM audit_log a
                     WHERE COALESCE(a.tenant_id, '00000000-0000-0000-0000-000000000000') =
                           COALESCE($1::uuid, '00000000-0000-0000-0000-000000000000')
                       AND a.actor_email > actors.email
                     ORDER BY COALESCE(a.tenant_id, '00000000-0000-0000-0000-000000000000'), a.actor_email
                     LIMIT 1)
             FROM actors WHERE actors.email IS NOT NULL)
           SELECT email AS "email!" FROM actors WHERE email ILIKE $2"#,
        log.tenant_id(),
        pattern,
    )
    .fetch_all(&mut **tx)
    .await
}

pub async fn find(pool: &PgPool, log: Log, id: i64) -> Result<Option<AuditRow>, sqlx::Error> {
    sqlx::query_as!(
        AuditRow,
        r#"SELECT id, occurred_at, tenant_id, actor_id, actor_email, action, target, outcome, ip, user_agent,
                  details AS "details: Details", seq, prev_hash, hash
           FROM audit_log
           WHERE id = $2 AND (tenant_id = $1 OR ($1::uuid IS NULL AND tenant_id IS NULL))"#,
        log.tenant_id(),
        id,
    )
    .fetch_optional(pool)
    .await
}

/// True when the record is one the log's readers may see.
pub async fn in_scope(pool: &PgPool, log: Log, id: i64) -> Result<bool, sqlx::Error> {
    Ok(find(pool, log, id).await?.is_some())
}

fn escape_like(s: &str) -> String {
    s.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_")
}

/// The result of walking the chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChainReport {
    /// Every record checked holds; the log's last record (position and
    /// hash), when it has one.
    Intact {
        records: u64,
        head: Option<(i64, Vec<u8>)>,
    },
    /// The first record whose link does not hold.
    Broken {
        id: i64,
        reason: &'static str,
        checked: u64,
    },
}

/// Walks the records from before logs were chained apart (one chain across
/// every log), then `log`'s own chain from its start.
pub async fn verify(pool: &PgPool, log: Log) -> Result<ChainReport, sqlx::Error> {
    link(pool, log).await?;
    super::verify::walk(pool, log, None, None).await
}

/// A log's records after position `after` up to `through`, in log order.
pub async fn in_log(
    pool: &PgPool,
    log: Log,
    after: i64,
    through: i64,
    limit: i64,
) -> Result<Vec<AuditRow>, sqlx::Error> {
    sqlx::query_as!(
        AuditRow,
        r#"SELECT id, occurred_at, tenant_id, actor_id, actor_email, action, target, outcome, ip, user_agent,
                  details AS "details: Details", seq, prev_hash, hash
           FROM audit_log
           WHERE COALESCE(tenant_id, '00000000-0000-0000-0000-000000000000') =
                 COALESCE($1::uuid, '00000000-0000-0000-0000-000000000000')
             AND seq > $2 AND seq <= $3
           ORDER BY COALESCE(tenant_id, '00000000-0000-0000-0000-000000000000'), seq LIMIT $4"#,
        log.tenant_id(),
        after,
        through,
        limit,
    )
    .fetch_all(pool)
    .await
}

/// The position of a log's last record.
pub async fn last_seq(pool: &PgPool, log: Log) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT max(seq) FROM audit_log
           WHERE COALESCE(tenant_id, '00000000-0000-0000-0000-000000000000') =
                 COALESCE($1::uuid, '00000000-0000-0000-0000-000000000000')"#,
        log.tenant_id(),
    )
    .fetch_one(pool)
    .await
}

/// The stored hash of the record before position `seq` in a log (the
/// nearest one, should a record be missing).
pub async fn hash_before(pool: &PgPool, log: Log, seq: i64) -> Result<Option<Vec<u8>>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT hash FROM audit_log
           WHERE COALESCE(tenant_id, '00000000-0000-0000-0000-000000000000') =
                 COALESCE($1::uuid, '00000000-0000-0000-0000-000000000000')
             AND seq < $2
           ORDER BY COALESCE(tenant_id, '00000000-0000-0000-0000-000000000000'), seq DESC
           LIMIT 1"#,
        log.tenant_id(),
        seq,
    )
    .fetch_optional(pool)
    .await
}

/// The positions of a log's first and last record in a time range.
pub async fn seq_range(
    pool: &PgPool,
    log: Log,
    from: Option<DateTime<Utc>>,
    to: Option<DateTime<Utc>>,
) -> Result<Option<(i64, i64)>, sqlx::Error> {
    let row = sqlx::query!(
        r#"SELECT min(seq) AS first, max(seq) AS last FROM audit_log
           WHERE COALESCE(tenant_id, '00000000-0000-0000-0000-000000000000') =
                 COALESCE($1::uuid, '00000000-0000-0000-0000-000000000000')
             AND seq IS NOT NULL
             AND ($2::timestamptz IS NULL OR occurred_at >= $2)
             AND ($3::timestamptz IS NULL OR occurred_at < $3)"#,
        log.tenant_id(),
        from,
        to,
    )
    .fetch_one(pool)
    .await?;
    Ok(row.first.zip(row.last))
}

/// Every log that may have records: the platform's and each tenant's.
pub async fn logs(pool: &PgPool) -> Result<Vec<Log>, sqlx::Error> {
    let tenants = sqlx::query_scalar!("SELECT id FROM tenants ORDER BY created_at")
        .fetch_all(pool)
        .await?;
    Ok(std::iter::once(Log::Platform)
        .chain(tenants.into_iter().map(Log::Tenant))
        .collect())
}

// --- Checkpoints ------------------------------------------------------------

pub async fn latest_checkpoint(
    tx: &mut Transaction<'_, Postgres>,
    log: Log,
) -> Result<Option<Checkpoint>, sqlx::Error> {
    Ok(checkpoints_where(&mut **tx, log, 0, 1).await?.pop())
}

/// A log's checkpoints that signed a length of at least `min_length`, the
/// newest `limit` of them, oldest first.
async fn checkpoints_where(
    db: impl sqlx::PgExecutor<'_>,
    log: Log,
    min_length: i64,
    limit: i64,
) -> Result<Vec<Checkpoint>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT id, tenant_id, length, head_hash, signed_at, prev_hash, hash, signature
           FROM audit_checkpoints
           WHERE (tenant_id = $1 OR ($1::uuid IS NULL AND tenant_id IS NULL)) AND length >= $2
           ORDER BY id DESC LIMIT $3"#,
        log.tenant_id(),
        min_length,
        limit,
    )
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .rev()
        .map(|r| Checkpoint {
            id: r.id,
            tenant_id: r.tenant_id,
            length: r.length,
            head_hash: hex::encode(r.head_hash),
            signed_at: r.signed_at,
            prev_hash: hex::encode(r.prev_hash),
            hash: hex::encode(r.hash),
            signature: hex::encode(r.signature),
        })
        .collect())
}

/// A log's checkpoints, oldest first: the newest `limit`, or (with
/// `covering`) those that signed a position in that range.
pub async fn checkpoints(
    pool: &PgPool,
    log: Log,
    covering: Option<(i64, i64)>,
    limit: i64,
) -> Result<Vec<Checkpoint>, sqlx::Error> {
    let (first, last) = covering.unwrap_or((0, i64::MAX));
    let mut found = checkpoints_where(pool, log, first, limit).await?;
    found.retain(|c| c.length <= last);
    Ok(found)
}

pub async fn insert_checkpoint(
    tx: &mut Transaction<'_, Postgres>,
    c: &Checkpoint,
    public_key: &[u8],
) -> Result<i64, sqlx::Error> {
    let decode = |h: &str| hex::decode(h).unwrap_or_default();
    sqlx::query_scalar!(
        "INSERT INTO audit_checkpoints (tenant_id, length, head_hash, signed_at, prev_hash, hash, signature, \
         public_key) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
        c.tenant_id,
        c.length,
        decode(&c.head_hash),
        c.signed_at,
        decode(&c.prev_hash),
        decode(&c.hash),
        decode(&c.signature),
        public_key,
    )
    .fetch_one(&mut **tx)
    .await
}
