//! Appending: staging a record in the change's transaction, and linking
//! what was staged into its log's chain under the log's advisory lock.

use sqlx::{PgPool, Postgres, Transaction};

use super::*;
use crate::audit::chain::{self, Hashed, GENESIS};
use crate::audit::details::Details;
use crate::audit::target::{self};
use crate::audit::NewRecord;

/// The class of the advisory locks that serialize appends to a log across
/// every replica (the key within it names the log).
const CHAIN_LOCK_CLASS: i32 = 0x7061_7964;

/// Appends records in order, in their own transaction.
pub async fn append(pool: &PgPool, records: &[NewRecord]) -> Result<(), sqlx::Error> {
    let mut tx = pool.begin().await?;
    append_in(&mut tx, records).await?;
    tx.commit().await
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
