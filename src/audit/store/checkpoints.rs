//! Signed checkpoints: the latest of a log, those in a range, and a new one.

use sqlx::{PgPool, Postgres, Transaction};

use super::*;
use crate::audit::checkpoint::Checkpoint;

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
