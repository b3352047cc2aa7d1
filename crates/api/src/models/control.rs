//! Bodies of the sandbox's control API (DESIGN.md, "Control API").

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::status::wire_status;
use crate::units::BaseUnits;

wire_status! {
    /// Where a webhook delivery is.
    pub enum WebhookDeliveryStatus {
        Pending = "pending",
        Delivered = "delivered",
        Failed = "failed",
    }
}

/// The permission a scoped client needs for every control route
/// (`/sandbox/*`); `GET`/`PUT /sandbox/snapshot` also need `cards:read` /
/// `cards:write`, since a snapshot holds full card numbers and CVVs. A
/// client with `permissions: null` (full access) has it.
pub const CONTROL_PERMISSION: &str = "sandbox:control";

/// `data` of `GET /sandbox/clock` and `POST /sandbox/clock/advance`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClockNow {
    #[serde(with = "crate::time::millis")]
    pub now: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({"seconds": 60})))]
pub struct AdvanceClock {
    pub seconds: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SetWebhook {
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

/// `data` of `PUT /sandbox/webhook`; the secret is never echoed.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WebhookSetting {
    pub url: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SimulateDeposit {
    pub chain: String,
    pub address: String,
    pub currency: String,
    pub amount: BaseUnits,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AddFault {
    pub method: String,
    pub path_prefix: String,
    pub mode: String,
    pub count: u32,
}

/// `POST /sandbox/faults` for a chaos run: each call matching `method`
/// and `path_prefix` fails with `probability` (above 0, at most 1), drawn
/// from a generator seeded with `seed` (random when left out), until
/// `count` faults were injected (up to 1,000,000). The same seed and the
/// same calls give the same faults.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AddChanceFault {
    pub method: String,
    pub path_prefix: String,
    pub mode: String,
    pub count: u32,
    pub probability: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

/// A fault still armed: `count` is what it may still inject; a chance
/// fault also shows its probability and seed.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ArmedFault {
    pub method: String,
    pub path_prefix: String,
    pub mode: String,
    pub count: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probability: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

/// `data` of the fault calls: the faults still armed for the company.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FaultList {
    pub faults: Vec<ArmedFault>,
}

/// `POST /sandbox/webhooks/faults`: the company's next `count` webhook
/// deliveries whose event starts with `event` (every event when left out)
/// are dropped (`drop`), sent twice (`duplicate`), sent N seconds of
/// sandbox time late (`delay_s:N`) or held back until a later event was
/// sent (`out_of_order`); with `probability` (and `seed`), each matching
/// delivery is hit with that chance instead. Listed with its seed.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AddWebhookFault {
    pub mode: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    pub count: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probability: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

/// `data` of the webhook fault calls: the company's delivery faults still
/// armed.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WebhookFaultList {
    pub faults: Vec<AddWebhookFault>,
}

/// One attempt of a webhook delivery: the receiver's HTTP status, or why
/// none came.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DeliveryAttempt {
    #[serde(with = "crate::time::millis")]
    pub at: DateTime<Utc>,
    pub status_code: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One event sent (or being sent) to one URL.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WebhookDelivery {
    pub id: u64,
    pub event: String,
    pub event_id: String,
    pub url: String,
    pub status: WebhookDeliveryStatus,
    #[serde(with = "crate::time::millis")]
    pub created_at: DateTime<Utc>,
    pub attempts: Vec<DeliveryAttempt>,
}

/// `data` of `GET /sandbox/webhooks/deliveries`, newest first.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DeliveryList {
    pub deliveries: Vec<WebhookDelivery>,
}

/// One call in the request journal; bodies are JSON (or a string when not
/// JSON, null when empty) with secrets masked.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct JournalEntry {
    pub request_id: String,
    pub method: String,
    /// Path and query string.
    pub path: String,
    pub status: u16,
    #[serde(with = "crate::time::millis")]
    pub at: DateTime<Utc>,
    pub request_body: serde_json::Value,
    pub response_body: serde_json::Value,
}

/// `data` of `GET /sandbox/requests`, newest first.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RequestJournal {
    pub requests: Vec<JournalEntry>,
}

/// `data` of `POST /sandbox/reset`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ResetDone {
    pub company_id: uuid::Uuid,
    #[serde(with = "crate::time::millis")]
    pub reset_at: DateTime<Utc>,
}
