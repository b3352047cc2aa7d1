//! The envelope every success answer uses and the RFC 7807 problem every
//! error answer uses.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// `{success, message, data, timestamp, metadata?}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Envelope<T> {
    pub success: bool,
    pub message: String,
    pub data: T,
    #[serde(with = "crate::time::millis")]
    pub timestamp: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Metadata {
    #[serde(default)]
    pub request_id: String,
}

/// One field that failed validation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

/// An RFC 7807 problem body, plus the service's `code` and field errors.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Problem {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub status: u16,
    #[serde(default)]
    pub detail: String,
    #[serde(default)]
    pub correlation_id: String,
    #[serde(default)]
    #[serde(with = "crate::time::millis_opt")]
    pub timestamp: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<FieldError>,
}

/// The error codes the service names (spec and sandbox rules).
pub mod codes {
    pub const VALIDATION_ERROR: &str = "VALIDATION_ERROR";
    pub const UNAUTHORIZED: &str = "UNAUTHORIZED";
    pub const FORBIDDEN: &str = "FORBIDDEN";
    pub const NOT_FOUND: &str = "NOT_FOUND";
    pub const METHOD_NOT_ALLOWED: &str = "METHOD_NOT_ALLOWED";
    pub const IDEMPOTENCY_CONFLICT: &str = "IDEMPOTENCY_CONFLICT";
    pub const PAYLOAD_TOO_LARGE: &str = "PAYLOAD_TOO_LARGE";
    pub const UNSUPPORTED_MEDIA_TYPE: &str = "UNSUPPORTED_MEDIA_TYPE";
    pub const INSUFFICIENT_BALANCE: &str = "INSUFFICIENT_BALANCE";
    pub const QUOTE_EXPIRED: &str = "QUOTE_EXPIRED";
    pub const QUOTE_EXHAUSTED: &str = "QUOTE_EXHAUSTED";
    pub const CARD_TOO_NEW: &str = "CARD_TOO_NEW";
    pub const KYC_NOT_APPROVED: &str = "KYC_NOT_APPROVED";
    pub const INVALID_STATE: &str = "INVALID_STATE";
    /// An onchain payout's finalize before a confirmed deposit of amount
    /// + fees reached its `deposit_address` (422; nothing changed).
    pub const DEPOSIT_NOT_CONFIRMED: &str = "DEPOSIT_NOT_CONFIRMED";
    pub const RATE_LIMITED: &str = "RATE_LIMITED";
    pub const SERVICE_UNAVAILABLE: &str = "SERVICE_UNAVAILABLE";
    pub const INTERNAL_ERROR: &str = "INTERNAL_ERROR";
}
