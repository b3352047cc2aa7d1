//! The company's payouts, each with its quote's amounts in base units. No state here: the company holds this
//! book, and the rules that change it live beside it.

use std::collections::HashMap;

use paydesk_api::models::payouts::Payout;
use paydesk_api::units::Currency;
use uuid::Uuid;

use crate::book::Book;
use crate::chains::Chain;
use crate::pagination::Sequenced;

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct PayoutRecord {
    pub(super) seq: u64,
    pub payout: Payout,
    pub(super) asset: Currency,
    pub(super) amount_units: i64,
    pub(super) fee_units: i64,
}

impl Sequenced for PayoutRecord {
    fn seq(&self) -> u64 {
        self.seq
    }
}

impl crate::book::Record for PayoutRecord {
    type Key = Uuid;

    fn key(&self) -> Uuid {
        self.payout.id
    }
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct PayoutBook {
    pub(crate) records: Book<PayoutRecord>,
    /// The payout of each quote made since start: a lookup by quote id
    /// (initialize, finalize, a read by either id) is one probe instead of
    /// a scan of every payout. A quote read back from the data directory
    /// is not in it, and is found by the scan.
    #[serde(skip)]
    pub(super) quotes: HashMap<String, Uuid>,
}

impl PayoutBook {
    pub fn records(&self) -> &[PayoutRecord] {
        &self.records
    }

    pub(super) fn add(&mut self, record: PayoutRecord) {
        self.quotes
            .insert(record.payout.quote_id.clone(), record.payout.id);
        self.records.push(record);
    }

    pub(super) fn index_by_quote(&self, quote_id: &str) -> Option<usize> {
        self.quotes
            .get(quote_id)
            .and_then(|id| self.records.position_of(id))
            .or_else(|| self.records.iter().position(|r| r.payout.quote_id == quote_id))
    }

    pub(super) fn index_by_id(&self, id: Uuid) -> Option<usize> {
        self.records.position_of(&id)
    }

    /// A payout by the reference of its quote (and initialize).
    pub fn by_reference(&self, reference: &str) -> Option<&Payout> {
        self.records
            .iter()
            .rev()
            .find(|r| r.payout.reference == reference)
            .map(|r| &r.payout)
    }

    /// The payout whose deposit address `address` is on `chain`.
    pub fn by_deposit_address(&self, chain: Chain, address: &str) -> Option<&Payout> {
        self.records
            .iter()
            .map(|r| &r.payout)
            .find(|p| p.deposit_address.as_deref() == Some(address) && payout_chain(p) == Some(chain))
    }

    /// A payout by its id or its quote id.
    pub fn find(&self, id: Uuid) -> Option<&Payout> {
        self.index_by_id(id)
            .or_else(|| self.index_by_quote(&id.to_string()))
            .map(|i| &self.records[i].payout)
    }
}

/// The chain of an onchain payout (its record names it `CHAIN_TYPE_<NAME>`).
pub(super) fn payout_chain(p: &Payout) -> Option<Chain> {
    p.chain.strip_prefix("CHAIN_TYPE_").and_then(Chain::parse)
}
