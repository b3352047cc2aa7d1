use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::units::{BaseUnits, Currency};

/// `data` of `GET /api/balances`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BalanceList {
    pub company_id: Uuid,
    pub accounts: Vec<BalanceAccount>,
}

/// One wallet account in the balance list.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BalanceAccount {
    pub account_id: Uuid,
    pub account_number: String,
    pub currency: Currency,
    pub ledger_balance: BaseUnits,
    pub available_balance: BaseUnits,
    pub ledger_balance_formatted: String,
    pub available_balance_formatted: String,
    #[serde(with = "crate::time::millis")]
    pub created_at: DateTime<Utc>,
}

/// `data` of `GET /api/balances/{currency}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Balance {
    pub account_number: String,
    pub available_balance: BaseUnits,
    pub company_id: Uuid,
    pub currency: Currency,
    pub pending_balance: BaseUnits,
    pub total_balance: BaseUnits,
    /// Additions the official client reads (the spec's fields above are
    /// unchanged): the settled balance, each amount formatted with all
    /// its decimals and the currency, and when the balance was read.
    #[serde(default)]
    pub ledger_balance: BaseUnits,
    #[serde(default)]
    pub available_balance_formatted: String,
    #[serde(default)]
    pub pending_balance_formatted: String,
    #[serde(default)]
    pub total_balance_formatted: String,
    #[serde(default)]
    pub ledger_balance_formatted: String,
    #[serde(default, with = "crate::time::millis_opt")]
    pub as_of: Option<DateTime<Utc>>,
}
