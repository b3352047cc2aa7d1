//! The sandbox's state: companies, their API clients, the scheduler and the
//! webhook outbox, behind one lock. Handlers hold the lock only for plain,
//! synchronous work; webhook sending happens after it is released.

mod shared;
mod store;

use chrono::{DateTime, Utc};
use paydesk_api::models::identity::Environment;
use paydesk_api::models::transactions::{TransactionState, TransactionType};
use paydesk_api::units::Currency;
use uuid::Uuid;

// Each area's book from its own file, which imports no state: the areas'
// rules take the company, never the other way round.
use crate::areas::addresses::book::AddressBook;
use crate::areas::beneficiaries::book::BeneficiaryBook;
use crate::areas::bulk::book::BatchBook;
use crate::areas::bulk::schedule_book::BulkScheduleBook;
use crate::areas::cards::book::CardBook;
use crate::areas::customers::book::CustomerBook;
use crate::areas::lightning::book::{LightningBook, Node};
use crate::areas::market::prices::Market;
use crate::areas::payouts::book::PayoutBook;
use crate::areas::trading::schedule_book::ScheduleBook;
use crate::areas::trading::spot::book::TradeBook;
use crate::areas::trading::targets::book::TargetBook;
use crate::areas::virtual_accounts::book::VirtualAccountBook;
use crate::areas::withdrawals::book::WithdrawalBook;
use crate::book::Shelf;
use crate::error::ApiError;
use crate::faults::Fault;
use crate::fixture::CompanyFixture;
use crate::idempotency::IdempotencyStore;
use crate::ledger::{Ledger, NewTransaction};
use crate::respond::JsonAnswer;
use crate::scheduler::Scheduler;
use crate::webhooks::{Outbox, WebhookTarget};

pub use shared::{Options, RunJob, Shared, StartError};
pub use store::Store;

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
