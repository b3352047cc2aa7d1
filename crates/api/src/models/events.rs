use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A webhook delivery body: `{event, event_id, company_id, data, created_at}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct WebhookEvent {
    pub event: String,
    pub event_id: String,
    pub company_id: Uuid,
    pub data: serde_json::Value,
    #[serde(with = "crate::time::millis")]
    pub created_at: DateTime<Utc>,
}

/// Event names (spec, sandbox rules and open-paths.md).
pub mod names {
    pub const DEPOSIT_SUCCESS: &str = "deposit.success";
    /// A withdrawal settled on chain.
    pub const TRANSFER_SUCCESS: &str = "transfer.success";
    /// A withdrawal failed; its amount and fee are back in the wallet.
    pub const TRANSFER_FAILED: &str = "transfer.failed";
    pub const LIGHTNING_RECEIVED: &str = "btc.lightning.received.success";
}
