//! Webhook events' SQL.

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use uuid::Uuid;

use crate::web::listing::Range;

/// Stores an event unless this connection already has one with its id;
/// true when it was new.
pub async fn store_once(
    db: impl sqlx::PgExecutor<'_>,
    connection_id: Uuid,
    tenant_id: Uuid,
    event_id: &str,
    event: &str,
    payload: &serde_json::Value,
) -> Result<bool, sqlx::Error> {
    Ok(sqlx::query!(
        "INSERT INTO webhook_events (connection_id, tenant_id, event_id, event, payload) VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (connection_id, event_id) DO NOTHING",
        connection_id,
        tenant_id,
        event_id,
        event,
        payload,
    )
    .execute(db)
    .await?
    .rows_affected()
        == 1)
}

#[derive(Debug, Clone)]
pub struct EventRow {
    pub id: i64,
    pub connection_name: String,
    pub event_id: String,
    pub event: String,
    pub payload: serde_json::Value,
    pub received_at: DateTime<Utc>,
}

/// A tenant's events, newest first, older than `before` when given.
/// Received events, newest first: those before the event `before`, within
/// the days of `received`.
pub async fn list(
    pool: &PgPool,
    tenant_id: Uuid,
    before: Option<i64>,
    received: Range,
    limit: i64,
) -> Result<Vec<EventRow>, sqlx::Error> {
    let (from, until) = received.bounds();
    sqlx::query_as!(
        EventRow,
        "SELECT e.id, c.name AS connection_name, e.event_id, e.event, e.payload, e.received_at \
         FROM webhook_events e JOIN connections c ON c.id = e.connection_id \
         WHERE e.tenant_id = $1 AND ($2::bigint IS NULL OR e.id < $2) \
           AND ($4::timestamptz IS NULL OR e.received_at >= $4) \
           AND ($5::timestamptz IS NULL OR e.received_at < $5) \
         ORDER BY e.id DESC LIMIT $3",
        tenant_id,
        before,
        limit,
        from,
        until,
    )
    .fetch_all(pool)
    .await
}

pub async fn find(pool: &PgPool, tenant_id: Uuid, id: i64) -> Result<Option<EventRow>, sqlx::Error> {
    sqlx::query_as!(
        EventRow,
        "SELECT e.id, c.name AS connection_name, e.event_id, e.event, e.payload, e.received_at \
         FROM webhook_events e JOIN connections c ON c.id = e.connection_id WHERE e.tenant_id = $1 AND e.id = $2",
        tenant_id,
        id,
    )
    .fetch_optional(pool)
    .await
}

/// Counts a rejected delivery in its connection's current minute, keeping
/// the minute's first delivery as the sample.
pub async fn count_rejection(
    pool: &PgPool,
    connection_id: Uuid,
    sample: &serde_json::Value,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO webhook_rejections (connection_id, minute, count, sample) \
         VALUES ($1, date_trunc('minute', now()), 1, $2) \
         ON CONFLICT (connection_id, minute) DO UPDATE SET count = webhook_rejections.count + 1",
        connection_id,
        sample,
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// One connection's rejected deliveries in one minute.
pub struct RejectedMinute {
    pub tenant_id: Uuid,
    pub connection_name: String,
    pub minute: DateTime<Utc>,
    pub count: i64,
    pub sample: serde_json::Value,
}

/// Takes the minutes before `before` out of the count and returns them; a
/// concurrent sweep waits on the rows and then finds them gone.
pub async fn take_finished_rejections(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    before: DateTime<Utc>,
) -> Result<Vec<RejectedMinute>, sqlx::Error> {
    sqlx::query_as!(
        RejectedMinute,
        "WITH taken AS (DELETE FROM webhook_rejections WHERE minute < $1 \
                        RETURNING connection_id, minute, count, sample) \
         SELECT c.tenant_id, c.name AS connection_name, t.minute, t.count, t.sample \
         FROM taken t JOIN connections c ON c.id = t.connection_id ORDER BY t.minute, c.name",
        before,
    )
    .fetch_all(&mut **tx)
    .await
}
