//! A schedule's status and the moves between them, for scheduled orders
//! and bulk-transfer schedules alike: active and paused at the owner's
//! word, retimed while either, completed at its end, cancelled for good.

pub use paydesk_api::models::trading::ScheduleStatus;

/// What happens to a schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScheduleEvent {
    Pause,
    Resume,
    /// Its timing changes; its status stays.
    Retime,
    /// Its last execution ran.
    Complete,
    Cancel,
}

pub type Refusal = crate::lifecycle::Refusal<ScheduleStatus, ScheduleEvent>;

/// The one place a schedule's status changes. Pausing a paused schedule
/// or resuming an active one is allowed and changes nothing; cancelled
/// and completed are final.
pub fn transition(from: &ScheduleStatus, event: ScheduleEvent) -> Result<ScheduleStatus, Refusal> {
    use ScheduleEvent::*;
    use ScheduleStatus::*;
    match (from, event) {
        (Active | Paused, Pause) => Ok(Paused),
        (Active | Paused, Resume) => Ok(Active),
        (Active | Paused, Retime) => Ok(from.clone()),
        (Active | Paused, Complete) => Ok(Completed),
        (Active | Paused, Cancel) => Ok(Cancelled),
        _ => Err(Refusal {
            from: from.clone(),
            event,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::ScheduleEvent::*;
    use super::ScheduleStatus::*;
    use super::*;

    #[test]
    fn allowed_moves() {
        let allowed = [
            (Active, Pause, Paused),
            (Paused, Pause, Paused),
            (Paused, Resume, Active),
            (Active, Resume, Active),
            (Active, Retime, Active),
            (Paused, Retime, Paused),
            (Active, Complete, Completed),
            (Paused, Complete, Completed),
            (Active, Cancel, Cancelled),
            (Paused, Cancel, Cancelled),
        ];
        for (from, event, to) in allowed {
            assert_eq!(transition(&from, event), Ok(to), "{from:?} on {event:?}");
        }
    }

    #[test]
    fn cancelled_and_completed_are_final() {
        for from in [Cancelled, Completed, Unknown("archived".into())] {
            for event in [Pause, Resume, Retime, Complete, Cancel] {
                assert_eq!(
                    transition(&from, event),
                    Err(Refusal {
                        from: from.clone(),
                        event
                    }),
                    "{from:?} on {event:?}"
                );
            }
        }
    }
}
