//! When recurring work runs: a timing (daily, weekly or monthly at HH:MM
//! UTC) and a cadence that can be paused, resumed, retimed and cancelled.
//! Scheduled orders and bulk-transfer schedules share it (spec "Trading"
//! rules 4-5; sandbox-rules.md).
//!
//! Each queued tick carries the cadence's generation; any change that
//! moves the next tick bumps it, so a tick queued before runs no more.

mod lifecycle;

use chrono::{DateTime, Datelike, Duration, NaiveDate, NaiveTime, Utc};
use paydesk_api::wire::codes;

use crate::error::ApiError;
use crate::scheduler::{Job, Scheduler};
pub use lifecycle::{transition, Refusal, ScheduleEvent, ScheduleStatus};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Frequency {
    Daily,
    Weekly,
    Monthly,
}

/// Frequency, weekday (0 = Sunday) or day of month, time of day.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct Timing {
    pub frequency: Frequency,
    day_of_week: u32,
    day_of_month: u32,
    time: NaiveTime,
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

    /// This timing with the given parts changed; `None` when that changes
    /// nothing (parts sent again with their current value are no change).
    pub fn changed(
        &self,
        frequency: Option<&str>,
        day_of_week: Option<u32>,
        day_of_month: Option<u32>,
        execution_time: Option<&str>,
    ) -> Result<Option<Timing>, ApiError> {
        if frequency.is_none() && day_of_week.is_none() && day_of_month.is_none() && execution_time.is_none()
        {
            return Ok(None);
        }
        let new = Timing::check(
            frequency.unwrap_or(self.frequency_name()),
            day_of_week.unwrap_or(self.day_of_week()),
            day_of_month.unwrap_or(self.day_of_month()),
            execution_time.unwrap_or(&self.execution_time()),
        )?;
        Ok((new.normalized() != self.normalized()).then_some(new))
    }

    /// The timing with the day that does not apply set to 0.
    fn normalized(&self) -> (Frequency, u32, u32, NaiveTime) {
        (self.frequency, self.day_of_week(), self.day_of_month(), self.time)
    }

    pub fn frequency_name(&self) -> &'static str {
        match self.frequency {
            Frequency::Daily => "daily",
            Frequency::Weekly => "weekly",
            Frequency::Monthly => "monthly",
        }
    }

    /// 0 unless weekly.
    pub fn day_of_week(&self) -> u32 {
        if self.frequency == Frequency::Weekly {
            self.day_of_week
        } else {
            0
        }
    }

    /// 0 unless monthly.
    pub fn day_of_month(&self) -> u32 {
        if self.frequency == Frequency::Monthly {
            self.day_of_month
        } else {
            0
        }
    }

    pub fn execution_time(&self) -> String {
        self.time.format("%H:%M").to_string()
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

/// A schedule's state: active, paused, cancelled or completed, and its
/// next tick.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Cadence {
    pub timing: Timing,
    pub status: ScheduleStatus,
    pub next: Option<DateTime<Utc>>,
    generation: u64,
}

/// A cadence as snapshots and the data directory keep it; a status the
/// sandbox never writes is refused.
#[derive(serde::Deserialize)]
struct KeptCadence {
    timing: Timing,
    status: String,
    next: Option<DateTime<Utc>>,
    generation: u64,
}

impl<'de> serde::Deserialize<'de> for Cadence {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let kept = KeptCadence::deserialize(deserializer)?;
        let status = Some(ScheduleStatus::from(kept.status.as_str()))
            .filter(|s| !matches!(s, ScheduleStatus::Unknown(_)))
            .ok_or_else(|| serde::de::Error::custom(format!("unknown schedule status '{}'", kept.status)))?;
        Ok(Cadence {
            timing: kept.timing,
            status,
            next: kept.next,
            generation: kept.generation,
        })
    }
}

impl Cadence {
    pub fn start(timing: Timing, now: DateTime<Utc>) -> Self {
        Cadence {
            timing,
            status: ScheduleStatus::Active,
            next: Some(timing.next_after(now)),
            generation: 0,
        }
    }

    /// Applies a change of timing or status (`paused` or `active`): the
    /// next tick moves only when the timing changes, and on resume a
    /// passed one moves to the next from now (ticks missed while paused
    /// never run). Returns whether a new tick must be queued.
    pub fn change(
        &mut self,
        timing: Option<Timing>,
        status: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<bool, ApiError> {
        let refused = |refusal: Refusal| {
            ApiError::unprocessable(
                codes::INVALID_STATE,
                format!("the schedule is {}; it can no longer change", refusal.from),
            )
        };
        transition(&self.status, ScheduleEvent::Retime).map_err(refused)?;
        let event = match status.map(str::trim) {
            None => None,
            Some("paused") => Some(ScheduleEvent::Pause),
            Some("active") => Some(ScheduleEvent::Resume),
            Some(_) => {
                return Err(ApiError::field(
                    "status",
                    "must be paused or active (cancel with DELETE)",
                ))
            }
        };
        let mut requeue = false;
        if let Some(timing) = timing {
            self.timing = timing;
            self.next = Some(timing.next_after(now));
            requeue = true;
        }
        if event == Some(ScheduleEvent::Resume) && self.status == ScheduleStatus::Paused {
            if self.next.is_none_or(|t| t <= now) {
                self.next = Some(self.timing.next_after(now));
            }
            requeue = true;
        }
        if let Some(event) = event {
            self.status = transition(&self.status, event).map_err(refused)?;
        }
        Ok(requeue && self.status == ScheduleStatus::Active)
    }

    /// The schedule reached its end: no more ticks.
    pub fn complete(&mut self) {
        if let Ok(next) = transition(&self.status, ScheduleEvent::Complete) {
            self.status = next;
        }
        self.next = None;
        self.generation += 1;
    }

    pub fn cancel(&mut self) -> Result<(), ApiError> {
        self.status = transition(&self.status, ScheduleEvent::Cancel).map_err(|refusal| {
            ApiError::unprocessable(
                codes::INVALID_STATE,
                format!("the schedule is already {}", refusal.from),
            )
        })?;
        self.next = None;
        self.generation += 1;
        Ok(())
    }

    /// Queues the next tick, made by `job` from the new generation.
    pub fn queue(&mut self, scheduler: &mut Scheduler, job: impl FnOnce(u64) -> Job) {
        self.generation += 1;
        if let (Some(at), ScheduleStatus::Active) = (self.next, &self.status) {
            scheduler.schedule(at, job(self.generation));
        }
    }

    /// Whether a tick of `generation` should run now.
    pub fn is_due(&self, generation: u64) -> bool {
        self.generation == generation && self.status == ScheduleStatus::Active
    }

    /// A tick ran: the next one is the first after now.
    pub fn ticked(&mut self, now: DateTime<Utc>) {
        self.next = Some(self.timing.next_after(now));
    }
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

    #[test]
    fn pausing_keeps_the_next_tick_and_resuming_skips_missed_ones() {
        let t0 = at("2026-11-23T00:00:00Z");
        let mut c = Cadence::start(Timing::check("daily", 0, 0, "12:00").unwrap(), t0);
        assert_eq!(c.next, Some(at("2026-11-23T12:00:00Z")));
        assert!(!c.change(None, Some("paused"), t0).unwrap());
        assert_eq!(c.next, Some(at("2026-11-23T12:00:00Z")));
        let later = at("2026-11-25T13:00:00Z");
        assert!(c.change(None, Some("active"), later).unwrap());
        assert_eq!(c.next, Some(at("2026-11-26T12:00:00Z")));
        assert!(c.change(None, Some("stopped"), later).is_err());
        let same = c
            .timing
            .changed(Some("daily"), Some(0), Some(0), Some("12:00"))
            .unwrap();
        assert!(same.is_none(), "the same timing sent again is no change");
        assert!(c
            .timing
            .changed(None, None, None, Some("13:00"))
            .unwrap()
            .is_some());
        c.cancel().unwrap();
        assert!(c.cancel().is_err() && c.next.is_none());
    }
}
