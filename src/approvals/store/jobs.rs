//! The job queue that runs approved requests: starting runs, saving their
//! progress, waking them on events, claiming and settling jobs, and the
//! notification channel the runner listens on.

use chrono::{DateTime, Utc};
use sqlx::{PgExecutor, PgPool};
use uuid::Uuid;

use crate::audit::store::staged_row;
use crate::audit::NewRecord;

use super::notices::add_timeline;
use crate::approvals::model::Policy;

/// A request to mark as being carried out: its id, the detail of its
/// timeline entry and its audit record.
pub struct Start {
    pub id: Uuid,
    pub detail: String,
    pub record: NewRecord,
}

/// Moves each request of `starts` that is still approved to executing,
/// with its timeline entry and its audit record, in one statement; the
/// ids moved.
pub async fn start_all<'e>(db: impl PgExecutor<'e>, starts: &[Start]) -> Result<Vec<Uuid>, sqlx::Error> {
    // `audited` is one row whatever was moved (an aggregate), so joining
    // it makes it run without changing the rows returned.
    sqlx::query_scalar!(
        r#"WITH moved AS (UPDATE action_requests r SET status = 'executing', updated_at = now()
                          FROM UNNEST($1::uuid[], $2::text[]) AS u(id, detail)
                          WHERE r.id = u.id AND r.status = 'approved' RETURNING r.id, u.detail),
                noted AS (INSERT INTO request_timeline (request_id, what, detail)
                          SELECT id, 'executing', detail FROM moved RETURNING request_id),
                audited AS (SELECT stage_audit(jsonb_agg(a.rec ORDER BY a.n)) AS staged
                            FROM moved JOIN UNNEST($1::uuid[], $3::jsonb[]) WITH ORDINALITY AS a(id, rec, n)
                              ON a.id = moved.id)
           SELECT n.request_id AS "request_id!" FROM noted n CROSS JOIN audited"#,
        &starts.iter().map(|s| s.id).collect::<Vec<_>>(),
        &starts.iter().map(|s| s.detail.clone()).collect::<Vec<_>>(),
        &starts.iter().map(|s| staged_row(&s.record)).collect::<Vec<_>>(),
    )
    .fetch_all(db)
    .await
}

pub async fn set_progress<'e>(
    db: impl PgExecutor<'e>,
    id: Uuid,
    progress: &serde_json::Value,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE action_requests SET progress = $2, updated_at = now() WHERE id = $1",
        id,
        progress,
    )
    .execute(db)
    .await?;
    Ok(())
}

/// A run's progress with the timeline entry that says what it did, in one
/// statement (so both or neither are written, without a transaction of
/// their own: a payout's run saves two or three times).
pub async fn save_progress<'e>(
    db: impl PgExecutor<'e>,
    id: Uuid,
    progress: &serde_json::Value,
    what: &str,
    detail: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "WITH saved AS (UPDATE action_requests SET progress = $2, updated_at = now() WHERE id = $1) \
         INSERT INTO request_timeline (request_id, what, detail) VALUES ($1, $3, $4)",
        id,
        progress,
        what,
        detail,
    )
    .execute(db)
    .await?;
    Ok(())
}

/// A changed payload (sent back for approval): new digest, new deadline.
pub async fn replace_payload<'e>(
    db: impl PgExecutor<'e>,
    id: Uuid,
    payload: &serde_json::Value,
    digest: &str,
    expires_at: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE action_requests SET payload = $2, digest = $3, expires_at = $4, progress = '{}'::jsonb, \
           updated_at = now() WHERE id = $1",
        id,
        payload,
        digest,
        expires_at,
    )
    .execute(db)
    .await?;
    Ok(())
}

/// Runs the request's queued job now (an event brought news of it).
async fn wake<'e>(db: impl PgExecutor<'e>, request: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE jobs SET run_at = now() WHERE request_id = $1 AND done_at IS NULL",
        request
    )
    .execute(db)
    .await?;
    Ok(())
}

/// An event from the service about a request's action: its job is woken
/// to read it back, and the event noted on the timeline, in that order. A
/// run in progress holds the job's row lock and goes on to lock the
/// request on another connection; the timeline entry takes a key-share
/// lock on the request (its foreign key), so noting it first would
/// deadlock with such a run where Postgres can't see it.
pub async fn note_event(pool: &PgPool, request: Uuid, event: &str) -> Result<(), sqlx::Error> {
    let mut tx = pool.begin().await?;
    wake(&mut *tx, request).await?;
    add_timeline(&mut *tx, request, "event", event).await?;
    tx.commit().await
}

/// The channel the job runners listen on: `job:<epoch seconds>` when a job
/// is queued or rescheduled (a trigger on `jobs`), `due:<epoch seconds>`
/// for a filed request's earliest reminder, escalation or expiry.
pub const CHANNEL: &str = "paydesk_gate";

/// Tells the runners a request has something due at `at` (a reminder,
/// an escalation, its expiry), when the transaction commits.
pub async fn announce<'e>(db: impl PgExecutor<'e>, at: DateTime<Utc>) -> Result<(), sqlx::Error> {
    sqlx::query!("SELECT pg_notify($1, $2)", CHANNEL, due_payload(at))
        .execute(db)
        .await?;
    Ok(())
}

pub(super) fn due_payload(at: DateTime<Utc>) -> String {
    format!("due:{}", at.timestamp_micros() as f64 / 1e6)
}

/// When the next delayed job falls due; None when none waits. One probe
/// of the due-jobs index.
pub async fn next_job_due(pool: &PgPool) -> Result<Option<DateTime<Utc>>, sqlx::Error> {
    sqlx::query_scalar!(r#"SELECT min(run_at) AS "at" FROM jobs WHERE done_at IS NULL AND run_at > now()"#)
        .fetch_one(pool)
        .await
}

/// How many jobs are due now, counting up to `at_most`: jobs being run
/// count too (a job stays due until its run commits).
pub async fn jobs_due_now(pool: &PgPool, at_most: i64) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT count(*) AS "due!" FROM (SELECT 1 FROM jobs WHERE done_at IS NULL AND run_at <= now() LIMIT $1) d"#,
        at_most,
    )
    .fetch_one(pool)
    .await
}

/// When the next reminder, escalation or expiry of a pending request falls
/// due; None when none waits. It reads every pending request, so the
/// scheduler asks only after chores ran or when it may have missed news.
pub async fn next_chore_due(pool: &PgPool) -> Result<Option<DateTime<Utc>>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT least(
             (SELECT min(expires_at) FROM action_requests WHERE status = 'pending'),
             (SELECT min(r.created_at + make_interval(secs => p.reminder_after_secs))
                FROM action_requests r JOIN approval_policies p
                  ON p.tenant_id = r.tenant_id AND p.action_kind = r.kind AND p.version = r.policy_version
               WHERE r.status = 'pending' AND r.reminded_at IS NULL AND p.reminder_after_secs IS NOT NULL),
             (SELECT min(r.created_at + make_interval(secs => $1::int)) FROM action_requests r
               WHERE r.status = 'pending' AND r.reminded_at IS NULL AND r.policy_version = 0 AND $1::int IS NOT NULL),
             (SELECT min(r.created_at + make_interval(secs => p.escalation_after_secs))
                FROM action_requests r JOIN approval_policies p
                  ON p.tenant_id = r.tenant_id AND p.action_kind = r.kind AND p.version = r.policy_version
               WHERE r.status = 'pending' AND r.escalated_at IS NULL AND p.escalation_after_secs IS NOT NULL)
           ) AS "at""#,
        Policy::standard().reminder_after_secs,
    )
    .fetch_one(pool)
    .await
}

/// A due job, as a runner takes it: with its request's tenant and the
/// tenant's primary connection (SQL `primary_connection_of`), so a run
/// that only reads a payout back costs no statement for either.
pub struct Claimed {
    pub id: i64,
    pub request_id: Option<Uuid>,
    pub attempts: i32,
    pub tenant_id: Option<Uuid>,
    pub connection_id: Option<Uuid>,
    pub connection_updated_at: Option<DateTime<Utc>>,
}

/// Which due jobs a claim takes.
#[derive(Debug, Clone, Copy)]
pub enum Take {
    /// Up to this many, oldest first, skipping those another runner holds.
    Due(i64),
    /// Only this one, waiting for its lock if another runner holds it.
    Only(i64),
}

/// Takes due jobs, locked for the rest of the caller's transaction. The
/// runner skips jobs another runner holds; a caller waiting for one job
/// (`run_now`) waits for its lock instead, and then finds it done. The
/// jobs are found and locked first and joined after (joined before the
/// sort, every due job would be).
pub async fn claim_jobs(e: impl PgExecutor<'_>, take: Take) -> Result<Vec<Claimed>, sqlx::Error> {
    match take {
        Take::Only(only) => {
            sqlx::query_as!(
                Claimed,
                r#"WITH j AS (SELECT id, request_id, attempts FROM jobs
                          WHERE done_at IS NULL AND run_at <= now() AND id = $1 FOR UPDATE)
               SELECT j.id AS "id!", j.request_id, j.attempts AS "attempts!", r.tenant_id AS "tenant_id?",
                      c.id AS "connection_id?", c.updated_at AS "connection_updated_at?"
               FROM j
               LEFT JOIN action_requests r ON r.id = j.request_id
               LEFT JOIN LATERAL primary_connection_of(r.tenant_id) c ON true"#,
                only,
            )
            .fetch_all(e)
            .await
        }
        Take::Due(at_most) => {
            sqlx::query_as!(
                Claimed,
                r#"WITH j AS (SELECT id, request_id, attempts FROM jobs
                          WHERE done_at IS NULL AND run_at <= now()
                          ORDER BY run_at, id LIMIT $1 FOR UPDATE SKIP LOCKED)
               SELECT j.id AS "id!", j.request_id, j.attempts AS "attempts!", r.tenant_id AS "tenant_id?",
                      c.id AS "connection_id?", c.updated_at AS "connection_updated_at?"
               FROM j
               LEFT JOIN action_requests r ON r.id = j.request_id
               LEFT JOIN LATERAL primary_connection_of(r.tenant_id) c ON true"#,
                at_most,
            )
            .fetch_all(e)
            .await
        }
    }
}

/// How a run left its job.
#[derive(Debug)]
pub struct Settled {
    pub job: i64,
    /// Nothing more to run.
    pub done: bool,
    /// Run again this long from now (None: keep the time it has).
    pub after: Option<std::time::Duration>,
    /// Failed runs in a row.
    pub attempts: i32,
    /// Why the last run failed (None on a run that got on, which clears it;
    /// a job done without one keeps the last).
    pub error: Option<String>,
}

/// Writes how each run of a claim left its job, in one statement.
pub async fn settle_jobs(e: impl PgExecutor<'_>, settled: &[Settled]) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE jobs j SET done_at = CASE WHEN u.done THEN now() END, \
           run_at = CASE WHEN u.after_secs IS NULL THEN j.run_at ELSE now() + make_interval(secs => u.after_secs) END, \
           attempts = u.attempts, \
           last_error = CASE WHEN u.done AND u.error IS NULL THEN j.last_error ELSE u.error END \
         FROM UNNEST($1::int8[], $2::bool[], $3::float8[], $4::int4[], $5::text[]) AS u(id, done, after_secs, attempts, error) \
         WHERE j.id = u.id",
        &settled.iter().map(|s| s.job).collect::<Vec<_>>(),
        &settled.iter().map(|s| s.done).collect::<Vec<_>>(),
        // Nullable elements: the macro's type check knows only Vec<f64>.
        &settled.iter().map(|s| s.after.map(|a| a.as_secs_f64())).collect::<Vec<_>>() as _,
        &settled.iter().map(|s| s.attempts).collect::<Vec<_>>(),
        &settled.iter().map(|s| s.error.clone()).collect::<Vec<_>>() as _,
    )
    .execute(e)
    .await?;
    Ok(())
}
