//! Trading: prices, quotes and orders, scheduled and target orders.

use super::{push_opt, ApiError, Client};
use crate::models::trading::{
    Execution, ExecutionList, NewSchedule, NewTargetOrder, Order, OrderData, OrderPage, OrderRequest,
    PriceList, Quote, QuoteData as TradingQuoteData, QuoteRequest as TradingQuoteRequest, Schedule,
    ScheduleData, ScheduleList, ScheduleUpdate, TargetOrder, TargetOrderData, TargetOrderList,
};
use crate::paths::Operation;

impl Client {
    pub async fn trading_prices(&self) -> Result<PriceList, ApiError> {
        self.data(Operation::TradingPrices, &[], &[], None::<&()>, true)
            .await
    }

    pub async fn create_trading_quote(&self, body: &TradingQuoteRequest) -> Result<Quote, ApiError> {
        let data: TradingQuoteData = self
            .data(Operation::CreateTradingQuote, &[], &[], Some(body), false)
            .await?;
        Ok(data.quote)
    }

    pub async fn trading_quote(&self, id: &str) -> Result<Quote, ApiError> {
        let data: TradingQuoteData = self
            .data(Operation::GetTradingQuote, &[id], &[], None::<&()>, true)
            .await?;
        Ok(data.quote)
    }

    /// Retried only when the order carries a reference.
    pub async fn create_order(&self, body: &OrderRequest) -> Result<Order, ApiError> {
        let idempotent = body.reference.as_deref().is_some_and(|r| !r.is_empty());
        let data: OrderData = self
            .data(Operation::CreateOrder, &[], &[], Some(body), idempotent)
            .await?;
        Ok(data.order)
    }

    pub async fn orders(
        &self,
        status: Option<&str>,
        cursor: Option<String>,
        limit: Option<u32>,
    ) -> Result<OrderPage, ApiError> {
        let mut q = Vec::new();
        push_opt(&mut q, "status", status.map(str::to_owned));
        push_opt(&mut q, "cursor", cursor);
        push_opt(&mut q, "limit", limit.map(|l| l.to_string()));
        self.data(Operation::ListOrders, &[], &q, None::<&()>, true).await
    }

    pub async fn order(&self, id: &str) -> Result<Order, ApiError> {
        let data: OrderData = self
            .data(Operation::GetOrder, &[id], &[], None::<&()>, true)
            .await?;
        Ok(data.order)
    }

    pub async fn cancel_order(&self, id: &str) -> Result<Order, ApiError> {
        let data: OrderData = self
            .data(Operation::CancelOrder, &[id], &[], None::<&()>, false)
            .await?;
        Ok(data.order)
    }

    /// Idempotent by reference when one is given.
    pub async fn create_scheduled_order(&self, body: &NewSchedule) -> Result<Schedule, ApiError> {
        let idempotent = !body.reference.is_empty();
        let data: ScheduleData = self
            .data(Operation::CreateScheduledOrder, &[], &[], Some(body), idempotent)
            .await?;
        Ok(data.schedule)
    }

    pub async fn scheduled_orders(&self, status: Option<&str>) -> Result<Vec<Schedule>, ApiError> {
        let mut q = Vec::new();
        push_opt(&mut q, "status", status.map(str::to_owned));
        let data: ScheduleList = self
            .data(Operation::ListScheduledOrders, &[], &q, None::<&()>, true)
            .await?;
        Ok(data.schedules)
    }

    pub async fn scheduled_order(&self, id: &str) -> Result<Schedule, ApiError> {
        let data: ScheduleData = self
            .data(Operation::GetScheduledOrder, &[id], &[], None::<&()>, true)
            .await?;
        Ok(data.schedule)
    }

    /// Setting the same fields again changes nothing more, so it is retried.
    pub async fn update_scheduled_order(
        &self,
        id: &str,
        body: &ScheduleUpdate,
    ) -> Result<Schedule, ApiError> {
        let data: ScheduleData = self
            .data(Operation::UpdateScheduledOrder, &[id], &[], Some(body), true)
            .await?;
        Ok(data.schedule)
    }

    pub async fn cancel_scheduled_order(&self, id: &str) -> Result<Schedule, ApiError> {
        let data: ScheduleData = self
            .data(Operation::CancelScheduledOrder, &[id], &[], None::<&()>, false)
            .await?;
        Ok(data.schedule)
    }

    /// Newest first.
    pub async fn scheduled_order_executions(&self, id: &str) -> Result<Vec<Execution>, ApiError> {
        let data: ExecutionList = self
            .data(Operation::ScheduledOrderExecutions, &[id], &[], None::<&()>, true)
            .await?;
        Ok(data.executions)
    }

    /// Idempotent by reference when one is given.
    pub async fn create_target_order(&self, body: &NewTargetOrder) -> Result<TargetOrder, ApiError> {
        let idempotent = !body.reference.is_empty();
        let data: TargetOrderData = self
            .data(Operation::CreateTargetOrder, &[], &[], Some(body), idempotent)
            .await?;
        Ok(data.order)
    }

    pub async fn target_orders(&self, status: Option<&str>) -> Result<Vec<TargetOrder>, ApiError> {
        let mut q = Vec::new();
        push_opt(&mut q, "status", status.map(str::to_owned));
        let data: TargetOrderList = self
            .data(Operation::ListTargetOrders, &[], &q, None::<&()>, true)
            .await?;
        Ok(data.orders)
    }

    pub async fn target_order(&self, id: &str) -> Result<TargetOrder, ApiError> {
        let data: TargetOrderData = self
            .data(Operation::GetTargetOrder, &[id], &[], None::<&()>, true)
            .await?;
        Ok(data.order)
    }

    pub async fn cancel_target_order(&self, id: &str) -> Result<TargetOrder, ApiError> {
        let data: TargetOrderData = self
            .data(Operation::CancelTargetOrder, &[id], &[], None::<&()>, false)
            .await?;
        Ok(data.order)
    }
}
