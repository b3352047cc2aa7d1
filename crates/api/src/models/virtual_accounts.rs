//! Virtual accounts (open-paths.md; bodies are ours): NGN bank account
//! numbers issued against a customer; a transfer into one credits the
//! company's NGN balance.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::status::wire_status;
use crate::units::BaseUnits;

wire_status! {
    /// A virtual account's status; the service issues them active.
    pub enum VirtualAccountStatus {
        Active = "active",
    }
}

/// Body of `POST /api/virtual-accounts`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NewVirtualAccount {
    pub customer_id: Uuid,
    #[serde(default)]
    pub reference: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct VirtualAccount {
    pub id: Uuid,
    pub company_id: Uuid,
    pub customer_id: Uuid,
    /// Ten digits.
    pub account_number: String,
    pub account_name: String,
    pub bank_name: String,
    pub bank_code: String,
    pub currency: String,
    pub status: VirtualAccountStatus,
    pub reference: String,
    /// Received so far, in kobo.
    pub total_received: BaseUnits,
    #[serde(with = "crate::time::millis")]
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct VirtualAccountPage {
    pub virtual_accounts: Vec<VirtualAccount>,
    pub next_cursor: String,
    pub has_more: bool,
    pub total: u64,
}

/// Body of `POST /sandbox/virtual-accounts/{id}/transfers`: a bank
/// transfer arrives.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SimulateBankTransfer {
    /// Kobo (NGN base units).
    pub amount: BaseUnits,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_bank: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub narration: Option<String>,
}
