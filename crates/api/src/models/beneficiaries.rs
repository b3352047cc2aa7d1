//! Saved payout recipients: bank and mobile-money accounts, and crypto
//! addresses.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Where a beneficiary is paid: an account (`bank`, `mobile_money`) or an
/// address (`crypto`). Untagged on the wire; `type` says which.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(untagged)]
pub enum Destination {
    Account {
        account_name: String,
        account_number: String,
        bank_code: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        country: Option<String>,
    },
    Crypto {
        address: String,
        chain: String,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Beneficiary {
    pub id: Uuid,
    pub company_id: Uuid,
    #[serde(rename = "type")]
    pub kind: String,
    pub name: String,
    pub destination: Destination,
    pub is_blacklisted: bool,
    pub is_active: bool,
    pub created_by: String,
    #[serde(with = "crate::time::millis")]
    pub created_at: DateTime<Utc>,
    #[serde(with = "crate::time::millis")]
    pub updated_at: DateTime<Utc>,
}

/// Body of `POST /api/beneficiaries`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NewBeneficiary {
    #[serde(rename = "type")]
    pub kind: String,
    pub name: String,
    pub destination: serde_json::Value,
}

/// Body of `PUT /api/beneficiaries/{id}`; omitted fields keep their value.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BeneficiaryUpdate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destination: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_active: Option<bool>,
    /// Kept as sent (the official client sets it); it blocks nothing in
    /// the sandbox, which has no sanctions screening.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_blacklisted: Option<bool>,
}

/// `data` of `DELETE /api/beneficiaries/{id}`: the deleted record, and
/// `success: true` beside it, which the official client reads.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DeletedBeneficiary {
    #[serde(flatten)]
    pub beneficiary: Beneficiary,
    pub success: bool,
}

/// `data` of `GET /api/beneficiaries`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BeneficiaryPage {
    pub beneficiaries: Vec<Beneficiary>,
    pub total: u64,
    pub limit: u32,
    pub offset: u32,
}
