//! Scheduled orders (DCA): a standing instruction to buy an asset for a
//! fixed amount of a quote currency on a cadence. Creating one goes
//! through the gate once, with its per-tick amount and cadence in what is
//! approved; its ticks then run on the service. Pausing, resuming and
//! cancelling are changes to it and go through the gate too (at once by
//! default: they spend nothing new until the next tick).

use paydesk_api::models::trading::{NewSchedule, Schedule, ScheduleStatus, ScheduleUpdate};
use paydesk_api::units::{decimal_to_units, units_to_decimal, BaseUnits, Currency};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::access::permissions::Permission;
use crate::access::Member;
use crate::approvals::Filing;
use crate::approvals::{gate, Gated};
use crate::approvals::{Action, ExecError, Fact, Run, Step};
use crate::approvals::{Kind, Policy};
use crate::state::AppState;
use crate::web::amount;
use crate::web::form::{Failure, Refusal};

/// What the service buys with and what it buys.
pub const QUOTE_CURRENCIES: &[&str] = &["USDT", "USDC"];
pub const ASSETS: &[&str] = &["BTC", "USDT", "USDC"];
pub const WEEKDAYS: &[&str] = &[
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// The schedule as typed.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
pub struct ScheduleForm {
    #[serde(default)]
    pub currency: String,
    #[serde(default)]
    pub quote_currency: String,
    /// Per tick, in whole units of the quote currency.
    #[serde(default)]
    pub amount: String,
    #[serde(default)]
    pub frequency: String,
    #[serde(default)]
    pub day_of_week: String,
    #[serde(default)]
    pub day_of_month: String,
    #[serde(default)]
    pub execution_time: String,
    /// Fixed when the form is shown, so a double submit files once.
    #[serde(default)]
    pub reference: String,
}

fn field(name: &'static str, message: &str) -> Failure {
    Refusal::field(name, message).into()
}

impl ScheduleForm {
    /// The schedule to create, every field checked.
    fn check(&self) -> Result<NewSchedule, Failure> {
        if !ASSETS.contains(&self.currency.as_str()) {
            return Err(field("currency", "Choose the asset to buy."));
        }
        if !QUOTE_CURRENCIES.contains(&self.quote_currency.as_str()) || self.quote_currency == self.currency {
            return Err(field(
                "quote_currency",
                "Choose USDT or USDC to pay with, not the asset bought.",
            ));
        }
        let unit =
            Currency::parse(&self.quote_currency).map_err(|e| field("quote_currency", &e.to_string()))?;
        let decimals = unit.decimals().unwrap_or(6);
        let per_tick = amount::parse("The amount per buy", &self.amount, unit.code(), decimals)
            .map_err(|m| field("amount", &m))?;
        let units = decimal_to_units(per_tick, decimals).map_err(|e| field("amount", &e.to_string()))?;
        let (day_of_week, day_of_month) = match self.frequency.as_str() {
            "daily" => (0, 0),
            "weekly" => match self.day_of_week.parse::<u32>() {
                Ok(d) if d <= 6 => (d, 0),
                _ => return Err(field("day_of_week", "Choose the day of the week.")),
            },
            "monthly" => match self.day_of_month.parse::<u32>() {
                Ok(d) if (1..=28).contains(&d) => (0, d),
                _ => {
                    return Err(field(
                        "day_of_month",
                        "Choose a day of the month from 1 to 28, so no month skips it.",
                    ))
                }
            },
            _ => return Err(field("frequency", "Choose daily, weekly or monthly.")),
        };
        let time = chrono::NaiveTime::parse_from_str(self.execution_time.trim(), "%H:%M").map_err(|_| {
            field(
                "execution_time",
                "Enter the time of day as HH:MM, in UTC, e.g. 09:30.",
            )
        })?;
        if Uuid::parse_str(self.reference.trim_start_matches("paydesk-dca-")).is_err() {
            return Err(Refusal::form("This form is incomplete; reload the page and try again.").into());
        }
        Ok(NewSchedule {
            currency: self.currency.clone(),
            quote_currency: self.quote_currency.clone(),
            amount: BaseUnits(units),
            frequency: self.frequency.clone(),
            day_of_week,
            day_of_month,
            execution_time: time.format("%H:%M").to_string(),
            reference: self.reference.clone(),
            ..NewSchedule::default()
        })
    }
}

/// The cadence in words: "daily at 09:30 UTC", "every Monday at …".
pub fn cadence(frequency: &str, day_of_week: u32, day_of_month: u32, time: &str) -> String {
    match frequency {
        "weekly" => format!(
            "every {} at {time} UTC",
            WEEKDAYS.get(day_of_week as usize).unwrap_or(&"?")
        ),
        "monthly" => format!("monthly on day {day_of_month} at {time} UTC"),
        _ => format!("daily at {time} UTC"),
    }
}

/// A per-tick amount in whole units of its currency.
pub fn whole(units: BaseUnits, currency: &str) -> Decimal {
    let decimals = Currency::parse(currency)
        .ok()
        .and_then(|c| c.decimals())
        .unwrap_or(6);
    units_to_decimal(units.0, decimals).normalize()
}

pub struct ScheduleAction;

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct ScheduleProgress {
    pub schedule_id: Option<Uuid>,
}

impl Action for ScheduleAction {
    type Payload = NewSchedule;
    type Progress = ScheduleProgress;

    const KIND: Kind = Kind {
        key: "trade_schedule",
        label: "Scheduled orders",
        read_permission: Permission::TradingRead,
        request_permission: Permission::TradingRequest,
        approve_permission: Permission::TradingApprove,
    };

    /// Weighed by one tick's amount: at once up to 1,000 a buy, one
    /// approval above.
    fn default_policy(&self) -> Policy {
        Policy::at_once_up_to(Decimal::from(1000))
    }

    fn describe(&self, s: &NewSchedule) -> Vec<Fact> {
        vec![
            Fact::new("Buy", format!("{} with {}", s.currency, s.quote_currency)),
            Fact::new(
                "Each time",
                format!("{} {}", whole(s.amount, &s.quote_currency), s.quote_currency),
            ),
            Fact::new(
                "When",
                cadence(&s.frequency, s.day_of_week, s.day_of_month, &s.execution_time),
            ),
            Fact::new("Until", "paused or cancelled"),
        ]
    }

    async fn execute(
        &self,
        run: &mut Run<'_, ScheduleProgress>,
        s: &NewSchedule,
    ) -> Result<Step<NewSchedule>, ExecError> {
        // The reference makes the create idempotent: a lost answer is safe to ask again.
        let created = run.client()?.create_scheduled_order(s).await?;
        run.progress.schedule_id = Some(created.id);
        run.save("created", &format!("schedule {}", created.id)).await?;
        let next = created
            .next_execution_at
            .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string());
        Ok(Step::Done(format!(
            "Schedule created; first buy {}.",
            next.unwrap_or_else(|| "pending".to_owned())
        )))
    }
}

/// Files a new schedule through the gate: previewed until confirmed.
#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id))]
pub async fn create(
    state: &AppState,
    member: &Member,
    form: &ScheduleForm,
    confirmed: bool,
) -> Result<Gated, Failure> {
    let schedule = form.check()?;
    let per_tick = whole(schedule.amount, &schedule.quote_currency);
    let summary = format!(
        "Buy {} with {per_tick} {} {}",
        schedule.currency,
        schedule.quote_currency,
        cadence(
            &schedule.frequency,
            schedule.day_of_week,
            schedule.day_of_month,
            &schedule.execution_time
        )
    );
    let filing = Filing {
        target: &schedule.reference.clone(),
        summary: &summary,
        amount: per_tick,
        currency: &schedule.quote_currency.clone(),
        reference: Some(schedule.reference.clone()),
        payload: schedule,
        payee_saved_at: None,
    };
    gate::<ScheduleAction>(state, member, filing, confirmed).await
}

/// A change to a schedule: pause, resume or cancel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    Pause,
    Resume,
    Cancel,
}

impl Change {
    pub fn parse(s: &str) -> Option<Change> {
        match s {
            "pause" => Some(Change::Pause),
            "resume" => Some(Change::Resume),
            "cancel" => Some(Change::Cancel),
            _ => None,
        }
    }

    pub fn verb(self) -> &'static str {
        match self {
            Change::Pause => "Pause",
            Change::Resume => "Resume",
            Change::Cancel => "Cancel",
        }
    }

    /// What the schedule page says once it is done.
    pub fn done(self) -> &'static str {
        match self {
            Change::Pause => "The schedule is paused; no buys until it is resumed.",
            Change::Resume => "The schedule is active again; buys resume at the next time it names.",
            Change::Cancel => "The schedule is cancelled; no more buys.",
        }
    }

    /// The status it sets; none for a cancel, which the service ends by a
    /// call of its own.
    pub fn sets(self) -> Option<ScheduleStatus> {
        match self {
            Change::Pause => Some(ScheduleStatus::Paused),
            Change::Resume => Some(ScheduleStatus::Active),
            Change::Cancel => None,
        }
    }

    /// Refused unless the schedule's status is one it applies to; `what`
    /// names the schedule ("The schedule", "The recurring batch").
    pub fn check(self, what: &str, status: &ScheduleStatus) -> Result<(), Refusal> {
        if self.applies_to(status) {
            return Ok(());
        }
        let verb = self.verb().to_lowercase();
        Err(Refusal::form(format!("{what} is {status}; it can't be {verb}d.")))
    }

    /// The statuses it applies to.
    pub fn applies_to(self, status: &ScheduleStatus) -> bool {
        match self {
            Change::Pause => *status == ScheduleStatus::Active,
            Change::Resume => *status == ScheduleStatus::Paused,
            Change::Cancel => matches!(status, ScheduleStatus::Active | ScheduleStatus::Paused),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChangePayload {
    pub schedule_id: Uuid,
    pub change: Change,
    /// The schedule as it stood, in words.
    pub schedule: String,
}

pub struct ScheduleChangeAction;

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct ChangeProgress {}

impl Action for ScheduleChangeAction {
    type Payload = ChangePayload;
    type Progress = ChangeProgress;

    const KIND: Kind = Kind {
        key: "trade_schedule_change",
        label: "Schedule changes",
        read_permission: Permission::TradingRead,
        request_permission: Permission::TradingRequest,
        approve_permission: Permission::TradingApprove,
    };

    fn default_policy(&self) -> Policy {
        Policy::at_once()
    }

    fn describe(&self, p: &ChangePayload) -> Vec<Fact> {
        vec![
            Fact::new("Change", p.change.verb()),
            Fact::linked(
                "Schedule",
                p.schedule.clone(),
                format!("/trading/scheduled/{}", p.schedule_id),
            ),
        ]
    }

    async fn execute(
        &self,
        run: &mut Run<'_, ChangeProgress>,
        p: &ChangePayload,
    ) -> Result<Step<ChangePayload>, ExecError> {
        let client = run.client()?;
        let id = p.schedule_id.to_string();
        let after = match p.change.sets() {
            Some(status) => {
                let update = ScheduleUpdate {
                    status: Some(status),
                    ..ScheduleUpdate::default()
                };
                client.update_scheduled_order(&id, &update).await?
            }
            None => client.cancel_scheduled_order(&id).await?,
        };
        Ok(Step::Done(format!("The schedule is {}.", after.status)))
    }
}

/// Pauses, resumes or cancels a schedule through the gate.
#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id, schedule = %schedule.id))]
pub async fn change(
    state: &AppState,
    member: &Member,
    schedule: &Schedule,
    change: Change,
    confirmed: bool,
) -> Result<Gated, Failure> {
    change.check("The schedule", &schedule.status)?;
    let words = format!(
        "buy {} with {} {} {}",
        schedule.currency,
        whole(schedule.amount, &schedule.quote_currency),
        schedule.quote_currency,
        cadence(
            &schedule.frequency,
            schedule.day_of_week,
            schedule.day_of_month,
            &schedule.execution_time
        )
    );
    let summary = format!("{} the schedule to {words}", change.verb());
    let target = format!("schedule:{}", schedule.id);
    let payload = ChangePayload {
        schedule_id: schedule.id,
        change,
        schedule: words,
    };
    let filing = Filing {
        target: &target,
        summary: &summary,
        amount: Decimal::ZERO,
        currency: &schedule.quote_currency,
        reference: None,
        payload,
        payee_saved_at: None,
    };
    gate::<ScheduleChangeAction>(state, member, filing, confirmed).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form() -> ScheduleForm {
        ScheduleForm {
            currency: "BTC".into(),
            quote_currency: "USDT".into(),
            amount: "25".into(),
            frequency: "weekly".into(),
            day_of_week: "1".into(),
            day_of_month: String::new(),
            execution_time: "9:30".into(),
            reference: format!("paydesk-dca-{}", Uuid::new_v4().simple()),
        }
    }

    #[test]
    fn a_schedule_is_checked_and_sent_in_smallest_units() {
        let s = form().check().unwrap();
        assert_eq!(s.amount, BaseUnits(25_000_000));
        assert_eq!(
            (s.day_of_week, s.day_of_month, s.execution_time.as_str()),
            (1, 0, "09:30")
        );
        assert_eq!(cadence("weekly", 1, 0, "09:30"), "every Monday at 09:30 UTC");
    }

    #[test]
    fn bad_fields_are_refused_by_name() {
        let refused = |f: ScheduleForm| match f.check() {
            Err(Failure::Refused(r)) => r.field,
            _ => panic!("accepted"),
        };
        assert_eq!(
            refused(ScheduleForm {
                amount: "25.0000001".into(),
                ..form()
            }),
            Some("amount")
        );
        assert_eq!(
            refused(ScheduleForm {
                frequency: "monthly".into(),
                day_of_month: "31".into(),
                ..form()
            }),
            Some("day_of_month")
        );
        assert_eq!(
            refused(ScheduleForm {
                execution_time: "25:00".into(),
                ..form()
            }),
            Some("execution_time")
        );
        assert_eq!(
            refused(ScheduleForm {
                quote_currency: "BTC".into(),
                ..form()
            }),
            Some("quote_currency")
        );
    }
}
