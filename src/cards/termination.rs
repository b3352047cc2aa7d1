//! Card termination runs through the approvals engine: what a request
//! carries, fixed when it was filed.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TerminationPayload {
    pub card_id: String,
    pub reason: String,
    pub last_four: String,
    pub card_name: String,
}
