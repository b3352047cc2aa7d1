//! A bulk transfer as a kind of the approval gate: one request for the
//! whole batch, its payload every row (so the digest approvers sign covers
//! each payment and the total). Execution creates the batch upstream under
//! the request's reference (the same reference returns the same batch),
//! saves its id, then confirms it once; a lost answer is settled by
//! reading the batch back (a confirmed batch is no longer a draft).
//! Retrying a batch's failed items is a request of its own.

use std::time::Duration;

use paydesk_api::models::bulk::{Batch, BatchStatus, BulkItemStatus, NewBatch};
use paydesk_api::units::{format_decimal, BaseUnits};
use paydesk_api::ApiError;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::sheet::items_of;
use crate::access::permissions::Permission;
use crate::approvals::{Action, ExecError, Fact, Run, Step};
use crate::approvals::{Kind, Policy};
use crate::withdrawals::short_address;

pub struct BulkTransferAction;

/// One payment of the batch, as approved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BulkRow {
    /// The row of the file (1-based, header excluded).
    pub row: usize,
    pub chain: String,
    pub address: String,
    /// Base units of the batch's asset.
    pub amount: BaseUnits,
    pub reference: String,
    pub memo: Option<String>,
}

/// The batch as approved.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BulkPayload {
    pub currency: String,
    pub decimals: u32,
    pub description: String,
    /// Of every row.
    pub amount: BaseUnits,
    /// The service's network fees for every row, as previewed.
    pub fees: BaseUnits,
    pub rows: Vec<BulkRow>,
}

impl BulkPayload {
    pub fn show(&self, units: BaseUnits) -> String {
        format!(
            "{} {}",
            format_decimal(units.value(), self.decimals),
            self.currency
        )
    }
}

/// What execution has done so far.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct BulkProgress {
    pub batch_id: Option<Uuid>,
}

/// How a batch stands, for the timeline and notices.
pub fn outcome(b: &Batch) -> String {
    let counted = |s: BulkItemStatus| b.items.iter().filter(|i| i.status == s).count();
    format!(
        "Batch {} is {}: {} payments sent ({} completed, {} failed, {} on the way).",
        b.id,
        b.status,
        b.items
            .iter()
            .filter(|i| i.status != BulkItemStatus::Skipped)
            .count(),
        counted(BulkItemStatus::Completed),
        counted(BulkItemStatus::Failed),
        counted(BulkItemStatus::Pending) + counted(BulkItemStatus::Processing)
    )
}

impl Action for BulkTransferAction {
    type Payload = BulkPayload;
    type Progress = BulkProgress;

    const KIND: Kind = Kind {
        key: "bulk_transfer",
        label: "Bulk transfers",
        read_permission: Permission::BulkRead,
        request_permission: Permission::BulkRequest,
        approve_permission: Permission::BulkApprove,
    };

    fn default_policy(&self) -> Policy {
        Policy::standard()
    }

    fn describe(&self, p: &BulkPayload) -> Vec<Fact> {
        let mut facts = vec![
            Fact::new("Payments", format!("{} in {}", p.rows.len(), p.currency)),
            Fact::new("Send", p.show(p.amount)),
            Fact::new("Network fees", p.show(p.fees)),
            Fact::new("Total", p.show(BaseUnits(p.amount.value() + p.fees.value()))),
        ];
        if !p.description.is_empty() {
            facts.push(Fact::new("Description", p.description.clone()));
        }
        facts.extend(p.rows.iter().map(|r| {
            let memo = r
                .memo
                .as_deref()
                .map(|m| format!(", memo {m}"))
                .unwrap_or_default();
            Fact::new(
                &format!("Row {}", r.row),
                format!(
                    "{} on {} to {} ({}{memo})",
                    p.show(r.amount),
                    r.chain,
                    short_address(&r.address),
                    r.reference
                ),
            )
        }));
        facts
    }

    async fn execute(
        &self,
        run: &mut Run<'_, BulkProgress>,
        p: &BulkPayload,
    ) -> Result<Step<BulkPayload>, ExecError> {
        let batch_id = match run.progress.batch_id {
            Some(id) => id,
            None => {
                let batch = run
                    .client()?
                    .create_bulk_transfer(&NewBatch {
                        currency: p.currency.clone(),
                        reference: run.reference().to_owned(),
                        description: Some(p.description.clone()).filter(|d| !d.is_empty()),
                        items: items_of(&p.rows),
                        csv: None,
                    })
                    .await?;
                if batch.totals.invalid_items > 0 {
                    return Ok(Step::Failed(format!(
                        "The payments service now refuses {} of the payments; nothing was sent. File the batch again.",
                        batch.totals.invalid_items
                    )));
                }
                run.progress.batch_id = Some(batch.id);
                run.save("created", &format!("batch {}", batch.id)).await?;
                batch.id
            }
        };
        let client = run.client()?;
        let batch = client.bulk_transfer(&batch_id.to_string()).await?;
        if batch.status != BatchStatus::Draft {
            return Ok(Step::Done(outcome(&batch)));
        }
        match client.confirm_bulk_transfer(&batch_id.to_string()).await {
            Ok(batch) => {
                run.note("confirmed", &format!("batch {batch_id}")).await?;
                Ok(Step::Done(outcome(&batch)))
            }
            Err(ApiError::OutcomeUnknown { .. }) | Err(ApiError::Unavailable(_)) => {
                run.note("confirm unconfirmed", "reading the batch back next run")
                    .await?;
                Ok(Step::Again(Duration::from_secs(2)))
            }
            Err(e) => Err(e.into()),
        }
    }
}

/// The batch a request created, once it did.
pub fn batch_of(request: &crate::approvals::ActionRequest) -> Option<Uuid> {
    request.progress_as::<BulkProgress>().batch_id
}

/// Sending a batch's failed items again: a request of its own, since it
/// moves money again.
pub struct RetryAction;

/// A failed item as it stood when the retry was asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedItem {
    pub row: u32,
    pub reference: String,
    pub amount: BaseUnits,
    /// Sends so far: a larger count read back means the retry went out.
    pub attempts: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RetryPayload {
    pub batch_id: Uuid,
    pub currency: String,
    pub decimals: u32,
    pub amount: BaseUnits,
    pub items: Vec<FailedItem>,
}

/// A retry keeps no progress: the items' attempts, read back, tell it.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct RetryProgress {}

impl Action for RetryAction {
    type Payload = RetryPayload;
    type Progress = RetryProgress;

    const KIND: Kind = Kind {
        key: "bulk_retry",
        label: "Bulk transfer retries",
        read_permission: Permission::BulkRead,
        request_permission: Permission::BulkRequest,
        approve_permission: Permission::BulkApprove,
    };

    fn describe(&self, p: &RetryPayload) -> Vec<Fact> {
        let show = |u: BaseUnits| format!("{} {}", format_decimal(u.value(), p.decimals), p.currency);
        let mut facts = vec![
            Fact::linked(
                "Batch",
                p.batch_id.to_string(),
                format!("/bulk-transfers/{}", p.batch_id),
            ),
            Fact::new(
                "Send again",
                format!("{} failed payments, {}", p.items.len(), show(p.amount)),
            ),
        ];
        facts.extend(p.items.iter().map(|i| {
            Fact::new(
                &format!("Row {}", i.row),
                format!("{} ({}, attempt {})", show(i.amount), i.reference, i.attempts + 1),
            )
        }));
        facts
    }

    async fn execute(
        &self,
        run: &mut Run<'_, RetryProgress>,
        p: &RetryPayload,
    ) -> Result<Step<RetryPayload>, ExecError> {
        let client = run.client()?;
        let id = p.batch_id.to_string();
        let batch = client.bulk_transfer(&id).await?;
        let sent_again = p.items.iter().any(|f| {
            batch
                .items
                .iter()
                .any(|i| i.reference == f.reference && i.attempts > f.attempts)
        });
        if sent_again {
            return Ok(Step::Done(outcome(&batch)));
        }
        if !batch.items.iter().any(|i| i.status == BulkItemStatus::Failed) {
            return Ok(Step::Failed(
                "No payment of the batch has failed any more; nothing was sent.".to_owned(),
            ));
        }
        match client.retry_bulk_transfer(&id).await {
            Ok(batch) => Ok(Step::Done(outcome(&batch))),
            Err(ApiError::OutcomeUnknown { .. }) | Err(ApiError::Unavailable(_)) => {
                run.note("retry unconfirmed", "reading the batch back next run")
                    .await?;
                Ok(Step::Again(Duration::from_secs(2)))
            }
            Err(e) => Err(e.into()),
        }
    }
}

/// The retry of a batch's failed items as it stands now, or None when
/// none failed.
pub fn retry_payload(b: &Batch) -> Option<RetryPayload> {
    let items: Vec<FailedItem> = b
        .items
        .iter()
        .filter(|i| i.status == BulkItemStatus::Failed)
        .map(|i| FailedItem {
            row: i.row,
            reference: i.reference.clone(),
            amount: i.amount,
            attempts: i.attempts,
        })
        .collect();
    if items.is_empty() {
        return None;
    }
    let decimals = paydesk_api::units::Currency::parse(&b.currency)
        .ok()
        .and_then(|c| c.decimals())
        .unwrap_or(0);
    Some(RetryPayload {
        batch_id: b.id,
        currency: b.currency.clone(),
        decimals,
        amount: BaseUnits(items.iter().map(|i| i.amount.value()).sum()),
        items,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approvals::digest;

    fn payload() -> BulkPayload {
        let row = |n: usize, amount: i64| BulkRow {
            row: n,
            chain: "ethereum".into(),
            address: "0x52908400098527886e0f7030069857d2e4169ee7".into(),
            amount: BaseUnits(amount),
            reference: format!("r{n}"),
            memo: None,
        };
        BulkPayload {
            currency: "USDT".into(),
            decimals: 6,
            description: String::new(),
            amount: BaseUnits(3_000_000),
            fees: BaseUnits(2_000_000),
            rows: vec![row(1, 1_000_000), row(2, 2_000_000)],
        }
    }

    #[test]
    fn reviewers_see_every_row_and_the_digest_covers_each() {
        let p = payload();
        let facts = BulkTransferAction.describe(&p);
        assert!(facts
            .iter()
            .any(|f| f.label == "Total" && f.value == "5.000000 USDT"));
        assert!(facts
            .iter()
            .any(|f| f.label == "Row 2" && f.value.starts_with("2.000000 USDT")));
        let kind = BulkTransferAction::KIND;
        let first = digest(kind, &facts, &serde_json::to_value(&p).unwrap());
        let mut changed = p.clone();
        changed.rows[1].address = "0x0000000000000000000000000000000000000001".into();
        let facts = BulkTransferAction.describe(&changed);
        assert_ne!(
            first,
            digest(kind, &facts, &serde_json::to_value(&changed).unwrap())
        );
    }
}
