//! The audit log's SQL: append (serialized by an advisory lock so the chain
//! has one order), search with keyset pagination, and verification.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::{PgPool, Postgres, Transaction};
use uuid::Uuid;

use super::chain::{self, Hashed, GENESIS};
use super::NewRecord;

/// Serializes appends across every replica.
const CHAIN_LOCK: i64 = 0x7061_7964_6573_6b31;

/// Appends records in order, in their own transaction.
pub async fn append(pool: &PgPool, records: &[NewRecord]) -> Result<(), sqlx::Error> {
    let mut tx = pool.begin().await?;
    append_in(&mut tx, records).await?;
    tx.commit().await
}

/// Appends records inside the caller's transaction, so they commit or roll
/// back with the change they describe.
pub async fn append_in(tx: &mut Transaction<'_, Postgres>, records: &[NewRecord]) -> Result<(), sqlx::Error> {
    if records.is_empty() {
        return Ok(());
    }
    sqlx::query!("SELECT pg_advisory_xact_lock($1)", CHAIN_LOCK)
        .execute(&mut **tx)
        .await?;
    let last: Option<Vec<u8>> = sqlx::query_scalar!("SELECT hash FROM audit_log ORDER BY id DESC LIMIT 1")
        .fetch_optional(&mut **tx)
        .await?;
    let mut prev = last.unwrap_or_else(|| GENESIS.to_vec());
    let mut prev_hashes = Vec::with_capacity(records.len());
    let mut hashes = Vec::with_capacity(records.len());
    for r in records {
        let hash = chain::hash(
            &prev,
            &Hashed {
                occurred_at: r.occurred_at,
                tenant_id: r.tenant_id,
                actor_id: r.actor.user_id,
                actor_email: &r.actor.email,
                action: &r.action,
                target: &r.target,
                outcome: &r.outcome,
                ip: &r.actor.ip,
                user_agent: &r.actor.user_agent,
                details: &r.details,
            },
        );
        prev_hashes.push(prev);
        hashes.push(hash.to_vec());
        prev = hash.to_vec();
    }
    // One statement for the whole batch; WITH ORDINALITY keeps the order
    // the chain was computed in.
    sqlx::query!(
        "INSERT INTO audit_log (occurred_at, tenant_id, actor_id, actor_email, action, target, outcome, ip, \
         user_agent, details, prev_hash, hash) \
         SELECT occurred_at, tenant_id, actor_id, actor_email, action, target, outcome, ip, user_agent, details, \
                prev_hash, hash \
         FROM UNNEST($1::timestamptz[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], \
                     $8::text[], $9::text[], $10::jsonb[], $11::bytea[], $12::bytea[]) WITH ORDINALITY \
              AS r(occurred_at, tenant_id, actor_id, actor_email, action, target, outcome, ip, user_agent, details, \
                   prev_hash, hash, n) \
         ORDER BY n",
        &records.iter().map(|r| r.occurred_at).collect::<Vec<_>>(),
        // Nullable elements: the macro's type check knows only Vec<Uuid>.
        &records.iter().map(|r| r.tenant_id).collect::<Vec<_>>() as _,
        &records.iter().map(|r| r.actor.user_id).collect::<Vec<_>>() as _,
        &records.iter().map(|r| r.actor.email.clone()).collect::<Vec<_>>(),
        &records.iter().map(|r| r.action.clone()).collect::<Vec<_>>(),
        &records.iter().map(|r| r.target.clone()).collect::<Vec<_>>(),
        &records.iter().map(|r| r.outcome.clone()).collect::<Vec<_>>(),
        &records.iter().map(|r| r.actor.ip.clone()).collect::<Vec<_>>(),
        &records.iter().map(|r| r.actor.user_agent.clone()).collect::<Vec<_>>(),
        &records.iter().map(|r| r.details.clone()).collect::<Vec<_>>(),
        &prev_hashes,
        &hashes,
    )
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
    pub details: serde_json::Value,
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

/// A tenant's records matching `filter`, newest first. What a tenant's
/// auditors see: the tenant's records, and the account records (sign-ins,
/// password changes) of its members; a filter left out (NULL) matches all.
pub async fn search(
    pool: &PgPool,
    tenant_id: Uuid,
    filter: &AuditFilter,
    limit: i64,
) -> Result<Vec<AuditRow>, sqlx::Error> {
    sqlx::query_as!(
        AuditRow,
        r#"SELECT id, occurred_at, tenant_id, actor_id, actor_email, action, target, outcome, ip, user_agent,
                  details, prev_hash, hash
           FROM audit_log
           WHERE (tenant_id = $1
                  OR (tenant_id IS NULL AND actor_id IN (SELECT user_id FROM memberships WHERE tenant_id = $1)))
             AND ($2::text IS NULL OR actor_email ILIKE $2)
             AND ($3::text IS NULL OR action ILIKE $3)
             AND ($4::text IS NULL OR target ILIKE $4)
             AND ($5::text IS NULL OR outcome = $5)
             AND ($6::timestamptz IS NULL OR occurred_at >= $6)
             AND ($7::timestamptz IS NULL OR occurred_at < $7)
             AND ($8::bigint IS NULL OR id < $8)
           ORDER BY id DESC LIMIT $9"#,
        tenant_id,
        filter.actor.as_deref().map(|a| format!("%{}%", escape_like(a))),
        filter.action.as_deref().map(|a| format!("{}%", escape_like(a))),
        filter.target.as_deref().map(|t| format!("%{}%", escape_like(t))),
        filter.outcome.as_deref(),
        filter.from,
        filter.to,
        filter.before_id,
        limit,
    )
    .fetch_all(pool)
    .await
}

pub async fn find(pool: &PgPool, tenant_id: Uuid, id: i64) -> Result<Option<AuditRow>, sqlx::Error> {
    sqlx::query_as!(
        AuditRow,
        r#"SELECT id, occurred_at, tenant_id, actor_id, actor_email, action, target, outcome, ip, user_agent,
                  details, prev_hash, hash
           FROM audit_log
           WHERE id = $2
             AND (tenant_id = $1
                  OR (tenant_id IS NULL AND actor_id IN (SELECT user_id FROM memberships WHERE tenant_id = $1)))"#,
        tenant_id,
        id,
    )
    .fetch_optional(pool)
    .await
}

/// True when the record is one the tenant's auditors may see.
pub async fn in_scope(pool: &PgPool, tenant_id: Uuid, id: i64) -> Result<bool, sqlx::Error> {
    Ok(find(pool, tenant_id, id).await?.is_some())
}

fn escape_like(s: &str) -> String {
    s.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_")
}

/// The result of walking the chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChainReport {
    Intact {
        records: u64,
    },
    /// The first record whose link does not hold.
    Broken {
        id: i64,
        reason: &'static str,
        checked: u64,
    },
}

/// Walks the whole chain in id order, in batches.
pub async fn verify(pool: &PgPool) -> Result<ChainReport, sqlx::Error> {
    let mut prev = GENESIS.to_vec();
    let mut after = 0i64;
    let mut checked = 0u64;
    loop {
        let rows: Vec<AuditRow> = sqlx::query_as!(
            AuditRow,
            r#"SELECT id, occurred_at, tenant_id, actor_id, actor_email, action, target, outcome, ip, user_agent,
                  details, prev_hash, hash
               FROM audit_log WHERE id > $1 ORDER BY id LIMIT 1000"#,
            after,
        )
        .fetch_all(pool)
        .await?;
        let Some(last) = rows.last() else {
            return Ok(ChainReport::Intact { records: checked });
        };
        after = last.id;
        for row in &rows {
            if row.prev_hash != prev {
                return Ok(ChainReport::Broken {
                    id: row.id,
                    reason: "its link to the previous record does not match (a record before it was removed or altered)",
                    checked,
                });
            }
            let expected = chain::hash(
                &prev,
                &Hashed {
                    occurred_at: row.occurred_at,
                    tenant_id: row.tenant_id,
                    actor_id: row.actor_id,
                    actor_email: &row.actor_email,
                    action: &row.action,
                    target: &row.target,
                    outcome: &row.outcome,
                    ip: &row.ip,
                    user_agent: &row.user_agent,
                    details: &row.details,
                },
            );
            if row.hash != expected {
                return Ok(ChainReport::Broken {
                    id: row.id,
                    reason: "its contents do not match its hash (the record was altered)",
                    checked,
                });
            }
            prev = row.hash.clone();
            checked += 1;
        }
    }
}
