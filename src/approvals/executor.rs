//! Runs approved actions from the job queue, exactly once, whatever their
//! kind. Jobs are taken with `FOR UPDATE SKIP LOCKED`, up to `BATCH` in
//! a transaction that holds them until each has run, so any number of
//! workers, in any number of replicas, can run them. A request's job
//! stays queued until its action reaches a final outcome: a payout on
//! the rail is read back until it settles (an event from the service
//! wakes the job early), so a failure on the rail ends the request as
//! failed.
//!
//! Nothing polls. Each process has `gate_workers` workers (each carries
//! out up to `BATCH` actions at once, so executions are bounded), a
//! scheduler and one connection that LISTENs on `store::CHANNEL`. A job
//! queued or rescheduled notifies from the transaction that writes it (a
//! trigger on `jobs`), naming the process that wrote it; a request filed
//! or sent back announces its first reminder, escalation or expiry
//! (`store::insert_request`, `store::announce`); a notification is
//! delivered only when that transaction commits.
//!
//! A job is run by the process that wrote it: due now, it is owed a claim
//! and a worker wakes; due later, the scheduler sleeps until then and owes
//! a claim for each job still due. Every other process hears of the job
//! too, and looks `HANDOVER` after it fell due, in case its writer died
//! first (or was too busy to take it). So one process, not every one,
//! wakes for each job, and a woken worker seldom finds nothing left to
//! take (a claim that finds nothing still costs a transaction). Under
//! load a woken worker waits `GATHER` first when another claim is in
//! flight, so one claim takes the jobs approved meanwhile. The
//! chores' next time is read
//! only after chores ran (anything filed meanwhile was announced). Idle,
//! the process sends nothing to the database. There is no safety poll: a
//! notification can only be missed while the listening connection is
//! down, and on reconnecting the runner catches up (it owes a claim for
//! every job due and re-reads the due times).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration as StdDuration;

use actix_web::web::Data;
use chrono::{DateTime, Duration, Utc};
use paydesk_api::ApiError;
use serde_json::json;
use sqlx::postgres::PgListener;
use sqlx::PgPool;
use tokio::sync::Notify as Wake;
use uuid::Uuid;

use super::action::{self, Action, ErasedStep, ExecError};
use super::engine::{self, gate_actor, ApprovalError, Change, FiledAs, Filing, Notify};
use super::model::RequestStatus;
use super::store::{self, ActionRequest, Claimed, Settled, Take};
use crate::access::Member;
use crate::audit::Event;
use crate::state::AppState;
use crate::web::error::{describe_upstream, PortalError};
use crate::web::form::{Failure, Refusal};

const MAX_ATTEMPTS: i32 = 10;
/// A worker takes up to this many due jobs in one claim and runs them at
/// once: a claim (its transaction, the job query, the requests' read and
/// the jobs' update) costs the same five statements for one job or ten,
/// so under load, when claims are owed faster than workers free up, each
/// job costs a fraction of them. Idle, each claim takes the one job it was
/// owed for at once.
const BATCH: usize = 10;
/// After a failure to reach the database, the runner tries again this
/// much later.
const RETRY_AFTER: StdDuration = StdDuration::from_secs(1);
/// Another process's job is looked at this long after it fell due: its
/// writer runs it within milliseconds unless it died meanwhile, or all its
/// workers are busy (a bulk approval queues a hundred at once), when the
/// others share the rest.
const HANDOVER: Duration = Duration::milliseconds(250);
/// The scheduler wakes the workers for delayed jobs at most this often:
/// jobs due close together (payouts in flight read back every few
/// seconds) share one wake and one count of the jobs due, instead of one
/// each. Approved requests do not wait for it: their commit wakes a worker
/// directly.
const JOB_WAKE_SPACING: Duration = Duration::milliseconds(100);
/// A worker owed a claim while another claim of this process is in
/// flight waits this long first, so its claim also takes the jobs owed
/// meanwhile: under load each claim's statements are shared by several
/// jobs instead of one (approvals arrive one by one, and an idle worker
/// would otherwise take each alone). With no claim in flight the job is
/// claimed at once, so a quiet gate adds no wait.
const GATHER: StdDuration = StdDuration::from_millis(15);

/// What a run of a job came to.
enum Ran {
    Done,
    Again(StdDuration),
}

#[derive(Debug, thiserror::Error)]
enum RunError {
    #[error(transparent)]
    Exec(#[from] ExecError),
    #[error(transparent)]
    Gate(#[from] ApprovalError),
    #[error(transparent)]
    Portal(#[from] PortalError),
}

impl From<sqlx::Error> for RunError {
    fn from(e: sqlx::Error) -> Self {
        RunError::Exec(ExecError::Db(e))
    }
}

/// The job runner of one process: `workers` tasks taking due jobs, a
/// scheduler for what falls due later (delayed jobs, reminders,
/// escalations, expiries), and a listener on the gate's channel waking
/// either. Idle, it sends no statement: the workers wait for a
/// notification, the scheduler for the next due time it knows of.
pub struct Runner {
    /// This process's name in job notifications (`db::process_name`).
    name: String,
    /// Claims the workers owe: one per job this process was told is due.
    owed: AtomicUsize,
    /// A claim is owed: wakes a worker.
    work: Wake,
    /// Something falls due at a time `announced` holds (or the due times
    /// are unknown after the listener reconnected): wakes the scheduler.
    changed: Wake,
    announced: Mutex<Announced>,
    /// Workers waiting for work, and until when the scheduler sleeps (None
    /// while it works): what "idle" means, for the tests.
    waiting: AtomicUsize,
    /// Claims being run now, and whether a worker is gathering (see
    /// `GATHER`): one gathers at a time, the others leave the jobs owed
    /// meanwhile to it.
    in_flight: AtomicUsize,
    gathering: AtomicBool,
    scheduler: Mutex<Option<Rest>>,
    listening: AtomicBool,
    /// Each time a worker or the scheduler left its wait to ask the
    /// database for something.
    wakeups: AtomicU64,
    workers: usize,
}

/// How the runner rests between runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rest {
    /// A worker or the scheduler is at work.
    Busy,
    /// Every worker waits for a notification; the scheduler sleeps until then.
    Until(DateTime<Utc>),
    /// Nothing is due: only a notification wakes it. Idle.
    Told,
}

/// What the listener told the scheduler since it last looked.
#[derive(Default)]
struct Announced {
    /// When jobs fall due (another process's, a grace period later).
    jobs: Vec<DateTime<Utc>>,
    /// The earliest reminder, escalation or expiry announced.
    chore: Option<DateTime<Utc>>,
    /// Due times may have been missed: ask the database.
    recompute: bool,
}

impl Runner {
    /// How the runner rests now.
    pub fn rest(&self) -> Rest {
        if !self.listening.load(Ordering::SeqCst) || self.waiting.load(Ordering::SeqCst) < self.workers {
            return Rest::Busy;
        }
        self.scheduler
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .unwrap_or(Rest::Busy)
    }

    fn scheduler_rests(&self, rest: Option<Rest>) {
        *self.scheduler.lock().unwrap_or_else(|e| e.into_inner()) = rest;
    }

    /// How often the runner went to the database of its own accord.
    pub fn wakeups(&self) -> u64 {
        self.wakeups.load(Ordering::SeqCst)
    }

    /// `claims` more claims are owed: wakes a worker for each `BATCH` of
    /// them (a busy one takes what is owed when its run ends).
    fn owe(&self, claims: usize) {
        self.owed.fetch_add(claims, Ordering::SeqCst);
        for _ in 0..claims.div_ceil(BATCH).min(self.workers) {
            self.work.notify_one();
        }
    }

    /// A claim found fewer jobs than it was owed for: the `claims` owed
    /// before it looked are void. Each was owed for a job committed
    /// before then (a job is announced when its transaction commits, and
    /// counted due only once it is), which the claim saw taken or done. Without this, a job
    /// both replicas were told of (after the handover) or a burst one
    /// replica's workers drained is owed claims that each cost an empty
    /// transaction.
    fn forgive(&self, claims: usize) {
        let _ = self.owed.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
            Some(n.saturating_sub(claims))
        });
    }

    /// Takes up to `BATCH` owed claims; how many (0 when none is owed).
    fn take_owed(&self) -> usize {
        self.owed
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n > 0).then(|| n - n.min(BATCH))
            })
            .map_or(0, |n| n.min(BATCH))
    }

    fn announce(&self, change: impl FnOnce(&mut Announced)) {
        change(&mut self.announced.lock().unwrap_or_else(|e| e.into_inner()));
        self.changed.notify_one();
    }

    fn take_announced(&self) -> Announced {
        std::mem::take(&mut *self.announced.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// The listener (re)connected, so notifications may have been missed:
    /// the scheduler owes a claim for every job due now and recomputes.
    fn catch_up(&self) {
        self.scheduler_rests(None);
        self.announce(|a| a.recompute = true);
    }
}

fn earlier(a: Option<DateTime<Utc>>, b: Option<DateTime<Utc>>) -> Option<DateTime<Utc>> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Starts the runner on the current runtime with `workers` executions at
/// once at most.
pub fn start(state: Data<AppState>, workers: usize) -> Arc<Runner> {
    let runner = Arc::new(Runner {
        name: crate::db::process_name(&state.pool),
        owed: AtomicUsize::new(0),
        work: Wake::new(),
        changed: Wake::new(),
        announced: Mutex::new(Announced::default()),
        waiting: AtomicUsize::new(0),
        in_flight: AtomicUsize::new(0),
        gathering: AtomicBool::new(false),
        scheduler: Mutex::new(None),
        listening: AtomicBool::new(false),
        wakeups: AtomicU64::new(0),
        workers: workers.max(1),
    });
    tokio::spawn(listen(state.pool.clone(), runner.clone()));
    tokio::spawn(schedule(state.clone(), runner.clone()));
    for _ in 0..runner.workers {
        tokio::spawn(work(state.clone(), runner.clone()));
    }
    runner
}

/// Hears the gate's channel. A lost connection is re-established and
/// followed by a catch-up, since notifications sent meanwhile are lost;
/// that is why no safety poll is needed.
async fn listen(pool: PgPool, runner: Arc<Runner>) {
    loop {
        let mut listener = match connect_listener(&pool).await {
            Ok(listener) => listener,
            Err(e) => {
                tracing::warn!(error = %e, "the job runner could not listen; retrying");
                tokio::time::sleep(RETRY_AFTER).await;
                continue;
            }
        };
        runner.catch_up();
        runner.listening.store(true, Ordering::SeqCst);
        loop {
            match listener.try_recv().await {
                Ok(Some(n)) => heard(&runner, n.payload()),
                // The connection dropped: reconnect, then catch up.
                Ok(None) => break,
                Err(e) => {
                    tracing::warn!(error = %e, "the job runner's listener failed; reconnecting");
                    break;
                }
            }
        }
        runner.listening.store(false, Ordering::SeqCst);
    }
}

async fn connect_listener(pool: &PgPool) -> Result<PgListener, sqlx::Error> {
    let mut listener = PgListener::connect_with(pool).await?;
    listener.listen(store::CHANNEL).await?;
    Ok(listener)
}

/// One notification: `job:<epoch>:<process>` or `due:<epoch>`. A job of
/// this process due now is owed a claim at once; a later one, or another
/// process's (a grace period later), goes to the scheduler, as do
/// reminders, escalations and expiries.
fn heard(runner: &Runner, payload: &str) {
    let mut parts = payload.splitn(3, ':');
    let (Some(what), Some(epoch)) = (parts.next(), parts.next()) else {
        return;
    };
    let Some(at) = epoch
        .parse::<f64>()
        .ok()
        .and_then(|s| DateTime::from_timestamp_micros((s * 1e6) as i64))
    else {
        return;
    };
    match what {
        "job" => {
            let at = match parts.next() {
                // A job written outside any portal process (psql, say)
                // is everyone's at once.
                Some(writer) if !writer.is_empty() && writer != runner.name => at + HANDOVER,
                _ => at,
            };
            if at <= Utc::now() {
                runner.owe(1);
            } else {
                runner.announce(|a| a.jobs.push(at));
            }
        }
        _ => runner.announce(|a| a.chore = earlier(a.chore, Some(at))),
    }
}

/// A worker: makes the claims owed, up to `BATCH` at a time, then waits
/// to be woken. A claim takes any due jobs, not necessarily the ones it
/// was owed for: every due job is owed a claim somewhere, so each is taken.
async fn work(state: Data<AppState>, runner: Arc<Runner>) {
    loop {
        let woken = runner.work.notified();
        tokio::pin!(woken);
        // Registered before looking, so a wake sent while looking is not
        // lost.
        woken.as_mut().enable();
        let owed = runner.owed.load(Ordering::SeqCst) > 0;
        // Another worker gathering takes what is owed now when its wait ends.
        if !owed || (runner.in_flight.load(Ordering::SeqCst) > 0 && !gather(&runner).await) {
            runner.waiting.fetch_add(1, Ordering::SeqCst);
            woken.await;
            runner.waiting.fetch_sub(1, Ordering::SeqCst);
            continue;
        }
        let claims = runner.take_owed();
        if claims == 0 {
            continue;
        }
        // More than a claim's worth is owed: another worker takes the rest.
        if runner.owed.load(Ordering::SeqCst) > 0 {
            runner.work.notify_one();
        }
        runner.wakeups.fetch_add(1, Ordering::SeqCst);
        runner.in_flight.fetch_add(1, Ordering::SeqCst);
        let owed_before = runner.owed.load(Ordering::SeqCst);
        let ran = run_due(&state, Take::Due(claims as i64)).await;
        runner.in_flight.fetch_sub(1, Ordering::SeqCst);
        match ran {
            Ok(taken) if taken < claims => runner.forgive(owed_before),
            Ok(_) => {}
            Err(e) => {
                tracing::error!(error = %e, "the job runner failed; retrying");
                runner.owe(claims);
                tokio::time::sleep(RETRY_AFTER).await;
            }
        }
    }
}

/// Waits `GATHER` for more jobs to be owed, unless another worker already
/// does (false: that one takes them).
async fn gather(runner: &Runner) -> bool {
    if runner.gathering.swap(true, Ordering::SeqCst) {
        return false;
    }
    tokio::time::sleep(GATHER).await;
    runner.gathering.store(false, Ordering::SeqCst);
    true
}

/// The scheduler: sleeps until the earliest due time it knows of (or a
/// notification of an earlier one); then owes the workers a claim for each
/// job now due (as many as the database says are), or expires, reminds
/// and escalates what is due.
async fn schedule(state: Data<AppState>, runner: Arc<Runner>) {
    let mut jobs: BinaryHeap<Reverse<DateTime<Utc>>> = BinaryHeap::new();
    let mut chore: Option<DateTime<Utc>> = None;
    let mut jobs_woken_at = DateTime::<Utc>::MIN_UTC;
    loop {
        let changed = runner.changed.notified();
        tokio::pin!(changed);
        changed.as_mut().enable();
        let announced = runner.take_announced();
        if announced.recompute {
            runner.wakeups.fetch_add(1, Ordering::SeqCst);
            runner.owe(jobs_due_now(&state, &runner, i64::MAX).await);
            jobs.extend(next_job_due(&state).await.map(Reverse));
            chore = next_chore_due(&state).await;
        }
        jobs.extend(announced.jobs.into_iter().map(Reverse));
        chore = earlier(chore, announced.chore);
        let job = jobs
            .peek()
            .map(|Reverse(at)| (*at).max(jobs_woken_at + JOB_WAKE_SPACING));
        let Some(at) = earlier(job, chore) else {
            runner.scheduler_rests(Some(Rest::Told));
            changed.await;
            runner.scheduler_rests(None);
            continue;
        };
        let wait = (at - Utc::now()).to_std().unwrap_or_default();
        if !wait.is_zero() {
            runner.scheduler_rests(Some(Rest::Until(at)));
            let told = tokio::select! {
                _ = tokio::time::sleep(wait) => false,
                _ = &mut changed => true,
            };
            runner.scheduler_rests(None);
            if told {
                continue;
            }
        }
        runner.wakeups.fetch_add(1, Ordering::SeqCst);
        let now = Utc::now();
        let mut told = 0;
        while jobs.peek().is_some_and(|Reverse(at)| *at <= now) {
            jobs.pop();
            told += 1;
        }
        if told > 0 {
            jobs_woken_at = now;
            runner.owe(jobs_due_now(&state, &runner, told as i64).await);
        }
        // The chores' next time changes only when chores run: anything
        // filed meanwhile was announced.
        if chore.is_some_and(|at| at <= now) {
            if let Err(e) = engine::expire_overdue(&state.pool).await {
                tracing::warn!(error = %e, "expiring requests failed");
            }
            if let Err(e) = nudge(&state).await {
                tracing::warn!(error = %e, "reminding approvers failed");
            }
            chore = next_chore_due(&state).await;
        }
    }
}

/// A second from now: when to look again at what could not be read, or at
/// a chore still due (more than one batch of expiries, or a reminder that
/// failed), rather than at once.
fn soon() -> DateTime<Utc> {
    Utc::now() + Duration::seconds(1)
}

async fn next_job_due(state: &AppState) -> Option<DateTime<Utc>> {
    store::next_job_due(&state.pool).await.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "reading the next job's due time failed");
        Some(soon())
    })
}

/// How many jobs are due now, up to `at_most` (the jobs this process was
/// told of: one that ran meanwhile, in another process, is owed no claim);
/// when the database can't be read, as many as there are workers (each
/// claim retries until it can).
async fn jobs_due_now(state: &AppState, runner: &Runner, at_most: i64) -> usize {
    match store::jobs_due_now(&state.pool, at_most).await {
        Ok(due) => due as usize,
        Err(e) => {
            tracing::warn!(error = %e, "counting the due jobs failed");
            runner.workers
        }
    }
}

async fn next_chore_due(state: &AppState) -> Option<DateTime<Utc>> {
    match store::next_chore_due(&state.pool).await {
        Ok(at) => at.map(|at| if at <= Utc::now() { soon() } else { at }),
        Err(e) => {
            tracing::warn!(error = %e, "reading the next reminder or expiry failed");
            Some(soon())
        }
    }
}

/// Requests waiting past their policy's reminder time remind their
/// approvers in the app, once; past the escalation time the backup role is
/// told it may now approve.
pub async fn nudge(state: &AppState) -> Result<(), ApprovalError> {
    for what in [store::Nudge::Reminder, store::Nudge::Escalation] {
        for (id, tenant) in store::due_for(&state.pool, what).await? {
            let Some(request) = store::find(&state.pool, tenant, id).await? else {
                continue;
            };
            let (action, _) = engine::kind_of(&state.gate, &request)?;
            let policy = engine::policy_of(&state.pool, tenant, action, request.policy_version).await?;
            let members = store::candidates(&state.pool, tenant).await?;
            let (who, message): (Vec<Uuid>, String) = match what {
                store::Nudge::Reminder => (
                    members
                        .eligible(&policy, action.quorum(), &request.filed())
                        .iter()
                        .map(|m| m.user_id)
                        .collect(),
                    format!("Reminder: still waiting for your approval: {}", request.summary),
                ),
                store::Nudge::Escalation => (
                    members
                        .members
                        .iter()
                        .filter(|m| Some(m.role_name.as_str()) == policy.escalation_role.as_deref())
                        .filter(|m| m.user_id != request.requested_by)
                        .map(|m| m.user_id)
                        .collect(),
                    format!("Escalated to you: you may now approve {}", request.summary),
                ),
            };
            let mut tx = state.pool.begin().await?;
            if !store::claim_nudge(&mut *tx, id, what).await? {
                continue;
            }
            store::notify(&mut *tx, &who, tenant, id, &message).await?;
            let label = match what {
                store::Nudge::Reminder => "reminded",
                store::Nudge::Escalation => "escalated",
            };
            store::add_timeline(&mut *tx, id, label, "").await?;
            tx.commit().await?;
        }
    }
    Ok(())
}

/// Takes due jobs and runs them at once, each under its job's row lock,
/// held until all have run; how many it took (0: none is due, or another
/// runner holds them).
async fn run_due(state: &AppState, take: Take) -> Result<usize, sqlx::Error> {
    let mut tx = state.pool.begin().await?;
    let jobs = store::claim_jobs(&mut *tx, take).await?;
    if jobs.is_empty() {
        return Ok(0);
    }
    let ids: Vec<Uuid> = jobs.iter().filter_map(|j| j.request_id).collect();
    let mut requests = store::find_many(&mut *tx, None, &ids).await?;
    // Failing, the claim is given up whole (its jobs stay due, untouched)
    // and made again later, as when the claim itself fails.
    engine::start_executing(&state.pool, requests.values_mut()).await?;
    let runs = jobs.iter().map(|job| {
        let request = job.request_id.and_then(|id| requests.remove(&id));
        run_job(state, job, request)
    });
    let settled = futures_util::future::join_all(runs).await;
    store::settle_jobs(&mut *tx, &settled).await?;
    tx.commit().await?;
    Ok(jobs.len())
}

/// Runs one claimed job; how it leaves the job.
async fn run_job(state: &AppState, job: &Claimed, request: Option<ActionRequest>) -> Settled {
    let connection = job.connection_id.zip(job.connection_updated_at);
    let result = match request {
        Some(request) => run(state, request, connection).await,
        None => Ok(Ran::Done),
    };
    let settled = |done, after, attempts, error| Settled {
        job: job.id,
        done,
        after,
        attempts,
        error,
    };
    match result {
        Ok(Ran::Done) => settled(true, None, job.attempts + 1, None),
        // A run that got on counts no failure: `attempts` counts failed
        // runs in a row, so a payout read back many times on the rail is
        // not given up on at its first failed read.
        Ok(Ran::Again(after)) => settled(false, Some(after), 0, None),
        Err(e) if job.attempts + 1 >= MAX_ATTEMPTS => {
            let reason = format!("gave up after {MAX_ATTEMPTS} attempts: {e}");
            if let Some(request_id) = job.request_id {
                if let Err(e) = give_up(state, request_id, &reason).await {
                    tracing::error!(error = %e, %request_id, "marking the request failed failed");
                }
            }
            settled(true, None, job.attempts + 1, Some(reason))
        }
        Err(e) => {
            tracing::warn!(error = %e, request_id = ?job.request_id, "job failed; will retry");
            let backoff = StdDuration::from_secs(60.min(1 << job.attempts.clamp(0, 6)));
            settled(false, Some(backoff), job.attempts + 1, Some(e.to_string()))
        }
    }
}

/// Runs one approved request now, in the caller's task, instead of
/// waiting for the runner: for actions approved at filing, so the member
/// sees the outcome on the next page. It takes the job as the runner
/// would (the same row lock), so the action still runs exactly once.
pub async fn run_now(state: &AppState, request_id: Uuid) -> Result<(), sqlx::Error> {
    let job: Option<i64> = sqlx::query_scalar!(
        "SELECT id FROM jobs WHERE request_id = $1 AND done_at IS NULL",
        request_id
    )
    .fetch_optional(&state.pool)
    .await?;
    let Some(job) = job else {
        return Ok(());
    };
    // A run that asks to go again at once (a fresh quote) is given a few
    // tries here; anything slower is left to the runner.
    for _ in 0..3 {
        if run_due(state, Take::Only(job)).await? == 0 {
            break;
        }
    }
    Ok(())
}

/// How submitting an action ended.
pub enum Submitted {
    /// Filed; waits for approvals.
    Waiting(Uuid),
    /// Below the policy's threshold: run at once through the same gate;
    /// the request as it stands after the run.
    Ran(Box<ActionRequest>),
}

/// Files an action and, when the policy lets it run at once, runs it.
pub async fn submit<A: Action>(
    state: &AppState,
    member: &Member,
    filing: Filing<'_, A::Payload>,
) -> Result<Submitted, ApprovalError> {
    match engine::file::<A>(state, member, filing).await? {
        FiledAs::Waiting(id) => Ok(Submitted::Waiting(id)),
        FiledAs::Approved(id) => {
            run_now(state, id).await?;
            let request = store::find(&state.pool, member.tenant_id, id)
                .await?
                .ok_or(ApprovalError::NotFound)?;
            Ok(Submitted::Ran(Box::new(request)))
        }
    }
}

/// Where a member's money action stands after they asked for it.
pub enum Gated {
    /// Not confirmed yet: what will happen, for the confirmation page.
    Confirm(engine::Preview),
    /// Waits for approval, or is still being carried out: its request (or
    /// the same one already waiting), whose page shows how it goes.
    Waiting(Uuid),
    /// Ran at once and succeeded: the request as it ended.
    Done(Box<ActionRequest>),
}

/// The one way a member's action enters the gate from a page: previewed
/// until confirmed, then filed, and run at once when the policy lets it.
/// A refusal (or a run that failed) comes back in the user's terms.
pub async fn gate<A: Action>(
    state: &AppState,
    member: &Member,
    filing: Filing<'_, A::Payload>,
    confirmed: bool,
) -> Result<Gated, Failure> {
    let outcome = if confirmed {
        submit::<A>(state, member, filing).await.map(|s| match s {
            Submitted::Waiting(id) => Gated::Waiting(id),
            Submitted::Ran(request) => Gated::Done(request),
        })
    } else {
        engine::preview::<A>(state, member, &filing)
            .await
            .map(Gated::Confirm)
    };
    match outcome {
        Ok(Gated::Done(request)) if request.status == RequestStatus::Failed => Err(Refusal::form(
            request
                .failure_reason
                .unwrap_or_else(|| "The payments service refused it; nothing moved.".to_owned()),
        )
        .into()),
        // Still running (the job runner took it first): its page shows how it goes.
        Ok(Gated::Done(request)) if request.status != RequestStatus::Executed => {
            Ok(Gated::Waiting(request.id))
        }
        Ok(gated) => Ok(gated),
        Err(ApprovalError::Duplicate(existing)) => Ok(Gated::Waiting(existing)),
        Err(ApprovalError::Db(e)) => Err(e.into()),
        Err(e) => Err(Refusal::form(e.to_string()).into()),
    }
}

async fn give_up(state: &AppState, request_id: Uuid, reason: &str) -> Result<(), ApprovalError> {
    let tenant: Option<Uuid> =
        sqlx::query_scalar!("SELECT tenant_id FROM action_requests WHERE id = $1", request_id)
            .fetch_optional(&state.pool)
            .await?;
    let Some(tenant) = tenant else {
        return Ok(());
    };
    finish(state, tenant, request_id, Ended::Failed(reason.to_owned())).await
}

enum Ended {
    Executed(String),
    Failed(String),
}

/// Ends a running request with its final outcome, told to the requester
/// and the approvers.
async fn finish(state: &AppState, tenant: Uuid, request_id: Uuid, ended: Ended) -> Result<(), ApprovalError> {
    let mut tx = state.pool.begin().await?;
    let request = store::lock(&mut tx, tenant, request_id)
        .await?
        .ok_or(ApprovalError::NotFound)?;
    if !matches!(request.status, RequestStatus::Approved | RequestStatus::Executing) {
        return Ok(());
    }
    let change = match ended {
        Ended::Executed(detail) => Change {
            to: RequestStatus::Executed,
            what: "carried out",
            notify: Notify::RequesterAndApprovers(format!("Carried out: {}. {detail}", request.summary)),
            audit: (
                gate_actor(),
                Event::ApprovalsExecuted,
                json!({"detail": detail, "reference": request.upstream_reference}),
            ),
            detail,
            failure: None,
        },
        Ended::Failed(reason) => Change {
            to: RequestStatus::Failed,
            what: "failed",
            notify: Notify::RequesterAndApprovers(format!("Failed: {}. {reason}", request.summary)),
            audit: (
                gate_actor(),
                Event::ApprovalsFailed,
                json!({"reason": reason, "reference": request.upstream_reference}),
            ),
            detail: reason.clone(),
            failure: Some(reason),
        },
    };
    engine::transition(&mut tx, &request, change).await?;
    tx.commit().await?;
    Ok(())
}

async fn run(
    state: &AppState,
    request: ActionRequest,
    connection: Option<(Uuid, DateTime<Utc>)>,
) -> Result<Ran, RunError> {
    let tenant = request.tenant_id;
    if !matches!(request.status, RequestStatus::Approved | RequestStatus::Executing) {
        return Ok(Ran::Done);
    }
    // Still approved: something else moved it after the claim read it,
    // which nothing but a run should; the next run reads it again.
    if request.status == RequestStatus::Approved {
        return Err(ExecError::Internal(format!(
            "request {} was no longer approved when its run began",
            request.id
        ))
        .into());
    }
    let (action, _) = engine::kind_of(&state.gate, &request)?;
    let client = if !action.needs_upstream() {
        None
    } else {
        let client = match connection {
            Some(connection) => {
                state
                    .upstreams
                    .for_connection(
                        &state.pool,
                        &state.key,
                        &state.audit,
                        tenant,
                        connection,
                        gate_actor(),
                    )
                    .await
            }
            None => Err(PortalError::NoConnection),
        };
        match client {
            Ok(c) => Some(c),
            Err(PortalError::NoConnection) => {
                let reason = "the tenant no longer has an API connection".to_owned();
                finish(state, tenant, request.id, Ended::Failed(reason)).await?;
                return Ok(Ran::Done);
            }
            Err(e) => return Err(e.into()),
        }
    };
    let policy = engine::policy_of(&state.pool, tenant, action, request.policy_version).await?;
    let step = match action.execute(state, client.as_ref(), &request, &policy).await {
        Ok(step) => step,
        // The service refused: nothing moved, and asking again won't help.
        Err(ExecError::Api(
            e @ ApiError::Problem {
                status: 400..=499, ..
            },
        )) => ErasedStep::Failed(describe_upstream(&e).0),
        Err(e) => return Err(e.into()),
    };
    match step {
        ErasedStep::Done(detail) => finish(state, tenant, request.id, Ended::Executed(detail)).await?,
        ErasedStep::Failed(reason) => finish(state, tenant, request.id, Ended::Failed(reason)).await?,
        ErasedStep::Again(after) => return Ok(Ran::Again(after)),
        ErasedStep::SendBack { payload, why } => send_back(state, &request, payload, why).await?,
    }
    Ok(Ran::Done)
}

/// The approved terms can't be kept: the request goes back for approval
/// with its new payload and digest; the approvals given are void.
async fn send_back(
    state: &AppState,
    request: &ActionRequest,
    payload: serde_json::Value,
    why: String,
) -> Result<(), ApprovalError> {
    let (action, kind) = engine::kind_of(&state.gate, request)?;
    let facts = action
        .describe(&payload)
        .map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
    let digest = action::digest(kind, &facts, &payload);
    let policy = engine::policy_of(&state.pool, request.tenant_id, action, request.policy_version).await?;
    let members = store::candidates(&state.pool, request.tenant_id).await?;
    let approvers: Vec<Uuid> = members
        .eligible(&policy, action.quorum(), &request.filed())
        .iter()
        .map(|m| m.user_id)
        .collect();
    let mut tx = state.pool.begin().await?;
    let request = store::lock(&mut tx, request.tenant_id, request.id)
        .await?
        .ok_or(ApprovalError::NotFound)?;
    let expires_at = Utc::now() + Duration::seconds(policy.expires_after_secs as i64);
    store::replace_payload(&mut *tx, request.id, &payload, &digest, expires_at).await?;
    store::announce(&mut *tx, policy.first_due(request.created_at).min(expires_at)).await?;
    store::clear_decisions(&mut *tx, request.id).await?;
    store::notify(
        &mut *tx,
        &[request.requested_by],
        request.tenant_id,
        request.id,
        &format!("{why}; your request needs approval again: {}", request.summary),
    )
    .await?;
    engine::transition(
        &mut tx,
        &request,
        Change {
            to: RequestStatus::Pending,
            what: "back for approval",
            detail: why.clone(),
            failure: None,
            notify: Notify::Users(
                approvers,
                format!("Needs your approval again ({why}): {}", request.summary),
            ),
            audit: (
                gate_actor(),
                Event::ApprovalsSentBack,
                json!({"why": why, "digest": digest}),
            ),
        },
    )
    .await?;
    tx.commit().await?;
    Ok(())
}
