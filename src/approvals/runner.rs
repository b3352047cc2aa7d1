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

use super::chores::{expire_overdue, nudge};
use super::running::run_due;
use super::store::{self, Take};
use crate::state::AppState;
use actix_web::web::Data;
use chrono::{DateTime, Duration, Utc};
use sqlx::postgres::PgListener;
use sqlx::PgPool;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration as StdDuration;
use tokio::sync::Notify as Wake;

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
            if let Err(e) = expire_overdue(&state.pool).await {
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
