//! Scheduled orders, DCA (spec "Trading" rules 4-5; sandbox-rules.md):
//! each tick buys `currency` for `amount` of `quote_currency` at the market
//! price plus the spread, on the sandbox clock. Every tick that falls due
//! during a clock advance runs, in order. A tick that can't be paid records
//! a `failed` execution (too small to buy anything: `skipped`) and the
//! schedule goes on.
//!
//! Decisions where the documents are silent: a schedule only buys (its
//! `currency` is the base of a non-NGN pair); `total_executions` counts
//! completed ticks; each completed tick is also an order (`market`, no
//! quote: `quote_id` is the nil UUID) in the orders list; `completed` is
//! never reached, since schedules have no end; DELETE cancels.

use chrono::{DateTime, Datelike, Duration, NaiveDate, NaiveTime, Utc};
use paydesk_api::models::trading::{Execution, NewSchedule, Order, Schedule, ScheduleUpdate};
use paydesk_api::units::BaseUnits;
use paydesk_api::wire::codes;
use rust_decimal::{Decimal, RoundingStrategy};
use uuid::Uuid;

use super::spot::{settle_trade, Pair, Side};
use crate::error::ApiError;
use crate::scheduler::{Job, Scheduler};
use crate::state::{Company, Effects};

#[derive(Debug, Clone)]
pub struct ScheduleRecord {
    pub schedule: Schedule,
    pub executions: Vec<Execution>,
    /// Bumped whenever the next tick changes; a queued tick of an older
    /// generation does nothing.
    generation: u64,
}

#[derive(Debug, Default)]
pub struct ScheduleBook {
    pub records: Vec<ScheduleRecord>,
}

impl ScheduleBook {
    pub fn get(&self, id: Uuid) -> Result<&ScheduleRecord, ApiError> {
        self.records
            .iter()
            .find(|r| r.schedule.id == id)
            .ok_or_else(|| ApiError::NotFound(format!("no scheduled order {id}")))
    }

    fn index(&self, id: Uuid) -> Result<usize, ApiError> {
        self.records
            .iter()
            .position(|r| r.schedule.id == id)
            .ok_or_else(|| ApiError::NotFound(format!("no scheduled order {id}")))
    }
}

/// When a schedule fires: frequency, weekday or day of month, time of day.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    pub frequency: Frequency,
    pub day_of_week: u32,
    pub day_of_month: u32,
    pub time: NaiveTime,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frequency {
    Daily,
    Weekly,
    Monthly,
}

impl Timing {
    pub fn check(
        frequency: &str,
        day_of_week: u32,
        day_of_month: u32,
        execution_time: &str,
    ) -> Result<Self, ApiError> {
        let frequency = match frequency.trim().to_ascii_lowercase().as_str() {
            "daily" => Frequency::Daily,
            "weekly" => Frequency::Weekly,
            "monthly" => Frequency::Monthly,
            _ => return Err(ApiError::field("frequency", "must be daily, weekly or monthly")),
        };
        let time = NaiveTime::parse_from_str(execution_time.trim(), "%H:%M")
            .map_err(|_| ApiError::field("execution_time", "must be HH:MM in 24-hour UTC, e.g. 09:30"))?;
        if frequency == Frequency::Weekly && day_of_week > 6 {
            return Err(ApiError::field(
                "day_of_week",
                "must be 0 (Sunday) to 6 (Saturday)",
            ));
        }
        if frequency == Frequency::Monthly && !(1..=31).contains(&day_of_month) {
            return Err(ApiError::field(
                "day_of_month",
                "must be 1 to 31 (29-31 skip months that lack the day)",
            ));
        }
        Ok(Timing {
            frequency,
            day_of_week,
            day_of_month,
            time,
        })
    }

    fn on(&self, date: NaiveDate) -> DateTime<Utc> {
        date.and_time(self.time).and_utc()
    }

    /// The first tick strictly after `after`.
    pub fn next_after(&self, after: DateTime<Utc>) -> DateTime<Utc> {
        let today = after.date_naive();
        match self.frequency {
            Frequency::Daily => {
                let t = self.on(today);
                if t > after {
                    t
                } else {
                    self.on(today + Duration::days(1))
                }
            }
            Frequency::Weekly => (0..=7)
                .map(|d| today + Duration::days(d))
                .filter(|d| d.weekday().num_days_from_sunday() == self.day_of_week)
                .map(|d| self.on(d))
                .find(|t| *t > after)
                .expect("a weekday recurs within 8 days"),
            Frequency::Monthly => {
                let (mut year, mut month) = (today.year(), today.month());
                loop {
                    if let Some(date) = NaiveDate::from_ymd_opt(year, month, self.day_of_month) {
                        let t = self.on(date);
                        if t > after {
                            return t;
                        }
                    }
                    (year, month) = if month == 12 {
                        (year + 1, 1)
                    } else {
                        (year, month + 1)
                    };
                }
            }
        }
    }
}

fn frequency_name(f: Frequency) -> &'static str {
    match f {
        Frequency::Daily => "daily",
        Frequency::Weekly => "weekly",
        Frequency::Monthly => "monthly",
    }
}

fn queue(scheduler: &mut Scheduler, company: Uuid, record: &mut ScheduleRecord) {
    record.generation += 1;
    if let Some(at) = record.schedule.next_execution_at {
        scheduler.schedule(
            at,
            Job::ScheduleTick {
                company_id: company,
                schedule_id: record.schedule.id,
                generation: record.generation,
            },
        );
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
    let schedule = Schedule {
        id: Uuid::new_v4(),
        company_id: company.id,
        currency: pair.base.code().to_owned(),
        quote_currency: pair.quote.code().to_owned(),
        amount: req.amount,
        frequency: frequency_name(timing.frequency).to_owned(),
        day_of_week: if timing.frequency == Frequency::Weekly {
            req.day_of_week
        } else {
            0
        },
        day_of_month: if timing.frequency == Frequency::Monthly {
            req.day_of_month
        } else {
            0
        },
        execution_time: timing.time.format("%H:%M").to_string(),
        status: "active".to_owned(),
        next_execution_at: Some(timing.next_after(fx.now)),
        last_executed_at: String::new(),
        total_executions: 0,
        total_amount_spent: BaseUnits::ZERO,
        total_quantity_acquired: BaseUnits::ZERO,
        reference: req.reference.clone(),
        created_at: fx.now,
        updated_at: fx.now,
    };
    let mut record = ScheduleRecord {
        schedule: schedule.clone(),
        executions: Vec::new(),
        generation: 0,
    };
    queue(fx.scheduler, company.id, &mut record);
    company.schedules.records.push(record);
    Ok(schedule)
}

fn timing_of(s: &Schedule) -> Timing {
    Timing::check(&s.frequency, s.day_of_week, s.day_of_month, &s.execution_time)
        .expect("stored timings are valid")
}

/// Applies a partial update (rule 5).
pub fn update(
    company: &mut Company,
    id: Uuid,
    req: &ScheduleUpdate,
    fx: &mut Effects<'_>,
) -> Result<Schedule, ApiError> {
    let index = company.schedules.index(id)?;
    let current = company.schedules.records[index].schedule.clone();
    if matches!(current.status.as_str(), "cancelled" | "completed") {
        return Err(ApiError::unprocessable(
            codes::INVALID_STATE,
            format!("the schedule is {}; it can no longer change", current.status),
        ));
    }
    if let Some(amount) = req.amount {
        if amount.value() <= 0 {
            return Err(ApiError::field("amount", "must be a positive integer"));
        }
    }
    let status = match req.status.as_deref().map(str::trim) {
        None => None,
        Some(s @ ("paused" | "active")) => Some(s.to_owned()),
        Some(_) => {
            return Err(ApiError::field(
                "status",
                "must be paused or active (cancel with DELETE)",
            ))
        }
    };
    let retimed = req.frequency.is_some()
        || req.day_of_week.is_some()
        || req.day_of_month.is_some()
        || req.execution_time.is_some();
    let timing = Timing::check(
        req.frequency.as_deref().unwrap_or(&current.frequency),
        req.day_of_week.unwrap_or(current.day_of_week),
        req.day_of_month.unwrap_or(current.day_of_month),
        req.execution_time.as_deref().unwrap_or(&current.execution_time),
    )?;
    let record = &mut company.schedules.records[index];
    let s = &mut record.schedule;
    if let Some(amount) = req.amount {
        s.amount = amount;
    }
    let mut requeue = false;
    if retimed {
        s.frequency = frequency_name(timing.frequency).to_owned();
        s.day_of_week = if timing.frequency == Frequency::Weekly {
            timing.day_of_week
        } else {
            0
        };
        s.day_of_month = if timing.frequency == Frequency::Monthly {
            timing.day_of_month
        } else {
            0
        };
        s.execution_time = timing.time.format("%H:%M").to_string();
        s.next_execution_at = Some(timing.next_after(fx.now));
        requeue = true;
    }
    if let Some(status) = status {
        if status == "active" && s.status == "paused" {
            // Ticks missed while paused never run.
            if s.next_execution_at.is_some_and(|t| t <= fx.now) {
                s.next_execution_at = Some(timing.next_after(fx.now));
            }
            requeue = true;
        }
        s.status = status;
    }
    s.updated_at = fx.now;
    if requeue && s.status == "active" {
        queue(fx.scheduler, company.id, record);
    }
    Ok(record.schedule.clone())
}

pub fn cancel(company: &mut Company, id: Uuid, now: DateTime<Utc>) -> Result<Schedule, ApiError> {
    let index = company.schedules.index(id)?;
    let record = &mut company.schedules.records[index];
    if matches!(record.schedule.status.as_str(), "cancelled" | "completed") {
        return Err(ApiError::unprocessable(
            codes::INVALID_STATE,
            format!("the schedule is already {}", record.schedule.status),
        ));
    }
    record.generation += 1;
    record.schedule.status = "cancelled".to_owned();
    record.schedule.next_execution_at = None;
    record.schedule.updated_at = now;
    Ok(record.schedule.clone())
}

/// One tick: buy, record the execution, queue the next tick.
pub fn tick(company: &mut Company, id: Uuid, generation: u64, fx: &mut Effects<'_>) {
    let Ok(index) = company.schedules.index(id) else {
        return;
    };
    let record = &company.schedules.records[index];
    if record.generation != generation || record.schedule.status != "active" {
        return;
    }
    let s = record.schedule.clone();
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
        status: status.to_owned(),
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
    s.last_executed_at = fx.now.to_rfc3339();
    s.next_execution_at = Some(timing_of(s).next_after(fx.now));
    s.updated_at = fx.now;
    queue(fx.scheduler, company.id, record);
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
        status: "filled".to_owned(),
        exchange: None,
        created_at: fx.now,
        updated_at: fx.now,
        filled_quantity: quantity,
        remaining_quantity: Decimal::ZERO,
        quote_id: Uuid::nil(),
        fills: Vec::new(),
        quote_consumption: None,
        reference: format!("SCHEDULE_{}", s.id.simple()),
    };
    company.trades.record_order(order.clone());
    Ok((order, base, quote))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn next_ticks_follow_each_frequency() {
        let daily = Timing::check("daily", 0, 0, "09:30").unwrap();
        assert_eq!(
            daily.next_after(at("2026-11-23T09:00:00Z")),
            at("2026-11-23T09:30:00Z")
        );
        assert_eq!(
            daily.next_after(at("2026-11-23T09:30:00Z")),
            at("2026-11-24T09:30:00Z")
        );
        // 2026-11-23 is a Monday; Sunday is 0.
        let sunday = Timing::check("weekly", 0, 0, "08:00").unwrap();
        assert_eq!(
            sunday.next_after(at("2026-11-23T10:00:00Z")),
            at("2026-11-29T08:00:00Z")
        );
        let monday = Timing::check("weekly", 1, 0, "08:00").unwrap();
        assert_eq!(
            monday.next_after(at("2026-11-23T08:00:00Z")),
            at("2026-11-30T08:00:00Z")
        );
    }

    #[test]
    fn days_29_to_31_skip_months_that_lack_them() {
        let on_31 = Timing::check("monthly", 0, 31, "00:00").unwrap();
        assert_eq!(
            on_31.next_after(at("2026-11-23T00:00:00Z")),
            at("2026-12-31T00:00:00Z")
        );
        assert_eq!(
            on_31.next_after(at("2026-12-31T00:00:00Z")),
            at("2027-01-31T00:00:00Z")
        );
        assert_eq!(
            on_31.next_after(at("2027-01-31T00:00:00Z")),
            at("2027-03-31T00:00:00Z")
        );
        let on_29 = Timing::check("monthly", 0, 29, "12:00").unwrap();
        assert_eq!(
            on_29.next_after(at("2027-01-30T00:00:00Z")),
            at("2027-03-29T12:00:00Z")
        );
        assert_eq!(
            on_29.next_after(at("2028-01-30T00:00:00Z")),
            at("2028-02-29T12:00:00Z")
        );
        assert!(Timing::check("monthly", 0, 32, "00:00").is_err());
        assert!(Timing::check("weekly", 7, 0, "00:00").is_err());
        assert!(Timing::check("hourly", 0, 0, "00:00").is_err());
        assert!(Timing::check("daily", 0, 0, "25:00").is_err());
    }
}
