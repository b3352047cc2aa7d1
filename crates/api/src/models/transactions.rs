use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::units::{BaseUnits, Currency};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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

impl TransactionType {
    pub const ALL: &'static [TransactionType] = &[
        Self::DepositConfirmed,
        Self::DepositDetected,
        Self::DepositPending,
        Self::WithdrawalInitiated,
        Self::WithdrawalFailed,
        Self::P2pTransfer,
        Self::SwapInternal,
        Self::FxRebalancing,
        Self::FeeOnly,
        Self::Reversal,
    ];

    /// The wire name, e.g. `DEPOSIT_CONFIRMED`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::DepositConfirmed => "DEPOSIT_CONFIRMED",
            Self::DepositDetected => "DEPOSIT_DETECTED",
            Self::DepositPending => "DEPOSIT_PENDING",
            Self::WithdrawalInitiated => "WITHDRAWAL_INITIATED",
            Self::WithdrawalFailed => "WITHDRAWAL_FAILED",
            Self::P2pTransfer => "P2P_TRANSFER",
            Self::SwapInternal => "SWAP_INTERNAL",
            Self::FxRebalancing => "FX_REBALANCING",
            Self::FeeOnly => "FEE_ONLY",
            Self::Reversal => "REVERSAL",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL
            .iter()
            .copied()
            .find(|t| t.as_str().eq_ignore_ascii_case(s))
    }
}

impl std::fmt::Display for TransactionType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TransactionState {
    Pending,
    InProgress,
    Settled,
    Failed,
    Reversed,
}

impl TransactionState {
    pub const ALL: &'static [TransactionState] = &[
        Self::Pending,
        Self::InProgress,
        Self::Settled,
        Self::Failed,
        Self::Reversed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "PENDING",
            Self::InProgress => "IN_PROGRESS",
            Self::Settled => "SETTLED",
            Self::Failed => "FAILED",
            Self::Reversed => "REVERSED",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL
            .iter()
            .copied()
            .find(|t| t.as_str().eq_ignore_ascii_case(s))
    }

    /// SETTLED, FAILED and REVERSED never change afterwards.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Settled | Self::Failed | Self::Reversed)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = TransactionSide))]
pub enum Side {
    Credit,
    Debit,
}

/// One ledger movement. `amount` is negative for debits.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
    #[serde(with = "crate::time::millis")]
    pub created_at: DateTime<Utc>,
    #[serde(with = "crate::time::millis")]
    pub updated_at: DateTime<Utc>,
    pub value_date: NaiveDate,
    pub amount_formatted: String,
    pub fee_formatted: String,
    pub side: Side,
}

impl std::fmt::Display for TransactionState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
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
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TransactionPage {
    pub transactions: Vec<Transaction>,
    pub next_cursor: String,
    pub previous_cursor: String,
    pub total_count: u64,
    pub has_more: bool,
}
