use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A deposit address. `created_at` is absent from the generate answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Address {
    pub id: Uuid,
    pub address: String,
    pub company_id: Uuid,
    #[serde(default)]
    pub label: String,
    pub chain: String,
    pub status: AddressStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(with = "crate::time::millis_opt")]
    pub created_at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub reference: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum AddressStatus {
    Active,
    Inactive,
}

/// Body of `POST /api/addresses`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({"chain": "ethereum", "label": "Treasury", "reference": "address-0001"})))]
pub struct GenerateAddress {
    pub chain: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customer_email: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customer_id: Option<String>,
}

/// Query of `GET /api/addresses`; `addresses` is sent comma-separated.
#[derive(Debug, Clone, Default)]
pub struct AddressQuery {
    pub chain: Option<String>,
    pub status: Option<AddressStatus>,
    pub addresses: Vec<String>,
    pub cursor: Option<String>,
    pub limit: Option<u32>,
}

/// `data` of `GET /api/addresses`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AddressPage {
    pub addresses: Vec<Address>,
    pub next_cursor: String,
    pub has_more: bool,
}

/// Body of `POST /api/addresses/validate`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({"address": "0x52908400098527886E0F7030069857D2E4169EE7", "chain": "ethereum"})))]
pub struct ValidateAddress {
    pub address: String,
    pub chain: String,
}

/// The flat answer of address validation (no `data`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AddressValidation {
    pub success: bool,
    pub message: String,
    pub valid: bool,
    pub address: String,
    pub chain: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(with = "crate::time::millis")]
    pub timestamp: DateTime<Utc>,
    /// The same verdict where the official client reads it (an addition
    /// to the spec's flat answer, sandbox-rules.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<ValidationData>,
}

/// `data` of the address validation answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ValidationData {
    pub valid: bool,
    pub address: String,
    pub chain: String,
    pub error: Option<String>,
}

/// `data` of `GET /api/stablecoins/supported-chains`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SupportedChains {
    pub chains: Vec<SupportedChain>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SupportedChain {
    pub chain: String,
    pub native_token: Token,
    pub stablecoins: Vec<Token>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Token {
    pub symbol: String,
    pub decimals: u32,
}
