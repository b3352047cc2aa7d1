//! The company's Lightning records (its invoices and its outgoing
//! payments) and the sandbox's node, which knows where each invoice lives.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use paydesk_api::models::lightning::{Invoice, InvoicePage};
use uuid::Uuid;

use super::bolt11::NodeKey;
use crate::book::Book;
use crate::error::ApiError;

/// The sandbox's node: its key and where each of its invoices lives.
#[derive(Debug)]
pub struct Node {
    pub key: NodeKey,
    pub(super) by_hash: HashMap<String, (Uuid, Uuid)>,
}

impl Node {
    /// Forgets a company's invoices (its state was reset).
    pub fn forget_company(&mut self, company_id: Uuid) {
        self.by_hash.retain(|_, (company, _)| *company != company_id);
    }

    /// Routes to a company's invoices again (its state was restored).
    pub fn learn_company(&mut self, company_id: Uuid, book: &LightningBook) {
        for r in book.records.iter().filter(|r| r.invoice.direction == "incoming") {
            self.by_hash
                .insert(r.invoice.payment_hash.clone(), (company_id, r.invoice.id));
        }
    }
}

impl Default for Node {
    fn default() -> Self {
        Node {
            key: NodeKey::generate(),
            by_hash: HashMap::new(),
        }
    }
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Record {
    pub(super) invoice: Invoice,
    pub(super) preimage: String,
    pub(super) expires: DateTime<Utc>,
    pub(super) settled_at: Option<DateTime<Utc>>,
    pub(super) transaction_id: Option<Uuid>,
}

impl crate::book::Record for Record {
    type Key = Uuid;

    fn key(&self) -> Uuid {
        self.invoice.id
    }
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct LightningBook {
    pub(crate) records: Book<Record>,
}

impl LightningBook {
    pub(super) fn index(&self, id: Uuid) -> Option<usize> {
        self.records.iter().position(|r| r.invoice.id == id)
    }

    pub(super) fn incoming_by_hash(&self, hash: &str) -> Option<usize> {
        self.records
            .iter()
            .position(|r| r.invoice.direction == "incoming" && r.invoice.payment_hash == hash)
    }

    /// A record as get and list show it: `expires_at` in Unix seconds.
    pub(super) fn shown(r: &Record) -> Invoice {
        let mut i = r.invoice.clone();
        i.expires_at = r.expires.timestamp().to_string();
        i
    }

    pub fn get(&self, id: Uuid) -> Result<Invoice, ApiError> {
        self.index(id)
            .map(|i| Self::shown(&self.records[i]))
            .ok_or_else(|| ApiError::NotFound(format!("no invoice {id}")))
    }

    pub fn page(&self, page: u32, size: u32, status: Option<&str>, direction: Option<&str>) -> InvoicePage {
        let matching: Vec<&Record> = self
            .records
            .iter()
            .rev()
            .filter(|r| status.is_none_or(|s| r.invoice.status.as_str() == s))
            .filter(|r| direction.is_none_or(|d| r.invoice.direction == d))
            .collect();
        let start = (u64::from(page) - 1).saturating_mul(u64::from(size)) as usize;
        InvoicePage {
            total_count: matching.len().to_string(),
            invoices: matching
                .iter()
                .skip(start)
                .take(size as usize)
                .map(|r| Self::shown(r))
                .collect(),
            page,
            page_size: size,
        }
    }
}
