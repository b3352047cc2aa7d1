//! Scheduled orders, DCA (spec "Trading" rules 4-5; sandbox-rules.md):
//! each tick buys as much `currency` as `amount` of `quote_currency` pays
//! for at the market price plus the spread, in whole smallest units (so it
//! may spend a little less than `amount`), on the sandbox clock (timing and pause/resume in
//! `crate::recurrence`). Every tick that falls due during a clock advance
//! runs, in order. A tick that can't be paid records a `failed` execution
//! (too small to buy anything: `skipped`) and the schedule goes on.
//!
//! Decisions where the documents are silent: a schedule only buys (its
//! `currency` is the base of a non-NGN pair); `total_executions` counts
//! completed ticks; each completed tick is also an order in the orders list
//! (`market`, one fill, no quote: `quote_id` is the nil UUID and
//! `quote_consumption` null); DELETE cancels.
//!
//! Ends (sandbox-rules.md): optional `end_date` (YYYY-MM-DD, UTC) and
//! `max_executions`; the tick that reaches either leaves the schedule
//! `completed` with `next_execution_at` null. Decisions: `max_executions`
//! counts completed ticks (as `total_executions` does), not failed or
//! skipped ones; the end date's whole day counts, so a tick whose next
//! occurrence falls after it is the last; an end date before the first
//! tick is a 400; a completed schedule can't be changed or cancelled
//! (422).

use chrono::{DateTime, NaiveDate, Utc};
use paydesk_api::models::trading::{Execution, Fill, NewSchedule, Order, Schedule, ScheduleUpdate};
use paydesk_api::models::trading::{ExecutionStatus, OrderStatus, ScheduleStatus};
use paydesk_api::time::wire;
use paydesk_api::units::BaseUnits;
use rust_decimal::{Decimal, RoundingStrategy};
use uuid::Uuid;

use super::schedule_book::ScheduleRecord;
use super::spot::{settle_trade, Pair, Side};
use crate::error::ApiError;
use crate::recurrence::{Cadence, Timing};
use crate::scheduler::{Job, Scheduler};
use crate::state::{Company, Effects};

impl ScheduleRecord {
    /// Whether the schedule ends after the tick that just ran.
    fn reached_end(&self) -> bool {
        let s = &self.schedule;
        let by_count = s.max_executions.is_some_and(|max| s.total_executions >= max);
        let by_date = self
            .end_date
            .zip(self.cadence.next)
            .is_some_and(|(end, next)| next.date_naive() > end);
        by_count || by_date
    }
}

impl ScheduleRecord {
    /// Copies the cadence into the record the API shows.
    fn show(&mut self, now: DateTime<Utc>) {
        let (s, c) = (&mut self.schedule, &self.cadence);
        s.frequency = c.timing.frequency_name().to_owned();
        s.day_of_week = c.timing.day_of_week();
        s.day_of_month = c.timing.day_of_month();
        s.execution_time = c.timing.execution_time();
        s.status = c.status.clone();
        s.next_execution_at = c.next;
        s.updated_at = now;
    }

    fn queue(&mut self, scheduler: &mut Scheduler, company_id: Uuid) {
        let schedule_id = self.schedule.id;
        self.cadence.queue(scheduler, |generation| Job::ScheduleTick {
            company_id,
            schedule_id,
            generation,
        });
    }
}

pub fn create(company: &mut Company, req: &NewSchedule, fx: &mut Effects<'_>) -> Result<Schedule, ApiError> {
    let pair = Pair::parse(&req.currency, &req.quote_currency).map_err(|_| {
        ApiError::field(
            "currency",
            "schedules buy BTC with USDT or USDC, or USDT with USDC",
        )
    })?;
    if pair.is_ngn() {
        return Err(ApiError::field("currency", "NGN can't be bought on a schedule"));
    }
    if req.amount.value() <= 0 {
        return Err(ApiError::field(
            "amount",
            format!(
                "must be a positive integer of the smallest unit of {}",
                pair.quote
            ),
        ));
    }
    let timing = Timing::check(
        &req.frequency,
        req.day_of_week,
        req.day_of_month,
        &req.execution_time,
    )?;
    if req.max_executions == Some(0) {
        return Err(ApiError::field("max_executions", "must be at least 1"));
    }
    let end_date = req
        .end_date
        .as_deref()
        .filter(|d| !d.trim().is_empty())
        .map(|d| {
            NaiveDate::parse_from_str(d.trim(), "%Y-%m-%d")
                .map_err(|_| ApiError::field("end_date", "must be a date YYYY-MM-DD"))
        })
        .transpose()?;
    let cadence = Cadence::start(timing, fx.now);
    if let (Some(end), Some(first)) = (end_date, cadence.next) {
        if first.date_naive() > end {
            return Err(ApiError::field(
                "end_date",
                format!("is before the first execution ({first}); no tick would run"),
            ));
        }
    }
    let mut record = ScheduleRecord {
        schedule: Schedule {
            id: Uuid::new_v4(),
            company_id: company.id,
            currency: pair.base.code().to_owned(),
            quote_currency: pair.quote.code().to_owned(),
            amount: req.amount,
            frequency: String::new(),
            day_of_week: 0,
            day_of_month: 0,
            execution_time: String::new(),
            status: ScheduleStatus::Active,
            next_execution_at: None,
            last_executed_at: String::new(),
            total_executions: 0,
            total_amount_spent: BaseUnits::ZERO,
            total_quantity_acquired: BaseUnits::ZERO,
            reference: req.reference.clone(),
            end_date: end_date.map(|d| d.format("%Y-%m-%d").to_string()),
            max_executions: req.max_executions,
            created_at: fx.now,
            updated_at: fx.now,
        },
        executions: Vec::new(),
        cadence,
        end_date,
    };
    record.show(fx.now);
    record.queue(fx.scheduler, company.id);
    let schedule = record.schedule.clone();
    company.schedules.records.push(record);
    Ok(schedule)
}

/// Applies a partial update (rule 5).
pub fn update(
    company: &mut Company,
    id: Uuid,
    req: &ScheduleUpdate,
    fx: &mut Effects<'_>,
) -> Result<Schedule, ApiError> {
    let index = company.schedules.index(id)?;
    if req.amount.is_some_and(|a| a.value() <= 0) {
        return Err(ApiError::field("amount", "must be a positive integer"));
    }
    let record = &mut company.schedules.records[index];
    let timing = record.cadence.timing.changed(
        req.frequency.as_deref(),
        req.day_of_week,
        req.day_of_month,
        req.execution_time.as_deref(),
    )?;
    let requeue = record
        .cadence
        .change(timing, req.status.as_ref().map(ScheduleStatus::as_str), fx.now)?;
    if let Some(amount) = req.amount {
        record.schedule.amount = amount;
    }
    record.show(fx.now);
    if requeue {
        record.queue(fx.scheduler, company.id);
    }
    Ok(record.schedule.clone())
}

pub fn cancel(company: &mut Company, id: Uuid, now: DateTime<Utc>) -> Result<Schedule, ApiError> {
    let index = company.schedules.index(id)?;
    let record = &mut company.schedules.records[index];
    record.cadence.cancel()?;
    record.show(now);
    Ok(record.schedule.clone())
}

/// One tick: buy, record the execution, queue the next tick.
pub fn tick(company: &mut Company, id: Uuid, generation: u64, fx: &mut Effects<'_>) {
    let Ok(index) = company.schedules.index(id) else {
        return;
    };
    if !company.schedules.records[index].cadence.is_due(generation) {
        return;
    }
    let s = company.schedules.records[index].schedule.clone();
    let pair = Pair::parse(&s.currency, &s.quote_currency).expect("stored pairs parse");
    let outcome = buy(company, &pair, &s, fx);
    let record = &mut company.schedules.records[index];
    let (status, base, price, quote, reason, order_id) = match outcome {
        Ok((order, base, quote)) => ("completed", base, order.price, quote, None, order.id.to_string()),
        Err((status, reason)) => (status, 0, Decimal::ZERO, 0, Some(reason), String::new()),
    };
    record.executions.push(Execution {
        id: Uuid::new_v4(),
        order_id,
        status: ExecutionStatus::from(status),
        base_amount: BaseUnits(base),
        fill_price: price,
        quote_amount: BaseUnits(quote),
        reason,
        executed_at: fx.now,
    });
    let s = &mut record.schedule;
    if status == "completed" {
        s.total_executions += 1;
        s.total_amount_spent = BaseUnits(s.total_amount_spent.value() + quote);
        s.total_quantity_acquired = BaseUnits(s.total_quantity_acquired.value() + base);
    }
    s.last_executed_at = wire(fx.now);
    record.cadence.ticked(fx.now);
    if record.reached_end() {
        record.cadence.complete();
        record.show(fx.now);
        return;
    }
    record.show(fx.now);
    record.queue(fx.scheduler, company.id);
}

type TickResult = Result<(Order, i64, i64), (&'static str, String)>;

fn buy(company: &mut Company, pair: &Pair, s: &Schedule, fx: &Effects<'_>) -> TickResult {
    let price = pair
        .price(fx.market, Side::Buy)
        .map_err(|e| ("failed", e.to_string()))?;
    let spend = Pair::whole(s.amount.value(), pair.quote_dp);
    let quantity = (spend / price).round_dp_with_strategy(pair.base_dp, RoundingStrategy::ToZero);
    let (base, quote) = pair
        .amounts(quantity, price, Side::Buy)
        .map_err(|e| ("failed", e.to_string()))?;
    if base == 0 {
        return Err((
            "skipped",
            format!(
                "{spend} {} buys less than the smallest unit of {}",
                pair.quote, pair.base
            ),
        ));
    }
    let id = Uuid::new_v4();
    settle_trade(company, pair, Side::Buy, base, quote, id, fx.now).map_err(|e| ("failed", e.to_string()))?;
    let order = Order {
        id,
        base_currency: pair.base.code().to_owned(),
        quote_currency: pair.quote.code().to_owned(),
        side: "BUY".to_owned(),
        order_type: "market".to_owned(),
        quantity,
        price,
        status: OrderStatus::Filled,
        exchange: Some(super::spot::VENUE.to_owned()),
        created_at: fx.now,
        updated_at: fx.now,
        filled_quantity: quantity,
        remaining_quantity: Decimal::ZERO,
        quote_id: Uuid::nil(),
        fills: vec![Fill {
            id: Uuid::new_v4(),
            order_id: id,
            quantity,
            price,
            created_at: fx.now,
        }],
        quote_consumption: None,
        reference: format!("SCHEDULE_{}", s.id.simple()),
    };
    company.trades.record_order(order.clone());
    Ok((order, base, quote))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tick_buys_what_the_amount_pays_for_and_never_more() {
        let pair = Pair::parse("BTC", "USDT").unwrap();
        let price = Decimal::from(60_300);
        let spend = Pair::whole(100_000_000, pair.quote_dp);
        let quantity = (spend / price).round_dp_with_strategy(pair.base_dp, RoundingStrategy::ToZero);
        let (base, quote) = pair.amounts(quantity, price, Side::Buy).unwrap();
        assert_eq!(base, 165_837);
        assert!(quote <= 100_000_000, "{quote}");
    }
}
