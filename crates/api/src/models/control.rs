//! Bodies of the sandbox's control API (DESIGN.md, "Control API").

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::units::BaseUnits;

/// `data` of `GET /sandbox/clock` and `POST /sandbox/clock/advance`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClockNow {
    pub now: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AdvanceClock {
    pub seconds: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SetWebhook {
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

/// `data` of `PUT /sandbox/webhook`; the secret is never echoed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WebhookSetting {
    pub url: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SimulateDeposit {
    pub chain: String,
    pub address: String,
    pub currency: String,
    pub amount: BaseUnits,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AddFault {
    pub method: String,
    pub path_prefix: String,
    pub mode: String,
    pub count: u32,
}

/// `data` of the fault calls: the faults still armed for the company.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FaultList {
    pub faults: Vec<AddFault>,
}
