//! The cards' records: each card with its secrets, its rate-limit marks
//! and its transactions, in the company's card book.

use chrono::{DateTime, Utc};
use paydesk_api::models::cards::{Card, CardState, CardTransaction, PageInfo};
use uuid::Uuid;

use crate::book::Book;
use crate::error::ApiError;
use crate::pagination::{paginate, Page, Sequenced};
use crate::respond::At;

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(super) struct TxRecord {
    pub(super) seq: u64,
    pub(super) tx: CardTransaction,
    /// The wallet transaction of a fund, settled or failed with it.
    pub(super) wallet_tx: Option<Uuid>,
}

impl Sequenced for TxRecord {
    fn seq(&self) -> u64 {
        self.seq
    }
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct CardRecord {
    pub(super) seq: u64,
    pub card: Card,
    pub(super) pan: String,
    pub(super) cvv: String,
    pub(super) expiry: (u32, i32),
    pub(super) initial_amount: i64,
    pub(super) last_fund: Option<DateTime<Utc>>,
    pub(super) last_withdraw: Option<DateTime<Utc>>,
    pub(super) secure_reads: Vec<DateTime<Utc>>,
    pub(super) transactions: Vec<TxRecord>,
}

impl Sequenced for CardRecord {
    fn seq(&self) -> u64 {
        self.seq
    }
}

impl CardRecord {
    pub fn transaction(&self, id: Uuid) -> Option<&CardTransaction> {
        self.transactions.iter().map(|r| &r.tx).find(|t| t.id == id)
    }

    /// One page of the card's transactions, newest first.
    pub fn transaction_page(
        &self,
        at: At<'_>,
        limit: usize,
    ) -> Result<(Vec<CardTransaction>, PageInfo), ApiError> {
        let page = paginate(&self.transactions, |_| true, at, limit)?;
        let info = page_info(&page);
        Ok((page.items.into_iter().map(|r| r.tx.clone()).collect(), info))
    }
}

/// The spec's `page_info` of a cursor page.
pub fn page_info<T>(page: &Page<'_, T>) -> PageInfo {
    PageInfo {
        has_next_page: page.has_more,
        has_previous_page: !page.previous_cursor.is_empty(),
        previous_cursor: page.previous_cursor.clone(),
        next_cursor: page.next_cursor.clone(),
        total: page.total as u64,
    }
}

impl crate::book::Record for CardRecord {
    type Key = Uuid;

    fn key(&self) -> Uuid {
        self.card.id
    }
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct CardBook {
    pub(crate) records: Book<CardRecord>,
}

impl CardBook {
    pub fn records(&self) -> &[CardRecord] {
        &self.records
    }

    pub fn get(&self, id: Uuid) -> Result<&CardRecord, ApiError> {
        self.records
            .iter()
            .find(|r| r.card.id == id)
            .ok_or_else(|| ApiError::NotFound(format!("no card {id}")))
    }

    pub(super) fn index(&self, id: Uuid) -> Result<usize, ApiError> {
        self.records
            .iter()
            .position(|r| r.card.id == id)
            .ok_or_else(|| ApiError::NotFound(format!("no card {id}")))
    }

    /// Cards of a customer that are not terminated.
    pub fn live_cards_of(&self, customer_id: Uuid) -> usize {
        self.records
            .iter()
            .filter(|r| r.card.customer_id == customer_id && r.card.status != CardState::Terminated)
            .count()
    }
}
