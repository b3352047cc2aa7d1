//! Recurring batches (bulk schedules): the same CSV of payments sent on a
//! cadence by the service. Creating one goes through the gate with every
//! row and the cadence in what is approved (one approval by default: each
//! run moves money); pausing, resuming and cancelling are changes to it and
//! go through the gate too (at once by default: they send nothing new).

use paydesk_api::models::bulk::{BulkSchedule, BulkScheduleUpdate, NewBulkSchedule};
use paydesk_api::units::{units_to_decimal, BaseUnits, Currency};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::action::BulkRow;
use super::sheet::{self, items_of, rows_message, SheetError};
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::approvals::Filing;
use crate::approvals::{gate, Gated};
use crate::approvals::{Action, ExecError, Fact, Run, Step};
use crate::approvals::{Kind, Policy};
use crate::state::AppState;
use crate::trading::schedules::{cadence, Change};
use crate::web::form::{Failure, Refusal};
use crate::withdrawals::short_address;

const REFERENCE_PREFIX: &str = "paydesk-bulk-schedule-";

/// The schedule form as typed.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
pub struct ScheduleDraft {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub frequency: String,
    #[serde(default)]
    pub day_of_week: String,
    #[serde(default)]
    pub day_of_month: String,
    #[serde(default)]
    pub execution_time: String,
    #[serde(default)]
    pub csv: String,
    /// Fixed when the form is shown, so a double submit files once.
    #[serde(default)]
    pub reference: String,
}

impl ScheduleDraft {
    pub fn fresh() -> ScheduleDraft {
        ScheduleDraft {
            reference: format!("{REFERENCE_PREFIX}{}", Uuid::new_v4().simple()),
            frequency: "monthly".to_owned(),
            day_of_month: "1".to_owned(),
            execution_time: "09:00".to_owned(),
            ..ScheduleDraft::default()
        }
    }
}

/// The recurring batch as approved.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SchedulePayload {
    pub name: String,
    pub currency: String,
    pub decimals: u32,
    pub frequency: String,
    pub day_of_week: u32,
    pub day_of_month: u32,
    pub execution_time: String,
    /// Of every row, each run.
    pub amount: BaseUnits,
    pub rows: Vec<BulkRow>,
}

impl SchedulePayload {
    fn when(&self) -> String {
        cadence(
            &self.frequency,
            self.day_of_week,
            self.day_of_month,
            &self.execution_time,
        )
    }

    fn show(&self, units: BaseUnits) -> String {
        sheet::shown(units, &self.currency)
    }
}

/// The cadence fields checked: (frequency, day of week, day of month, HH:MM).
fn cadence_of(d: &ScheduleDraft) -> Result<(String, u32, u32, String), Refusal> {
    let (dow, dom) = match d.frequency.as_str() {
        "daily" => (0, 0),
        "weekly" => match d.day_of_week.parse::<u32>() {
            Ok(n) if n <= 6 => (n, 0),
            _ => return Err(Refusal::field("day_of_week", "Choose the day of the week.")),
        },
        "monthly" => match d.day_of_month.parse::<u32>() {
            Ok(n) if (1..=28).contains(&n) => (0, n),
            _ => {
                return Err(Refusal::field(
                    "day_of_month",
                    "Choose a day of the month from 1 to 28, so no month skips it.",
                ))
            }
        },
        _ => return Err(Refusal::field("frequency", "Choose daily, weekly or monthly.")),
    };
    let time = chrono::NaiveTime::parse_from_str(d.execution_time.trim(), "%H:%M").map_err(|_| {
        Refusal::field(
            "execution_time",
            "Enter the time of day as HH:MM, in UTC, e.g. 09:30.",
        )
    })?;
    Ok((d.frequency.clone(), dow, dom, time.format("%H:%M").to_string()))
}

/// The form as a recurring batch, every row checked, or what to fix.
async fn payload(client: &paydesk_api::Client, d: &ScheduleDraft) -> Result<SchedulePayload, Failure> {
    if Uuid::parse_str(d.reference.trim_start_matches(REFERENCE_PREFIX)).is_err() {
        return Err(Refusal::form("The form is out of date; reload the page and fill it in again.").into());
    }
    let name = d.name.trim().to_owned();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(Refusal::field(
            "name",
            "Name the schedule (up to 100 characters), e.g. Monthly salaries.",
        )
        .into());
    }
    let (frequency, day_of_week, day_of_month, execution_time) = cadence_of(d)?;
    let raw = match sheet::read(&d.csv) {
        Ok(raw) => raw,
        Err(SheetError::File(m)) => return Err(Refusal::field("csv", m).into()),
        Err(SheetError::Rows(p)) => return Err(Refusal::field("csv", rows_message(&p)).into()),
    };
    let (currency, rows) = sheet::check_rows(client, &raw).await?;
    Ok(SchedulePayload {
        name,
        decimals: Currency::parse(&currency)
            .ok()
            .and_then(|c| c.decimals())
            .unwrap_or(0),
        currency,
        frequency,
        day_of_week,
        day_of_month,
        execution_time,
        amount: BaseUnits(rows.iter().map(|r| r.amount.value()).sum()),
        rows,
    })
}

pub struct BulkScheduleAction;

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct ScheduleProgress {
    pub schedule_id: Option<Uuid>,
}

impl Action for BulkScheduleAction {
    type Payload = SchedulePayload;
    type Progress = ScheduleProgress;

    const KIND: Kind = Kind {
        key: "bulk_schedule",
        label: "Recurring bulk transfers",
        read_permission: Permission::BulkRead,
        request_permission: Permission::BulkRequest,
        approve_permission: Permission::BulkApprove,
    };

    fn default_policy(&self) -> Policy {
        Policy::standard()
    }

    fn describe(&self, p: &SchedulePayload) -> Vec<Fact> {
        let mut facts = vec![
            Fact::new("Schedule", p.name.clone()),
            Fact::new(
                "Each run",
                format!(
                    "{} payments, {} (network fees on top)",
                    p.rows.len(),
                    p.show(p.amount)
                ),
            ),
            Fact::new("When", p.when()),
            Fact::new("Until", "paused or cancelled"),
        ];
        facts.extend(p.rows.iter().map(|r| {
            Fact::new(
                &format!("Row {}", r.row),
                format!(
                    "{} on {} to {} ({})",
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
        run: &mut Run<'_, ScheduleProgress>,
        p: &SchedulePayload,
    ) -> Result<Step<SchedulePayload>, ExecError> {
        // The reference makes the create idempotent: a lost answer is safe to ask again.
        let created = run
            .client()?
            .create_bulk_schedule(&NewBulkSchedule {
                name: p.name.clone(),
                currency: p.currency.clone(),
                items: items_of(&p.rows),
                frequency: p.frequency.clone(),
                day_of_week: p.day_of_week,
                day_of_month: p.day_of_month,
                execution_time: p.execution_time.clone(),
                reference: run.reference().to_owned(),
            })
            .await?;
        run.progress.schedule_id = Some(created.id);
        run.save("created", &format!("bulk schedule {}", created.id))
            .await?;
        let next = created
            .next_execution_at
            .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string());
        Ok(Step::Done(format!(
            "Recurring batch created; first run {}.",
            next.unwrap_or_else(|| "pending".to_owned())
        )))
    }
}

/// Files a recurring batch through the gate: previewed until confirmed.
#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id))]
pub async fn create(
    state: &AppState,
    member: &Member,
    d: &ScheduleDraft,
    confirmed: bool,
) -> Result<Gated, Failure> {
    let client = state.client_for(member, Permission::BulkRequest).await?;
    let payload = payload(&client, d).await?;
    let summary = format!(
        "Recurring batch '{}': {} payments, {} {}",
        payload.name,
        payload.rows.len(),
        payload.show(payload.amount),
        payload.when()
    );
    let amount = units_to_decimal(payload.amount.value(), payload.decimals);
    let currency = payload.currency.clone();
    let filing = Filing {
        target: &d.reference,
        summary: &summary,
        amount,
        currency: &currency,
        reference: Some(d.reference.clone()),
        payload,
        payee_saved_at: None,
    };
    gate::<BulkScheduleAction>(state, member, filing, confirmed).await
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChangePayload {
    pub schedule_id: Uuid,
    pub change: Change,
    /// The schedule as it stood, in words.
    pub schedule: String,
}

pub struct BulkScheduleChangeAction;

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct ChangeProgress {}

impl Action for BulkScheduleChangeAction {
    type Payload = ChangePayload;
    type Progress = ChangeProgress;

    const KIND: Kind = Kind {
        key: "bulk_schedule_change",
        label: "Recurring bulk transfer changes",
        read_permission: Permission::BulkRead,
        request_permission: Permission::BulkRequest,
        approve_permission: Permission::BulkApprove,
    };

    fn default_policy(&self) -> Policy {
        Policy::at_once()
    }

    fn describe(&self, p: &ChangePayload) -> Vec<Fact> {
        vec![
            Fact::new("Change", p.change.verb()),
            Fact::linked(
                "Recurring batch",
                p.schedule.clone(),
                "/bulk-transfers/schedules".to_owned(),
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
                let update = BulkScheduleUpdate {
                    status: Some(status),
                    ..BulkScheduleUpdate::default()
                };
                client.update_bulk_schedule(&id, &update).await?
            }
            None => client.cancel_bulk_schedule(&id).await?,
        };
        Ok(Step::Done(format!("The recurring batch is {}.", after.status)))
    }
}

/// The tenant's recurring batch `id` (the service lists them; it has no
/// page of one).
pub async fn find(
    client: &paydesk_api::Client,
    id: Uuid,
) -> Result<Option<BulkSchedule>, paydesk_api::ApiError> {
    Ok(client.bulk_schedules().await?.into_iter().find(|s| s.id == id))
}

/// Pauses, resumes or cancels a recurring batch through the gate.
#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id, schedule = %schedule.id))]
pub async fn change(
    state: &AppState,
    member: &Member,
    schedule: &BulkSchedule,
    change: Change,
    confirmed: bool,
) -> Result<Gated, Failure> {
    change.check("The recurring batch", &schedule.status)?;
    let words = format!(
        "'{}': {} payments of {} {}",
        schedule.name,
        schedule.items.len(),
        schedule.currency,
        cadence(
            &schedule.frequency,
            schedule.day_of_week,
            schedule.day_of_month,
            &schedule.execution_time
        )
    );
    let summary = format!("{} the recurring batch {words}", change.verb());
    let target = format!("bulk-schedule:{}", schedule.id);
    let payload = ChangePayload {
        schedule_id: schedule.id,
        change,
        schedule: words,
    };
    let filing = Filing {
        target: &target,
        summary: &summary,
        amount: Decimal::ZERO,
        currency: &schedule.currency,
        reference: None,
        payload,
        payee_saved_at: None,
    };
    gate::<BulkScheduleChangeAction>(state, member, filing, confirmed).await
}

/// A schedule's cadence in words, for the list.
pub fn when(s: &BulkSchedule) -> String {
    cadence(&s.frequency, s.day_of_week, s.day_of_month, &s.execution_time)
}

/// What one run of a schedule pays, in words.
pub fn per_run(s: &BulkSchedule) -> String {
    sheet::shown(
        BaseUnits(s.items.iter().map(|i| i.amount.value()).sum()),
        &s.currency,
    )
}
