//! The companies, their clients and what they share (the market, the
//! scheduler, the webhook outbox, the Lightning node), and which companies
//! changed since the data directory last kept them.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{ApiClient, Company, Effects};
use crate::areas::lightning::book::Node;
use crate::areas::market::prices::Market;
use crate::book;
use crate::disk::{self, Body, CompanyWrite, DiskError};
use crate::error::ApiError;
use crate::fixture::{CompanyFixture, Fixture};
use crate::scheduler::Scheduler;
use crate::snapshot;
use crate::webhooks::{Delivery, Outbox};

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
    pub(super) touched: HashSet<Uuid>,
    /// Companies whose every row is to be written anew (reset, restored).
    pub(super) replaced: HashSet<Uuid>,
    /// Each company's place in the fixture (the data directory's row ids).
    pub(super) slots: HashMap<Uuid, usize>,
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
    pub(super) fn forget_changes(&mut self) {
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
    pub(super) fn company_write(&mut self, id: Uuid) -> Result<Option<CompanyWrite>, DiskError> {
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

    pub(super) fn mark(&mut self, company_id: Uuid) {
        self.touched.insert(company_id);
    }

    /// A kept head row (or an older format's whole document) of one of
    /// the fixture's companies, as a snapshot.
    pub(super) fn read_kept(&self, head: &Body) -> Result<snapshot::Snapshot, DiskError> {
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
}
