//! What the server's workers share: the store behind its lock, the clock,
//! the request journal and the keeper thread that writes to the data
//! directory.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, Weak};

use chrono::{DateTime, Utc};
use futures_util::future::join_all;
use uuid::Uuid;

use super::store::Store;
use super::Company;
use crate::areas::lightning::bolt11::NodeKey;
use crate::clock::SandboxClock;
use crate::disk::{Disk, DiskError, Globals, Write};
use crate::error::ApiError;
use crate::fixture::Fixture;
use crate::gatekeeper::NonceCache;
use crate::journal::Journal;
use crate::scheduler::Job;
use crate::webhooks::{self, Delivery};

/// How the sandbox runs, beyond its fixture.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Extra header names that carry the webhook signature too
    /// (`--webhook-signature-header`), for receivers expecting another name.
    pub webhook_signature_headers: Vec<String>,
    /// Keep the state in this directory (`--data-dir`, see `disk.rs`);
    /// without it the state lives in memory only.
    pub data_dir: Option<PathBuf>,
    /// `--repair`: start from a damaged data directory, dropping its
    /// damaged journal records (and those after them) or accepting a store
    /// that lost data, each said in the log; without it such a start is
    /// refused (see `disk.rs`).
    pub repair: bool,
}

/// Why a sandbox could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Fixture(#[from] ApiError),
    #[error(transparent)]
    Disk(#[from] DiskError),
}

/// Everything the server's workers share.
pub struct Shared {
    pub clock: SandboxClock,
    store: Mutex<Store>,
    pub nonces: Mutex<NonceCache>,
    pub journal: Mutex<Journal>,
    http: reqwest::Client,
    options: Options,
    /// Serializes clock advances and scheduler runs, so jobs run in order.
    advancing: tokio::sync::Mutex<()>,
    disk: Option<Disk>,
    /// Serializes writes to the disk, so a later state never lands before
    /// an earlier one, and holds what the last write covered.
    keeping: Mutex<KeptMark>,
    /// Nonces of acknowledged writes waiting for the next keep.
    waiting: Mutex<Waiting>,
    /// The keeper thread's queue (see `keep_write`).
    keeper: OnceLock<KeeperLink>,
}

/// A write waiting for the keeper: its nonce, and where to say it is kept.
struct KeepRequest {
    nonce: Option<(Uuid, String)>,
    done: tokio::sync::oneshot::Sender<Result<(), String>>,
}

/// How long the keeper waits for more writes after the first one, and how
/// many end that wait, before keeping them in one journal frame. Taking
/// only the writes already waiting gave about one write per commit, and
/// most of a commit's cost does not grow with its writes (system calls,
/// SQLite's locks, a 4 KiB page or more written twice, the thread
/// wake-ups); with the journal (`disk.rs`), gathering for half a
/// millisecond measured half the bytes written per quote+order pair and
/// about a tenth less CPU per pair than before both (`bench/README.md`).
/// The wait is well below a pair's latency at that load (p50 about 5 ms).
const GATHER_FOR: std::time::Duration = std::time::Duration::from_micros(500);
const GATHER_UP_TO: usize = 16;

/// Writes handed to the keeper thread. A write wakes the keeper only when
/// it is the first one waiting (the keeper may be idle) or fills the batch
/// (`GATHER_UP_TO`, the keeper may be gathering): waking it for every
/// write (a channel) cost a thread switch per write on both sides, about a
/// sixth of the keeper's CPU (`bench/README.md`).
#[derive(Default)]
struct Handoff {
    queue: Mutex<Queue>,
    arrived: Condvar,
}

#[derive(Default)]
struct Queue {
    requests: Vec<KeepRequest>,
    /// The sandbox is gone: the keeper ends.
    closed: bool,
}

impl Handoff {
    fn queue(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn push(&self, request: KeepRequest) -> Result<(), DiskError> {
        let mut queue = self.queue();
        if queue.closed {
            return Err(DiskError::Interrupted("the keeper stopped".to_owned()));
        }
        queue.requests.push(request);
        let waiting = queue.requests.len();
        drop(queue);
        if waiting == 1 || waiting == GATHER_UP_TO {
            self.arrived.notify_one();
        }
        Ok(())
    }

    /// The next batch: waits for a first write, then up to `GATHER_FOR`
    /// for the batch to fill; None once the sandbox is gone.
    fn take(&self) -> Option<Vec<KeepRequest>> {
        let mut queue = self.queue();
        while queue.requests.is_empty() {
            if queue.closed {
                return None;
            }
            queue = self.arrived.wait(queue).unwrap_or_else(|p| p.into_inner());
        }
        let until = std::time::Instant::now() + GATHER_FOR;
        while queue.requests.len() < GATHER_UP_TO && !queue.closed {
            let left = until.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                break;
            }
            queue = self
                .arrived
                .wait_timeout(queue, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        Some(std::mem::take(&mut queue.requests))
    }
}

/// One end of the handoff. Dropping either (the sandbox's with the sandbox,
/// the keeper's when its thread ends, even by a panic) closes it: the
/// keeper ends, and the writes still waiting and any later one are told
/// the keeper stopped rather than left waiting.
struct KeeperLink(Arc<Handoff>);

impl Drop for KeeperLink {
    fn drop(&mut self) {
        let unanswered = {
            let mut queue = self.0.queue();
            queue.closed = true;
            std::mem::take(&mut queue.requests)
        };
        drop(unanswered);
        self.0.arrived.notify_one();
    }
}

/// The keeper thread: takes the writes waiting (gathering more for up to
/// `GATHER_FOR`), keeps them in one journal frame, answers each; ends when
/// the sandbox is gone.
fn start_keeper(shared: Weak<Shared>) -> KeeperLink {
    let handoff = Arc::new(Handoff::default());
    let batches = KeeperLink(handoff.clone());
    std::thread::Builder::new()
        .name("sandbox-keeper".to_owned())
        .spawn(move || {
            while let Some(mut batch) = batches.0.take() {
                let Some(shared) = shared.upgrade() else {
                    break;
                };
                let nonces = batch.iter_mut().filter_map(|r| r.nonce.take()).collect();
                let result = shared.keep_all(nonces).map_err(|e| e.to_string());
                drop(shared);
                for request in batch {
                    let _ = request.done.send(result.clone());
                }
            }
        })
        .expect("the keeper thread starts");
    KeeperLink(handoff)
}

/// What the data directory holds: the last ticket kept, and the shared
/// state last written (written again only when it changes).
#[derive(Debug, Default)]
struct KeptMark {
    ticket: u64,
    offset_ms: Option<i64>,
    /// The market's change count when last written.
    market_version: Option<u64>,
    /// Each company's head row as last written.
    heads: HashMap<Uuid, Vec<u8>>,
}

/// Runs one due job: the areas' dispatcher (`areas::jobs::run`), handed
/// in by whoever moves the clock, so the state needs no area's code.
pub type RunJob = fn(&mut Store, Job, DateTime<Utc>);

/// Writes waiting to be kept: each takes a ticket after it ran; a keep
/// takes every nonce queued so far, then the state, so a write whose
/// ticket a keep covered is on disk (group commit).
#[derive(Debug, Default)]
struct Waiting {
    nonces: Vec<(Uuid, String, i64)>,
    last_ticket: u64,
}

impl Shared {
    pub fn new(fixture: &Fixture) -> Result<Self, ApiError> {
        Self::with_options(fixture, Options::default()).map_err(|e| match e {
            StartError::Fixture(e) => e,
            StartError::Disk(e) => ApiError::invalid(e.to_string()),
        })
    }

    /// A sandbox from its fixture or, with a data directory that holds
    /// state, from that state (the fixture must be the one it began with).
    pub fn with_options(fixture: &Fixture, options: Options) -> Result<Self, StartError> {
        let clock = SandboxClock::default();
        let mut nonces = NonceCache::default();
        let (store, disk) = match &options.data_dir {
            None => (Store::from_fixture(fixture, clock.now())?, None),
            Some(dir) => {
                let disk = Disk::open(dir, options.repair)?;
                let fixture = disk.settle_fixture(fixture)?;
                let mut store = Store::from_fixture(&fixture, clock.now())?;
                let kept = disk.load(&Company::KINDS, Utc::now().timestamp())?;
                if let Some(g) = kept.globals {
                    clock.resume(g.clock_offset_ms);
                    store.market = serde_json::from_str(&g.market)
                        .map_err(|e| DiskError::Unreadable(format!("the market: {e}")))?;
                    store.node.key = NodeKey::from_secret_hex(&g.node_secret)
                        .ok_or_else(|| DiskError::Unreadable("the Lightning node key".to_owned()))?;
                }
                // Heads with their rows; read from an older format, every
                // company is written anew at the first keep.
                for company in kept.companies {
                    let mut snapshot = store.read_kept(&company.head)?;
                    {
                        let shelves = snapshot.company.shelves();
                        for row in &company.rows {
                            let kind = Company::KINDS.get(row.kind).ok_or_else(|| {
                                DiskError::Unreadable(format!("records of an unknown kind {}", row.kind))
                            })?;
                            shelves[row.kind]
                                .load_row(row.ord, &row.body)
                                .map_err(|e| DiskError::Unreadable(format!("a record of {kind}: {e}")))?;
                        }
                    }
                    let id = snapshot.company_id;
                    store.restore(snapshot);
                    if !kept.legacy {
                        store.replaced.remove(&id);
                    }
                }
                for (client, nonce, expiry) in kept.nonces {
                    nonces.resume(client, nonce, expiry);
                }
                for id in store.companies.keys().copied().collect::<Vec<_>>() {
                    store.touch(id);
                }
                (store, Some(disk))
            }
        };
        let shared = Shared {
            clock,
            store: Mutex::new(store),
            nonces: Mutex::new(nonces),
            journal: Mutex::new(Journal::default()),
            http: reqwest::Client::new(),
            options,
            advancing: tokio::sync::Mutex::new(()),
            disk,
            keeping: Mutex::new(KeptMark::default()),
            waiting: Mutex::new(Waiting::default()),
            keeper: OnceLock::new(),
        };
        shared.keep(None)?;
        Ok(shared)
    }

    /// Whether the state is kept in a data directory.
    pub fn keeps_state(&self) -> bool {
        self.disk.is_some()
    }

    /// With a data directory: keeps the changes since the last keep (the
    /// head and changed records of each company touched, the shared state
    /// when it changed) and the nonces of the writes waiting, in one
    /// journal frame. Called before a write is answered, with its nonce, and
    /// after clock-driven steps ran (`None`). Concurrent writes share one
    /// keep: each takes a ticket after it ran, and a write whose ticket an
    /// earlier keep covered returns at once (group commit).
    pub fn keep(&self, nonce: Option<(Uuid, String)>) -> Result<(), DiskError> {
        self.keep_all(nonce.into_iter().collect())
    }

    /// A write's keep, done by the keeper thread (started at the first
    /// write), which takes every write waiting at once and keeps them in
    /// one journal frame: the worker goes on serving meanwhile, and a busy
    /// sandbox pays for one commit per batch, not per write.
    pub async fn keep_write(this: &Arc<Shared>, nonce: Option<(Uuid, String)>) -> Result<(), DiskError> {
        if this.disk.is_none() {
            return Ok(());
        }
        let keeper = this.keeper.get_or_init(|| start_keeper(Arc::downgrade(this)));
        let (done, kept) = tokio::sync::oneshot::channel();
        keeper.0.push(KeepRequest { nonce, done })?;
        kept.await
            .map_err(|_| DiskError::Interrupted("the keeper stopped".to_owned()))?
            .map_err(DiskError::Interrupted)
    }

    fn keep_all(&self, nonces: Vec<(Uuid, String)>) -> Result<(), DiskError> {
        let Some(disk) = &self.disk else {
            // In memory, nothing keeps the books' changes: forget them, so
            // they don't pile up.
            self.store().forget_changes();
            return Ok(());
        };
        let now_unix = Utc::now().timestamp();
        let ticket = {
            let mut waiting = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
            waiting.last_ticket += 1;
            let expiry = NonceCache::expiry(now_unix);
            waiting
                .nonces
                .extend(nonces.into_iter().map(|(client, n)| (client, n, expiry)));
            waiting.last_ticket
        };
        let mut kept = self.keeping.lock().unwrap_or_else(|p| p.into_inner());
        if kept.ticket >= ticket {
            return Ok(());
        }
        // Every nonce queued up to `covered`, then the state: each of those
        // writes ran before its ticket, so the state holds its change.
        let (nonces, covered) = {
            let mut waiting = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
            (std::mem::take(&mut waiting.nonces), waiting.last_ticket)
        };
        let offset_ms = self.clock.offset_ms();
        let mut write = {
            let mut store = self.store();
            let mut companies = Vec::new();
            let touched: Vec<Uuid> = store.touched.drain().collect();
            for id in touched {
                companies.extend(store.company_write(id)?);
            }
            let market_version = store.market.version();
            let globals = if kept.offset_ms != Some(offset_ms) || kept.market_version != Some(market_version)
            {
                kept.offset_ms = Some(offset_ms);
                kept.market_version = Some(market_version);
                Some(Globals {
                    clock_offset_ms: offset_ms,
                    market: serde_json::to_string(&store.market)
                        .map_err(|e| DiskError::Unreadable(e.to_string()))?,
                    node_secret: store.node.key.secret_hex(),
                })
            } else {
                None
            };
            Write {
                companies,
                globals,
                nonces,
            }
        };
        // A head row is written only when it changed (most writes change
        // records, not what the head holds).
        for company in &mut write.companies {
            if !company.replaced && kept.heads.get(&company.id) == company.head.as_ref() {
                company.head = None;
            } else if let Some(head) = &company.head {
                kept.heads.insert(company.id, head.clone());
            }
        }
        write
            .companies
            .retain(|c| c.replaced || c.head.is_some() || !c.rows.is_empty());
        if !write.companies.is_empty() || write.globals.is_some() || !write.nonces.is_empty() {
            let ids: Vec<Uuid> = write.companies.iter().map(|c| c.id).collect();
            if let Err(e) = disk.keep(write, now_unix) {
                // Not kept: the next keep writes these companies and the
                // shared state whole.
                kept.offset_ms = None;
                let mut store = self.store();
                for id in ids {
                    kept.heads.remove(&id);
                    store.replace(id);
                }
                return Err(e);
            }
        }
        kept.ticket = covered;
        Ok(())
    }

    pub fn journal(&self) -> MutexGuard<'_, Journal> {
        self.journal
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn store(&self) -> MutexGuard<'_, Store> {
        // A panic while holding the lock leaves plain data; carry on with it.
        self.store.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Moves the clock forward by `seconds`, running every job that falls
    /// due on the way, in order, each at its own due time (so chains of
    /// steps complete within one advance).
    pub async fn advance(&self, seconds: i64, run: RunJob) -> DateTime<Utc> {
        let target = self.clock.now() + chrono::Duration::seconds(seconds);
        self.run_due(target, run).await;
        self.clock.now()
    }

    /// Runs jobs due up to `until` (each through `run`) and sends the
    /// deliveries they produce; leaves the clock at `until` at least.
    pub async fn run_due(&self, until: DateTime<Utc>, run: RunJob) {
        let _order = self.advancing.lock().await;
        loop {
            let ready = {
                let mut store = self.store();
                let mut ready = store.ready_deliveries();
                if ready.is_empty() {
                    let Some((at, job)) = store.scheduler.pop_due(until) else {
                        break;
                    };
                    self.clock.advance_to(at);
                    run(&mut store, job, self.clock.now());
                    ready = store.ready_deliveries();
                }
                ready
            };
            self.deliver(ready).await;
        }
        self.clock.advance_to(until);
    }

    /// Sends deliveries that are ready now (events emitted by a request),
    /// and those they let go (an `out_of_order` delivery they overtook).
    pub async fn flush_deliveries(&self) {
        loop {
            let ready = self.store().ready_deliveries();
            if ready.is_empty() {
                break;
            }
            self.deliver(ready).await;
        }
    }

    /// Sends one of a company's deliveries once more, now; the delivery
    /// with that attempt, or None when the company has no such delivery.
    pub async fn resend(&self, company_id: Uuid, delivery_id: u64) -> Option<Delivery> {
        let delivery = self.store().outbox.resend(company_id, delivery_id)?;
        self.deliver(vec![delivery]).await;
        self.store().outbox.get(company_id, delivery_id).cloned()
    }

    async fn deliver(&self, deliveries: Vec<Delivery>) {
        if deliveries.is_empty() {
            return;
        }
        let now = self.clock.now();
        let headers = &self.options.webhook_signature_headers;
        let attempts = join_all(
            deliveries
                .iter()
                .map(|d| webhooks::send(&self.http, d, headers, now)),
        )
        .await;
        let mut store = self.store();
        let Store {
            outbox, scheduler, ..
        } = &mut *store;
        for (delivery, attempt) in deliveries.iter().zip(attempts) {
            outbox.record_attempt(delivery.id, attempt, scheduler);
        }
        outbox.release_overtaken(&deliveries);
    }
}
