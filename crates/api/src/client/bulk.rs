//! Bulk transfers and their schedules.

use super::{push_opt, ApiError, Client};
use crate::models::bulk::{
    Batch, BatchData, BatchPage, BatchPreview, BulkExecution, BulkExecutionList, BulkSchedule,
    BulkScheduleData, BulkScheduleList, BulkScheduleUpdate, NewBatch, NewBulkSchedule,
};
use crate::paths::Operation;

impl Client {
    /// Checks a batch without storing it.
    pub async fn preview_bulk_transfer(&self, body: &NewBatch) -> Result<BatchPreview, ApiError> {
        self.data(Operation::PreviewBulkTransfer, &[], &[], Some(body), true)
            .await
    }

    /// A draft batch; idempotent by reference when one is given.
    pub async fn create_bulk_transfer(&self, body: &NewBatch) -> Result<Batch, ApiError> {
        let idempotent = !body.reference.is_empty();
        let data: BatchData = self
            .data(Operation::CreateBulkTransfer, &[], &[], Some(body), idempotent)
            .await?;
        Ok(data.batch)
    }

    pub async fn bulk_transfers(
        &self,
        status: Option<&str>,
        cursor: Option<String>,
        limit: Option<u32>,
    ) -> Result<BatchPage, ApiError> {
        let mut q = Vec::new();
        push_opt(&mut q, "status", status.map(str::to_owned));
        push_opt(&mut q, "cursor", cursor);
        push_opt(&mut q, "limit", limit.map(|l| l.to_string()));
        self.data(Operation::ListBulkTransfers, &[], &q, None::<&()>, true)
            .await
    }

    pub async fn bulk_transfer(&self, id: &str) -> Result<Batch, ApiError> {
        let data: BatchData = self
            .data(Operation::GetBulkTransfer, &[id], &[], None::<&()>, true)
            .await?;
        Ok(data.batch)
    }

    /// Confirming twice is refused, so a lost answer is settled by reading
    /// the batch back.
    pub async fn confirm_bulk_transfer(&self, id: &str) -> Result<Batch, ApiError> {
        let data: BatchData = self
            .data(Operation::ConfirmBulkTransfer, &[id], &[], None::<&()>, false)
            .await?;
        Ok(data.batch)
    }

    pub async fn retry_bulk_transfer(&self, id: &str) -> Result<Batch, ApiError> {
        let data: BatchData = self
            .data(Operation::RetryBulkTransfer, &[id], &[], None::<&()>, false)
            .await?;
        Ok(data.batch)
    }

    pub async fn create_bulk_schedule(&self, body: &NewBulkSchedule) -> Result<BulkSchedule, ApiError> {
        let idempotent = !body.reference.is_empty();
        let data: BulkScheduleData = self
            .data(Operation::CreateBulkSchedule, &[], &[], Some(body), idempotent)
            .await?;
        Ok(data.schedule)
    }

    pub async fn bulk_schedules(&self) -> Result<Vec<BulkSchedule>, ApiError> {
        let data: BulkScheduleList = self
            .data(Operation::ListBulkSchedules, &[], &[], None::<&()>, true)
            .await?;
        Ok(data.schedules)
    }

    pub async fn update_bulk_schedule(
        &self,
        id: &str,
        body: &BulkScheduleUpdate,
    ) -> Result<BulkSchedule, ApiError> {
        let data: BulkScheduleData = self
            .data(Operation::UpdateBulkSchedule, &[id], &[], Some(body), true)
            .await?;
        Ok(data.schedule)
    }

    pub async fn cancel_bulk_schedule(&self, id: &str) -> Result<BulkSchedule, ApiError> {
        let data: BulkScheduleData = self
            .data(Operation::CancelBulkSchedule, &[id], &[], None::<&()>, false)
            .await?;
        Ok(data.schedule)
    }

    /// Newest first.
    pub async fn bulk_schedule_executions(&self, id: &str) -> Result<Vec<BulkExecution>, ApiError> {
        let data: BulkExecutionList = self
            .data(Operation::BulkScheduleExecutions, &[id], &[], None::<&()>, true)
            .await?;
        Ok(data.executions)
    }
}
