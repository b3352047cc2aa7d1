//! On-chain withdrawals (open-paths.md): from the wallet to an outside
//! address, amounts in base units of the currency.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::status::wire_status;
use crate::units::BaseUnits;

wire_status! {
    /// Where an on-chain withdrawal is.
    pub enum WithdrawalStatus {
        Pending = "pending",
        Processing = "processing",
        Completed = "completed",
        Failed = "failed",
    }
}

/// Body of `POST /api/withdrawals`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({"to_address": "0x52908400098527886E0F7030069857D2E4169EE7", "amount": "1000000", "currency": "USDT", "chain": "ethereum", "reference": "withdrawal-0001"})))]
pub struct NewWithdrawal {
    /// `address` is read as the same (the official client's
    /// `POST /api/wallets/transfers` may send it).
    #[serde(alias = "address")]
    pub to_address: String,
    pub amount: BaseUnits,
    pub currency: String,
    /// The address chain name, lowercase (e.g. `ethereum`, `bitcoin`).
    pub chain: String,
    pub reference: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memo: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Withdrawal {
    pub id: Uuid,
    /// The ledger transaction (WITHDRAWAL_INITIATED, then settled, or
    /// WITHDRAWAL_FAILED and reversed).
    pub transaction_id: Uuid,
    pub reference: String,
    pub currency: String,
    pub chain: String,
    pub to_address: String,
    #[serde(default)]
    pub memo: String,
    pub amount: BaseUnits,
    pub fee: BaseUnits,
    pub status: WithdrawalStatus,
    /// Set once broadcast.
    #[serde(default)]
    pub tx_hash: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    #[serde(with = "crate::time::millis")]
    pub created_at: DateTime<Utc>,
    #[serde(with = "crate::time::millis")]
    pub updated_at: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(with = "crate::time::millis_opt")]
    pub completed_at: Option<DateTime<Utc>>,
}

/// The create answer's `data`: the withdrawal, and its destination again
/// as `address`, which the official client reads.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CreatedWithdrawal {
    #[serde(flatten)]
    pub withdrawal: Withdrawal,
    pub address: String,
}

impl CreatedWithdrawal {
    pub fn new(withdrawal: Withdrawal) -> Self {
        CreatedWithdrawal {
            address: withdrawal.to_address.clone(),
            withdrawal,
        }
    }
}

/// `data` of `GET /api/withdrawals`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WithdrawalPage {
    pub withdrawals: Vec<Withdrawal>,
    pub next_cursor: String,
    pub previous_cursor: String,
    pub has_more: bool,
    pub total_count: u64,
}
