//! "Verify chain" as a background job: the records are streamed from one
//! query (never the whole log in memory), the run's progress is kept in
//! `audit_verifications` so any replica's page can show it, and each log
//! remembers where it was last verified (`audit_verified_points`), so the
//! next run starts there: it checks that the remembered record still
//! holds the remembered hash, then walks only what came after. A run of
//! the whole chain is still there for an auditor who wants the prefix
//! re-hashed (and is what a log's first run does).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use futures_util::TryStreamExt;
use sqlx::PgPool;
use tokio::sync::mpsc;
use uuid::Uuid;

use super::chain::{self, Hashed, GENESIS};
use super::details::Details;
use super::store::{self, AuditRow, ChainReport, Log};
use super::{outcome, Actor, Event, NewRecord};

/// How often a run writes its progress.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_millis(500);

/// A log's last verified record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Point {
    pub seq: i64,
    pub hash: Vec<u8>,
    /// Records verified up to it.
    pub records: i64,
}

/// A run of "verify chain", as its page shows it.
#[derive(Debug, Clone)]
pub struct Run {
    pub id: i64,
    pub total: i64,
    pub checked: i64,
    pub finished: bool,
    pub intact: Option<bool>,
    pub broken_id: Option<i64>,
    pub reason: String,
}

/// A run about to start: what it checks.
#[derive(Debug, Clone)]
pub struct Job {
    pub id: i64,
    pub log: Log,
    /// Records to check.
    pub total: i64,
    /// None: from the log's first record.
    pub from: Option<Point>,
}

pub async fn point(pool: &PgPool, log: Log) -> Result<Option<Point>, sqlx::Error> {
    let row = sqlx::query!(
        "SELECT seq, hash, records FROM audit_verified_points
         WHERE log_key = COALESCE($1::uuid, '00000000-0000-0000-0000-000000000000')",
        log.tenant_id(),
    )
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|r| Point {
        seq: r.seq,
        hash: r.hash,
        records: r.records,
    }))
}

/// Records a run for `log` (from its last verified point, or from the
/// start when `whole` or never verified) and gives the job to run.
pub async fn start(pool: &PgPool, log: Log, by: Option<Uuid>, whole: bool) -> Result<Job, sqlx::Error> {
    store::link(pool, log).await?;
    let from = if whole { None } else { point(pool, log).await? };
    let after = from.as_ref().map_or(0, |p| p.seq);
    let total = sqlx::query_scalar!(
        r#"SELECT count(*) AS "count!" FROM audit_log
           WHERE COALESCE(tenant_id, '00000000-0000-0000-0000-000000000000') =
                 COALESCE($1::uuid, '00000000-0000-0000-0000-000000000000')
             AND seq > $2"#,
        log.tenant_id(),
        after,
    )
    .fetch_one(pool)
    .await?;
    let id = sqlx::query_scalar!(
        "INSERT INTO audit_verifications (tenant_id, started_by, total) VALUES ($1, $2, $3) RETURNING id",
        log.tenant_id(),
        by,
        total,
    )
    .fetch_one(pool)
    .await?;
    Ok(Job { id, log, total, from })
}

/// A run of `log`, when it is one.
pub async fn run_of(pool: &PgPool, log: Log, id: i64) -> Result<Option<Run>, sqlx::Error> {
    let row = sqlx::query!(
        r#"SELECT id, total, checked, finished_at IS NOT NULL AS "finished!", intact, broken_id, reason
           FROM audit_verifications
           WHERE id = $2 AND (tenant_id = $1 OR ($1::uuid IS NULL AND tenant_id IS NULL))"#,
        log.tenant_id(),
        id,
    )
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|r| Run {
        id: r.id,
        total: r.total,
        checked: r.checked,
        finished: r.finished,
        intact: r.intact,
        broken_id: r.broken_id,
        reason: r.reason,
    }))
}

/// Runs the job to its end: walks, writes progress, then the finding, the
/// new verified point when the chain holds, and an audit record of the run.
pub async fn run(pool: &PgPool, job: &Job, actor: &Actor) -> Result<ChainReport, sqlx::Error> {
    let report = walk(pool, job.log, job.from.as_ref(), Some(job.id)).await?;
    let (intact, checked, broken_id, reason) = match &report {
        ChainReport::Intact { records, .. } => (true, *records, None, ""),
        // A record of another log (from before logs were chained apart)
        // is not named.
        ChainReport::Broken { id, reason, checked } => {
            let shown = store::in_scope(pool, job.log, *id).await?.then_some(*id);
            (false, *checked, shown, *reason)
        }
    };
    sqlx::query!(
        "UPDATE audit_verifications SET finished_at = now(), intact = $2, checked = $3, broken_id = $4,
                reason = $5
         WHERE id = $1",
        job.id,
        intact,
        checked as i64,
        broken_id,
        reason,
    )
    .execute(pool)
    .await?;
    if let ChainReport::Intact {
        records,
        head: Some((seq, hash)),
    } = &report
    {
        sqlx::query!(
            "INSERT INTO audit_verified_points (log_key, seq, hash, records)
             VALUES (COALESCE($1::uuid, '00000000-0000-0000-0000-000000000000'), $2, $3, $4)
             ON CONFLICT (log_key) DO UPDATE
               SET seq = EXCLUDED.seq, hash = EXCLUDED.hash, records = EXCLUDED.records, verified_at = now()
               WHERE audit_verified_points.seq <= EXCLUDED.seq",
            job.log.tenant_id(),
            seq,
            hash,
            *records as i64,
        )
        .execute(pool)
        .await?;
    }
    let result = if intact {
        outcome::SUCCESS
    } else {
        outcome::FAILURE
    };
    let record = NewRecord::new(
        actor,
        job.log.tenant_id(),
        Event::AuditVerified,
        "audit_log",
        result,
    )
    .with_details(serde_json::json!({ "records_checked": checked, "run": job.id }));
    store::append(pool, &[record]).await?;
    Ok(report)
}

/// Marks a run that failed on the database as ended, so its page stops
/// waiting (the error is logged by the caller).
pub async fn stopped(pool: &PgPool, id: i64) {
    let ended = sqlx::query!(
        "UPDATE audit_verifications SET finished_at = now(),
                reason = 'the run stopped on an error; start it again'
         WHERE id = $1 AND finished_at IS NULL",
        id,
    )
    .execute(pool)
    .await;
    if let Err(e) = ended {
        tracing::error!(error = %e, run = id, "could not mark the run as stopped");
    }
}

/// Checks one row against the chain it continues.
fn check(row: &AuditRow, prev: &[u8]) -> Option<&'static str> {
    if row.prev_hash != prev {
        return Some(
            "its link to the previous record does not match (a record before it was removed or altered)",
        );
    }
    let expected = chain::hash(
        prev,
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
    (row.hash != expected).then_some("its contents do not match its hash (the record was altered)")
}

/// Walks `log` from `from` (None: the records from before logs were
/// chained apart, then the log from its start), writing progress to the
/// run `job` when given. The log as it stands when the walk starts is cut
/// into `PARTS` ranges of positions checked at once, each streamed by its
/// own query and hashed on its own thread: a record's hash covers only
/// itself and the stored hash before it, so each range starts from the
/// stored hash of the record before it, and that record is checked as
/// the last of the range before. The first record that breaks the chain,
/// or the count and the log's last record.
pub async fn walk(
    pool: &PgPool,
    log: Log,
    from: Option<&Point>,
    job: Option<i64>,
) -> Result<ChainReport, sqlx::Error> {
    let mut checked = 0u64;
    let (after, prev) = match from {
        Some(p) => {
            let now = store::in_log(pool, log, p.seq - 1, p.seq, 1).await?;
            if let Some(row) = now.first().filter(|r| r.hash != p.hash) {
                return Ok(ChainReport::Broken {
                    id: row.id,
                    reason: "its hash is not the one verified before (the record was altered)",
                    checked,
                });
            }
            checked = p.records as u64;
            (p.seq, p.hash.clone())
        }
        None => {
            let mut prev = GENESIS.to_vec();
            let mut unchained = sqlx::query_as!(
                AuditRow,
                r#"SELECT id, occurred_at, tenant_id, actor_id, actor_email, action, target, outcome, ip,
                          user_agent, details AS "details: Details", seq, prev_hash, hash
                   FROM audit_log WHERE seq IS NULL ORDER BY id"#,
            )
            .fetch(pool);
            while let Some(row) = unchained.try_next().await? {
                if let Some(reason) = check(&row, &prev) {
                    return Ok(ChainReport::Broken {
                        id: row.id,
                        reason,
                        checked,
                    });
                }
                prev = row.hash;
                checked += 1;
            }
            (0, GENESIS.to_vec())
        }
    };
    let through = store::last_seq(pool, log).await?.unwrap_or(after).max(after);
    let counted = Arc::new(AtomicU64::new(0));
    let mut parts = Vec::with_capacity(PARTS);
    for (first, last) in split(after, through, PARTS) {
        let start = match first == after {
            true => prev.clone(),
            false => store::hash_before(pool, log, first + 1)
                .await?
                .unwrap_or(GENESIS.to_vec()),
        };
        let range = Part {
            log,
            after: first,
            through: last,
            prev: start,
        };
        parts.push(tokio::spawn(walk_part(pool.clone(), range, counted.clone())));
    }
    let mut all = std::pin::pin!(futures_util::future::join_all(parts));
    let mut tick = tokio::time::interval(PROGRESS_EVERY);
    let mut written = 0;
    let finished = loop {
        tokio::select! {
            finished = &mut all => break finished,
            _ = tick.tick() => {
                let now = counted.load(Ordering::Relaxed);
                if let Some(job) = job.filter(|_| now > written) {
                    written = now;
                    sqlx::query!("UPDATE audit_verifications SET checked = $2 WHERE id = $1", job, now as i64)
                        .execute(pool)
                        .await?;
                }
            }
        }
    };
    let mut head = from.map(|p| (p.seq, p.hash.clone()));
    for part in finished {
        match part.expect("the chain check does not panic")? {
            ChainReport::Intact { records, head: last } => {
                checked += records;
                head = last.or(head);
            }
            ChainReport::Broken {
                id,
                reason,
                checked: before,
            } => {
                return Ok(ChainReport::Broken {
                    id,
                    reason,
                    checked: checked + before,
                })
            }
        }
    }
    Ok(ChainReport::Intact {
        records: checked,
        head,
    })
}

/// Ranges of a log checked at once: Postgres reading one and the portal
/// hashing another keep both cores busy.
const PARTS: usize = 2;

/// `(after, through]` cut into at most `parts` ranges of about equal size,
/// in order, as (after, through) pairs; none when it is empty.
fn split(after: i64, through: i64, parts: usize) -> Vec<(i64, i64)> {
    let size = ((through - after) as u64).div_ceil(parts as u64).max(1) as i64;
    (0..parts as i64)
        .map(|i| (after + i * size, (after + (i + 1) * size).min(through)))
        .filter(|(first, last)| first < last)
        .collect()
}

/// One range of a log to check, from the stored hash before it.
struct Part {
    log: Log,
    after: i64,
    through: i64,
    prev: Vec<u8>,
}

/// Checks one range: records are decoded here and hashed on a thread of
/// their own, both overlapping Postgres producing them; the bounded
/// channel keeps memory flat. Counts (in `counted` and the report) only
/// the range's own records.
async fn walk_part(pool: PgPool, part: Part, counted: Arc<AtomicU64>) -> Result<ChainReport, sqlx::Error> {
    let (batches, to_check) = mpsc::channel::<Vec<AuditRow>>(4);
    let checker = tokio::task::spawn_blocking(move || check_all(to_check, part.prev, &counted));
    let mut rows = sqlx::query_as!(
        AuditRow,
        r#"SELECT id, occurred_at, tenant_id, actor_id, actor_email, action, target, outcome, ip, user_agent,
                  details AS "details: Details", seq, prev_hash, hash
           FROM audit_log
           WHERE COALESCE(tenant_id, '00000000-0000-0000-0000-000000000000') =
                 COALESCE($1::uuid, '00000000-0000-0000-0000-000000000000')
             AND seq > $2 AND seq <= $3
           ORDER BY COALESCE(tenant_id, '00000000-0000-0000-0000-000000000000'), seq"#,
        part.log.tenant_id(),
        part.after,
        part.through,
    )
    .fetch(&pool);
    let mut batch = Vec::with_capacity(BATCH);
    loop {
        let row = rows.try_next().await?;
        let last = row.is_none();
        batch.extend(row);
        if batch.len() < BATCH && !last {
            continue;
        }
        // A closed channel: the checker found a break and has stopped.
        if batches.send(std::mem::take(&mut batch)).await.is_err() || last {
            break;
        }
    }
    drop(batches);
    Ok(checker.await.expect("the chain check does not panic"))
}

/// Records handed to the checking thread at a time.
const BATCH: usize = 1024;

/// Checks the batches in order from `prev`, adding to `counted` as it
/// goes: the first record that breaks the chain (with the records checked
/// before it), or the count and the last record.
fn check_all(
    mut batches: mpsc::Receiver<Vec<AuditRow>>,
    mut prev: Vec<u8>,
    counted: &AtomicU64,
) -> ChainReport {
    let mut records = 0;
    let mut head = None;
    while let Some(batch) = batches.blocking_recv() {
        let size = batch.len() as u64;
        for row in batch {
            if let Some(reason) = check(&row, &prev) {
                return ChainReport::Broken {
                    id: row.id,
                    reason,
                    checked: records,
                };
            }
            records += 1;
            head = row.seq.map(|seq| (seq, row.hash.clone()));
            prev = row.hash;
        }
        counted.fetch_add(size, Ordering::Relaxed);
    }
    ChainReport::Intact { records, head }
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn ranges_cover_the_log_once_in_order() {
        assert_eq!(split(0, 10, 2), [(0, 5), (5, 10)]);
        assert_eq!(split(3, 10, 2), [(3, 7), (7, 10)]);
        assert_eq!(split(0, 1, 2), [(0, 1)]);
        assert_eq!(split(5, 5, 2), []);
    }
}
