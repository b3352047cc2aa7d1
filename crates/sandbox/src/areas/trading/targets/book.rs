//! The company's target orders, each with its escrow and fill so far. No state here: the company holds this
//! book, and the rules that change it live beside it.

use paydesk_api::models::trading::TargetOrder;
use uuid::Uuid;

use crate::areas::trading::spot::pair::{Pair, Side};
use crate::book::Book;
use crate::error::ApiError;

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct TargetRecord {
    pub order: TargetOrder,
    pub(super) pair: Pair,
    pub(super) side: Side,
    pub(super) escrow_tx: Uuid,
    /// The whole fill's amounts: base units, quote units, fee units
    /// (quote).
    pub(super) fill: (i64, i64, i64),
    /// Base units filled so far, and in how many slices.
    #[serde(default)]
    pub(super) filled_base: i64,
    #[serde(default)]
    pub(super) slices: u32,
    /// Part filled, waiting for the price to come back to the target.
    #[serde(default)]
    pub(super) waiting_for_price: bool,
}

impl crate::book::Record for TargetRecord {
    type Key = Uuid;

    fn key(&self) -> Uuid {
        self.order.id
    }
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct TargetBook {
    pub records: Book<TargetRecord>,
}

impl TargetBook {
    pub fn get(&self, id: Uuid) -> Result<&TargetOrder, ApiError> {
        self.records
            .iter()
            .map(|r| &r.order)
            .find(|o| o.id == id)
            .ok_or_else(|| ApiError::NotFound(format!("no target order {id}")))
    }

    pub(super) fn index(&self, id: Uuid) -> Option<usize> {
        self.records.iter().position(|r| r.order.id == id)
    }
}
