//! Searching a log: the filter, keyset pages, streaming every match (for
//! the export), and one record by id.

use chrono::{DateTime, Utc};
use futures_util::stream::BoxStream;
use futures_util::TryStreamExt;
use serde::Serialize;
use sqlx::{PgPool, Postgres, Transaction};
use tokio::sync::mpsc;
use uuid::Uuid;

use super::*;
use crate::audit::details::Details;
use crate::audit::target::TargetMatch;
use crate::audit::Event;

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
