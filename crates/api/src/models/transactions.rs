use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::units::{BaseUnits, Currency};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TransactionType {
    DepositConfirmed,
    DepositDetected,
    DepositPending,
    WithdrawalInitiated,
    WithdrawalFailed,
    #[serde(rename = "P2P_TRANSFER")]
    P2pTransfer,
    SwapInternal,
    FxRebalancing,
    FeeOnly,
    Reversal,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TransactionState {
    Pending,
    InProgress,
    Settled,
    Failed,
    Reversed,
}

impl TransactionState {
    /// SETTLED, FAILED and REVERSED never change afterwards.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Settled | Self::Failed | Self::Reversed)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Side {
    Credit,
    Debit,
}

/// One ledger movement. `amount` is negative for debits.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Transaction {
    pub transaction_id: Uuid,
    pub account_number: String,
    pub currency: Currency,
    #[serde(rename = "type")]
    pub kind: TransactionType,
    pub state: TransactionState,
    pub amount: BaseUnits,
    pub fee: BaseUnits,
    pub reference: String,
    #[serde(default)]
    pub idempotency_key: String,
    #[serde(default)]
    pub trade_id: Option<String>,
    #[serde(default)]
    pub metadata: serde_json::Map<String, serde_json::Value>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub value_date: NaiveDate,
    pub amount_formatted: String,
    pub fee_formatted: String,
    pub side: Side,
}

/// Query of `GET /api/transactions`.
#[derive(Debug, Clone, Default)]
pub struct TransactionQuery {
    pub kind: Option<TransactionType>,
    pub status: Option<TransactionState>,
    pub currency: Option<Currency>,
    pub cursor: Option<String>,
    pub limit: Option<u32>,
}

/// `data` of `GET /api/transactions`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TransactionPage {
    pub transactions: Vec<Transaction>,
    pub next_cursor: String,
    pub previous_cursor: String,
    pub total_count: u64,
    pub has_more: bool,
}
