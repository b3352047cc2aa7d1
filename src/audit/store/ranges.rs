//! What verification reads: the chain checked in the database, sequence
//! ranges and the hash before a range, and the logs there are.

use chrono::{DateTime, Utc};
use sqlx::PgPool;

use super::*;
use crate::audit::details::Details;

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
    crate::audit::verify::walk(pool, log, None, None).await
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
