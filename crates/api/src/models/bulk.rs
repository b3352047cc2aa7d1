//! Bulk transfers (open-paths.md; bodies are ours): a batch of crypto
//! payments, each to an address or a saved crypto beneficiary, given inline
//! or as CSV; previewed with per-item errors, confirmed, followed item by
//! item, failed items retried; and recurring schedules of a batch.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

pub use crate::models::trading::{ExecutionStatus, ScheduleStatus};
use crate::status::wire_status;
use crate::units::BaseUnits;

wire_status! {
    /// An item of a batch: valid or invalid before confirm; then skipped
    /// (it was invalid), or its withdrawal's status.
    pub enum BulkItemStatus {
        Valid = "valid",
        Invalid = "invalid",
        Skipped = "skipped",
        Pending = "pending",
        Processing = "processing",
        Completed = "completed",
        Failed = "failed",
    }
}

wire_status! {
    /// A batch's status: a draft until confirmed, then processing until
    /// every item ended.
    pub enum BatchStatus {
        Draft = "draft",
        Processing = "processing",
        Completed = "completed",
        PartiallyFailed = "partially_failed",
        Failed = "failed",
    }
}

/// One payment of a batch, as sent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BulkItemInput {
    /// An address (with `chain`) or, instead, a saved crypto beneficiary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chain: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beneficiary_id: Option<Uuid>,
    /// Base units of the batch's currency.
    pub amount: BaseUnits,
    /// Unique within the batch.
    pub reference: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memo: Option<String>,
}

/// Body of `POST /api/bulk-transfers` and `POST /api/bulk-transfers/previews`:
/// `items`, or `csv` with the header `address,chain,beneficiary_id,amount,reference,memo`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({"currency": "USDT", "reference": "batch-0001", "items": [{"address": "0x52908400098527886E0F7030069857D2E4169EE7", "chain": "ethereum", "amount": "1000000", "reference": "batch-0001-1"}]})))]
pub struct NewBatch {
    /// BTC, USDT or USDC.
    pub currency: String,
    #[serde(default)]
    pub reference: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<BulkItemInput>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csv: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BulkItem {
    pub id: Uuid,
    /// 1-based position in the batch (the CSV row, header excluded).
    pub row: u32,
    pub address: String,
    pub chain: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beneficiary_id: Option<Uuid>,
    pub amount: BaseUnits,
    pub fee: BaseUnits,
    pub reference: String,
    #[serde(default)]
    pub memo: String,
    pub status: BulkItemStatus,
    /// What is wrong with the item, when invalid.
    pub errors: Vec<String>,
    /// The withdrawal of the latest attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub withdrawal_id: Option<Uuid>,
    pub attempts: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BatchTotals {
    pub items: u32,
    pub valid_items: u32,
    pub invalid_items: u32,
    /// Of the valid items.
    pub amount: BaseUnits,
    pub fees: BaseUnits,
    /// Amount + fees: what the wallet pays at confirm.
    pub total: BaseUnits,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Batch {
    pub id: Uuid,
    pub company_id: Uuid,
    pub currency: String,
    pub reference: String,
    #[serde(default)]
    pub description: String,
    pub status: BatchStatus,
    pub items: Vec<BulkItem>,
    pub totals: BatchTotals,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule_id: Option<Uuid>,
    #[serde(with = "crate::time::millis")]
    pub created_at: DateTime<Utc>,
    #[serde(with = "crate::time::millis")]
    pub updated_at: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(with = "crate::time::millis_opt")]
    pub confirmed_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BatchData {
    pub batch: Batch,
}

/// `data` of a preview: the items as they would be, nothing stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BatchPreview {
    pub currency: String,
    pub items: Vec<BulkItem>,
    pub totals: BatchTotals,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BatchPage {
    pub batches: Vec<Batch>,
    pub next_cursor: String,
    pub has_more: bool,
    pub total: u64,
}

/// Body of `POST /api/bulk-transfers/schedules`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NewBulkSchedule {
    #[serde(default)]
    pub name: String,
    pub currency: String,
    pub items: Vec<BulkItemInput>,
    /// `daily`, `weekly` or `monthly`.
    pub frequency: String,
    #[serde(default)]
    pub day_of_week: u32,
    #[serde(default)]
    pub day_of_month: u32,
    /// `HH:MM`, UTC.
    pub execution_time: String,
    #[serde(default)]
    pub reference: String,
}

/// Body of `PUT /api/bulk-transfers/schedules/{id}`; omitted fields keep
/// their value.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BulkScheduleUpdate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<Vec<BulkItemInput>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frequency: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub day_of_week: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub day_of_month: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_time: Option<String>,
    /// `Paused` or `Active`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ScheduleStatus>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BulkSchedule {
    pub id: Uuid,
    pub company_id: Uuid,
    pub name: String,
    pub currency: String,
    pub items: Vec<BulkItemInput>,
    pub frequency: String,
    pub day_of_week: u32,
    pub day_of_month: u32,
    pub execution_time: String,
    pub status: ScheduleStatus,
    #[serde(default, with = "crate::time::millis_opt")]
    pub next_execution_at: Option<DateTime<Utc>>,
    pub total_executions: u32,
    pub reference: String,
    #[serde(with = "crate::time::millis")]
    pub created_at: DateTime<Utc>,
    #[serde(with = "crate::time::millis")]
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BulkScheduleData {
    pub schedule: BulkSchedule,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BulkScheduleList {
    pub schedules: Vec<BulkSchedule>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BulkExecution {
    pub id: Uuid,
    /// The batch the tick made; empty when it made none.
    pub batch_id: String,
    /// `Completed` (the batch was confirmed) or `Failed`.
    pub status: ExecutionStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(with = "crate::time::millis")]
    pub executed_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BulkExecutionList {
    pub executions: Vec<BulkExecution>,
}
