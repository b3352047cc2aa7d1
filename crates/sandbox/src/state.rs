//! The sandbox's state: companies, their API clients, the scheduler and the
//! webhook outbox, behind one lock. Handlers hold the lock only for plain,
//! synchronous work; webhook sending happens after it is released.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, Weak};

use chrono::{DateTime, Utc};
use futures_util::future::join_all;
use paydesk_api::models::identity::Environment;
use paydesk_api::models::transactions::{TransactionState, TransactionType};
use paydesk_api::units::Currency;
use uuid::Uuid;

use crate::areas::beneficiaries::BeneficiaryBook;
use crate::areas::bulk::{schedules as bulk_schedules, BatchBook, BulkScheduleBook};
use crate::areas::cards::{model as cards, CardBook};
use crate::areas::customers::{self, CustomerBook};
use crate::areas::lightning::bolt11::NodeKey;
use crate::areas::lightning::{model as lightning, LightningBook, Node};
use crate::areas::market::Market;
use crate::areas::payouts::{model as payouts, PayoutBook};
use crate::areas::trading::{schedules, spot, targets, ScheduleBook, TargetBook, TradeBook};
use crate::areas::virtual_accounts::VirtualAccountBook;
use crate::areas::withdrawals::{self, WithdrawalBook};
use crate::areas::{addresses::AddressBook, deposits};
use crate::book::{self, Shelf};
use crate::clock::SandboxClock;
use crate::disk::{self, Body, CompanyWrite, Disk, DiskError, Globals, Write};
use crate::error::ApiError;
use crate::faults::Fault;
use crate::fixture::{CompanyFixture, Fixture};
use crate::gatekeeper::NonceCache;
use crate::idempotency::IdempotencyStore;
use crate::journal::Journal;
use crate::ledger::{Ledger, NewTransaction};
use crate::respond::JsonAnswer;
use crate::scheduler::{Job, Scheduler};
use crate::snapshot;
use crate::webhooks::{self, Delivery, Outbox, WebhookTarget};

/// An API client (credential pair) of a company.
#[derive(Clone)]
pub struct ApiClient {
    pub id: Uuid,
    pub secret: String,
    pub name: String,
    pub active: bool,
    pub permissions: Option<Vec<String>>,
    pub environment: Environment,
    pub company_id: Uuid,
}

/// One company workspace and everything it owns.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Company {
    pub id: Uuid,
    pub name: String,
    pub webhook_url: Option<String>,
    /// Signs the company's events: the secret given to `PUT
    /// /sandbox/webhook`, else the fixture's, else the first client's.
    pub webhook_secret: String,
    pub ledger: Ledger,
    pub addresses: AddressBook,
    pub payouts: PayoutBook,
    pub beneficiaries: BeneficiaryBook,
    pub customers: CustomerBook,
    pub cards: CardBook,
    pub withdrawals: WithdrawalBook,
    pub trades: TradeBook,
    pub targets: TargetBook,
    pub schedules: ScheduleBook,
    pub lightning: LightningBook,
    pub batches: BatchBook,
    pub bulk_schedules: BulkScheduleBook,
    pub virtual_accounts: VirtualAccountBook,
    pub idempotency: IdempotencyStore,
    pub faults: Vec<Fault>,
    /// The fixture entry the company was built from (`POST /sandbox/reset`).
    pub origin: CompanyFixture,
}

impl Company {
    /// Runs `op` once per (operation, reference): a repeat with the same
    /// body replays the stored answer, with another body it is a 409; only
    /// a success is stored. An empty reference runs every time.
    pub fn once(
        &mut self,
        operation: &'static str,
        reference: &str,
        canonical_body: &str,
        op: impl FnOnce(&mut Company) -> Result<JsonAnswer, ApiError>,
    ) -> Result<JsonAnswer, ApiError> {
        if reference.is_empty() {
            return op(self);
        }
        if let Some(answer) = self.idempotency.replay(operation, reference, canonical_body)? {
            return Ok(answer);
        }
        let answer = op(self)?;
        self.idempotency
            .save(operation, reference, canonical_body, &answer);
        Ok(answer)
    }

    /// The company's webhook URL (if set) plus any per-resource URLs.
    pub fn webhook_targets(&self, extra_urls: &[&str]) -> Vec<WebhookTarget> {
        self.webhook_url
            .iter()
            .map(String::as_str)
            .chain(extra_urls.iter().copied())
            .map(|url| WebhookTarget {
                url: url.to_owned(),
                secret: self.webhook_secret.clone(),
            })
            .collect()
    }
}

impl Company {
    /// The kinds of records the company's books hold, in the order of
    /// `shelves` (`--data-dir`): a kind's place is part of its rows' ids,
    /// so add new kinds at the end, never reorder.
    pub const KINDS: [&'static str; 16] = [
        "ledger",
        "addresses",
        "payouts",
        "beneficiaries",
        "customers",
        "cards",
        "withdrawals",
        "trade_quotes",
        "trade_orders",
        "target_orders",
        "scheduled_orders",
        "lightning",
        "bulk_transfers",
        "bulk_schedules",
        "virtual_accounts",
        "idempotency",
    ];

    /// Every book of the company, in the order of `KINDS`: each record of
    /// these is its own row; everything else is the company's head row.
    pub fn shelves(&mut self) -> [&mut dyn Shelf; 16] {
        [
            self.ledger.entry_book(),
            &mut self.addresses.records,
            &mut self.payouts.records,
            &mut self.beneficiaries.records,
            &mut self.customers.records,
            &mut self.cards.records,
            &mut self.withdrawals.records,
            &mut self.trades.quotes,
            &mut self.trades.orders,
            &mut self.targets.records,
            &mut self.schedules.records,
            &mut self.lightning.records,
            &mut self.batches.records,
            &mut self.bulk_schedules.records,
            &mut self.virtual_accounts.records,
            self.idempotency.book(),
        ]
    }

    /// Rebuilds what is derived from the records, after they were read
    /// back (from a snapshot or the data directory).
    pub fn reindex(&mut self) {
        self.ledger.reindex();
        self.trades.reindex();
    }
}

impl Company {
    /// A company as its fixture describes it: opening balances recorded as
    /// settled DEPOSIT_CONFIRMED transactions with reference `OPENING_<CUR>`.
    /// `cf.id` is set (the store fills it before calling).
    fn from_fixture(cf: &CompanyFixture, now: DateTime<Utc>) -> Result<Self, ApiError> {
        let mut company = Company {
            id: cf.id.unwrap_or_else(Uuid::new_v4),
            origin: cf.clone(),
            name: cf.name.clone(),
            webhook_url: cf.webhook_url.clone(),
            webhook_secret: cf.webhook_secret.clone().unwrap_or_else(|| {
                cf.clients
                    .first()
                    .map(|c| c.client_secret.clone())
                    .unwrap_or_default()
            }),
            ledger: Ledger::default(),
            addresses: AddressBook::default(),
            payouts: PayoutBook::default(),
            beneficiaries: BeneficiaryBook::default(),
            customers: CustomerBook::default(),
            cards: CardBook::default(),
            withdrawals: WithdrawalBook::default(),
            trades: TradeBook::default(),
            targets: TargetBook::default(),
            schedules: ScheduleBook::default(),
            lightning: LightningBook::default(),
            batches: BatchBook::default(),
            bulk_schedules: BulkScheduleBook::default(),
            virtual_accounts: VirtualAccountBook::default(),
            idempotency: IdempotencyStore::default(),
            faults: Vec::new(),
        };
        for (code, amount) in &cf.balances {
            let currency = Currency::parse(code).map_err(|e| ApiError::invalid(e.to_string()))?;
            company.ledger.open_account(&currency, now);
            if amount.value() > 0 {
                let mut metadata = serde_json::Map::new();
                metadata.insert("deposit_type".into(), "opening_balance".into());
                company.ledger.post(
                    NewTransaction {
                        reference: format!("OPENING_{currency}"),
                        currency,
                        kind: TransactionType::DepositConfirmed,
                        state: TransactionState::Settled,
                        amount: *amount,
                        fee: Default::default(),
                        idempotency_key: String::new(),
                        metadata,
                    },
                    now,
                )?;
            }
        }
        Ok(company)
    }
}

/// What an operation may do besides changing its company: schedule later
/// steps and emit events.
pub struct Effects<'a> {
    pub now: DateTime<Utc>,
    pub market: &'a Market,
    pub scheduler: &'a mut Scheduler,
    pub outbox: &'a mut Outbox,
    pub node: &'a mut Node,
}

pub struct Store {
    pub companies: HashMap<Uuid, Company>,
    /// The one market of this sandbox.
    pub market: Market,
    pub clients: HashMap<Uuid, ApiClient>,
    pub scheduler: Scheduler,
    pub outbox: Outbox,
    /// The sandbox's Lightning node.
    pub node: Node,
    /// Companies changed (or read mutably) since the data directory last
    /// kept them.
    touched: HashSet<Uuid>,
    /// Companies whose every row is to be written anew (reset, restored).
    replaced: HashSet<Uuid>,
    /// Each company's place in the fixture (the data directory's row ids).
    slots: HashMap<Uuid, usize>,
}

impl Store {
    /// Builds the companies of a fixture, recording each opening balance as
    /// a settled DEPOSIT_CONFIRMED transaction with reference `OPENING_<CUR>`.
    pub fn from_fixture(fixture: &Fixture, now: DateTime<Utc>) -> Result<Self, ApiError> {
        let mut store = Store {
            companies: HashMap::new(),
            market: Market::new(now),
            clients: HashMap::new(),
            scheduler: Scheduler::default(),
            outbox: Outbox::default(),
            node: Node::default(),
            touched: HashSet::new(),
            replaced: HashSet::new(),
            slots: HashMap::new(),
        };
        for (slot, cf) in fixture.companies.iter().enumerate() {
            let id = cf.id.unwrap_or_else(Uuid::new_v4);
            store.slots.insert(id, slot);
            let origin = CompanyFixture {
                id: Some(id),
                ..cf.clone()
            };
            let company = Company::from_fixture(&origin, now)?;
            for c in &cf.clients {
                store.clients.insert(
                    c.client_id,
                    ApiClient {
                        id: c.client_id,
                        secret: c.client_secret.clone(),
                        name: c.name.clone(),
                        active: c.active,
                        permissions: c.permissions.clone(),
                        environment: c.environment,
                        company_id: id,
                    },
                );
            }
            store.companies.insert(id, company);
        }
        Ok(store)
    }

    /// A company and the effects its operations may have.
    pub fn company(
        &mut self,
        company_id: Uuid,
        now: DateTime<Utc>,
    ) -> Result<(&mut Company, Effects<'_>), ApiError> {
        if !self.companies.contains_key(&company_id) {
            return Err(ApiError::Unauthorized(
                "the client's company no longer exists".to_owned(),
            ));
        }
        self.mark(company_id);
        let company = self.companies.get_mut(&company_id).expect("checked just above");
        Ok((
            company,
            Effects {
                now,
                market: &self.market,
                scheduler: &mut self.scheduler,
                outbox: &mut self.outbox,
                node: &mut self.node,
            },
        ))
    }

    /// Puts a company back to its fixture state: every record, idempotency
    /// record, fault and pending step of it is dropped; its clients, the
    /// market and the clock stay as they are.
    pub fn reset_company(&mut self, company_id: Uuid, now: DateTime<Utc>) -> Result<(), ApiError> {
        let origin = self
            .companies
            .get(&company_id)
            .map(|c| c.origin.clone())
            .ok_or_else(|| ApiError::Unauthorized("the client's company no longer exists".to_owned()))?;
        let fresh = Company::from_fixture(&origin, now)?;
        self.scheduler.forget_company(company_id);
        self.node.forget_company(company_id);
        self.outbox.clear_faults(company_id);
        self.companies.insert(company_id, fresh);
        self.replace(company_id);
        Ok(())
    }

    /// Marks a company for the data directory to keep.
    pub fn touch(&mut self, company_id: Uuid) {
        self.mark(company_id);
    }

    /// Marks a company whose whole state was replaced: the data directory
    /// writes every row of it anew.
    pub fn replace(&mut self, company_id: Uuid) {
        self.replaced.insert(company_id);
        self.mark(company_id);
    }

    /// Forgets what changed in the touched companies (no data directory).
    fn forget_changes(&mut self) {
        let touched: Vec<Uuid> = self.touched.drain().collect();
        self.replaced.clear();
        for id in touched {
            if let Some(company) = self.companies.get_mut(&id) {
                for shelf in company.shelves() {
                    shelf.forget_changes();
                }
            }
        }
    }

    /// What the data directory is to write of a touched company: its head
    /// row and its changed records; forgets the changes.
    fn company_write(&mut self, id: Uuid) -> Result<Option<CompanyWrite>, DiskError> {
        let replaced = self.replaced.remove(&id);
        let Some(company) = self.companies.get_mut(&id) else {
            return Ok(None);
        };
        let mut rows = Vec::new();
        let mut changes = Vec::new();
        let mut failed = None;
        for (kind, shelf) in company.shelves().into_iter().enumerate() {
            if replaced {
                shelf.mark_all();
            }
            if let Err(e) = shelf.take_changes(&mut changes) {
                failed = Some(format!("a record of kind {kind}: {e}"));
                break;
            }
            rows.extend(changes.drain(..).map(|c| (kind, c)));
        }
        if let Some(e) = failed {
            // The changes taken are dropped: the next keep writes the
            // company whole.
            self.replace(id);
            return Err(DiskError::Unreadable(e));
        }
        // A head's `taken_at` is never read back: a fixed one lets a head
        // that did not change compare equal to the one kept (`keep_all`).
        let mut head = Vec::new();
        book::with_books_elided(|| {
            let view = self.view(id, DateTime::UNIX_EPOCH)?;
            disk::encode(&view, &mut head).map_err(|e| ApiError::invalid(e.to_string()))
        })
        .map_err(|e| DiskError::Unreadable(format!("the company's head: {e}")))?;
        Ok(Some(CompanyWrite {
            id,
            slot: self.slots.get(&id).copied().unwrap_or_default(),
            replaced,
            head: Some(head),
            rows,
        }))
    }

    fn mark(&mut self, company_id: Uuid) {
        self.touched.insert(company_id);
    }

    /// A kept head row (or an older format's whole document) of one of
    /// the fixture's companies, as a snapshot.
    fn read_kept(&self, head: &Body) -> Result<snapshot::Snapshot, DiskError> {
        let lacking = || DiskError::Unreadable("a company the fixture lacks".to_owned());
        match head {
            Body::Packed(_) => {
                let snapshot: snapshot::Snapshot = head
                    .decode()
                    .map_err(|e| DiskError::Unreadable(format!("a company's head: {e}")))?;
                if !self.companies.contains_key(&snapshot.company_id) {
                    return Err(lacking());
                }
                Ok(snapshot)
            }
            Body::Json(text) => {
                let value: serde_json::Value =
                    serde_json::from_str(text).map_err(|e| DiskError::Unreadable(e.to_string()))?;
                let id = value["company_id"]
                    .as_str()
                    .and_then(|id| Uuid::parse_str(id).ok())
                    .filter(|id| self.companies.contains_key(id))
                    .ok_or_else(lacking)?;
                snapshot::parse(value, id).map_err(|e| DiskError::Unreadable(e.to_string()))
            }
        }
    }

    /// Deliveries to send now; held ones get their release jobs.
    pub fn ready_deliveries(&mut self) -> Vec<Delivery> {
        for (at, job) in self.outbox.take_releases() {
            self.scheduler.schedule(at, job);
        }
        self.outbox.take_ready()
    }

    /// A market price moved: target orders it crossed trigger.
    pub fn prices_moved(&mut self, now: DateTime<Utc>) {
        let Store {
            companies,
            market,
            scheduler,
            ..
        } = self;
        for company in companies.values_mut() {
            targets::check_triggers(company, market, scheduler, now);
            spot::fill_resting(company, market, now);
        }
        let ids: Vec<Uuid> = self.companies.keys().copied().collect();
        ids.into_iter().for_each(|id| self.mark(id));
    }

    /// Runs one due job.
    fn run_job(&mut self, job: Job, now: DateTime<Utc>) {
        match job {
            Job::ConfirmDeposit {
                company_id,
                transaction_id,
            } => {
                if let Ok((company, mut fx)) = self.company(company_id, now) {
                    deposits::confirm(company, transaction_id, &mut fx);
                }
            }
            Job::RetryDelivery { delivery_id } => self.outbox.mark_ready(delivery_id),
            Job::ReleaseDelivery { delivery_id } => self.outbox.release(delivery_id),
            Job::PayoutRail {
                company_id,
                payout_id,
            } => {
                if let Ok((company, mut fx)) = self.company(company_id, now) {
                    payouts::advance_rail(company, payout_id, &mut fx);
                }
            }
            Job::PayoutExpiry {
                company_id,
                payout_id,
            } => {
                if let Ok((company, mut fx)) = self.company(company_id, now) {
                    payouts::expire(company, payout_id, &mut fx);
                }
            }
            Job::ReviewKyc {
                company_id,
                customer_id,
            } => {
                if let Ok((company, _)) = self.company(company_id, now) {
                    customers::review_kyc(company, customer_id, now);
                }
            }
            Job::ProvisionCard { company_id, card_id } => {
                if let Ok((company, mut fx)) = self.company(company_id, now) {
                    cards::provision(company, card_id, &mut fx);
                }
            }
            Job::SettleCardTransfer {
                company_id,
                card_id,
                transaction_id,
            } => {
                if let Ok((company, mut fx)) = self.company(company_id, now) {
                    cards::settle_transfer(company, card_id, transaction_id, &mut fx);
                }
            }
            Job::AdvanceWithdrawal {
                company_id,
                withdrawal_id,
            } => {
                if let Ok((company, mut fx)) = self.company(company_id, now) {
                    withdrawals::advance(company, withdrawal_id, &mut fx);
                }
            }
            Job::FillTargetOrder { company_id, order_id } => {
                if let Ok((company, mut fx)) = self.company(company_id, now) {
                    targets::fill(company, order_id, &mut fx);
                }
            }
            Job::ExpireTargetOrder { company_id, order_id } => {
                if let Ok((company, _)) = self.company(company_id, now) {
                    targets::expire(company, order_id, now);
                }
            }
            Job::ExpireInvoice {
                company_id,
                invoice_id,
            } => {
                if let Ok((company, _)) = self.company(company_id, now) {
                    lightning::expire(company, invoice_id, now);
                }
            }
            Job::SettleHeldPayment {
                company_id,
                payment_id,
            } => {
                self.touch(company_id);
                lightning::settle_held(self, company_id, payment_id, now);
            }
            Job::BulkScheduleTick {
                company_id,
                schedule_id,
                generation,
            } => {
                if let Ok((company, mut fx)) = self.company(company_id, now) {
                    bulk_schedules::tick(company, schedule_id, generation, &mut fx);
                }
            }
            Job::ScheduleTick {
                company_id,
                schedule_id,
                generation,
            } => {
                if let Ok((company, mut fx)) = self.company(company_id, now) {
                    schedules::tick(company, schedule_id, generation, &mut fx);
                }
            }
            Job::EndLiteCard { company_id, card_id } => {
                if let Ok((company, _)) = self.company(company_id, now) {
                    cards::end_lite(company, card_id, now);
                }
            }
        }
    }
}

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
    pub async fn advance(&self, seconds: i64) -> DateTime<Utc> {
        let target = self.clock.now() + chrono::Duration::seconds(seconds);
        self.run_due(target).await;
        self.clock.now()
    }

    /// Runs jobs due up to `until` and sends the deliveries they produce;
    /// leaves the clock at `until` at least.
    pub async fn run_due(&self, until: DateTime<Utc>) {
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
                    store.run_job(job, self.clock.now());
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
