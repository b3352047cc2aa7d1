//! A target order's status and the moves between them: active until the
//! market crosses its target, then triggered while its slices fill, then
//! filled; expired or cancelled while active, and a part-filled order
//! expires too, keeping what filled.

pub use paydesk_api::models::trading::TargetOrderStatus;

/// What happens to a target order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetEvent {
    /// The market crossed the target price.
    Trigger,
    /// The last slice filled.
    Fill,
    /// Its expiry came; `part_filled` when a slice has filled already.
    Expire {
        part_filled: bool,
    },
    Cancel,
}

pub type Refusal = crate::lifecycle::Refusal<TargetOrderStatus, TargetEvent>;

/// The one place a target order's status changes. A triggered order with
/// no slice filled yet neither expires nor cancels: its fill is under
/// way. A status the sandbox never writes moves nowhere.
pub fn transition(from: &TargetOrderStatus, event: TargetEvent) -> Result<TargetOrderStatus, Refusal> {
    use TargetEvent::*;
    use TargetOrderStatus::*;
    match (from, event) {
        (Active, Trigger) => Ok(Triggered),
        (Triggered, Fill) => Ok(Filled),
        (Active, Expire { .. }) | (Triggered, Expire { part_filled: true }) => Ok(Expired),
        (Active, Cancel) => Ok(Cancelled),
        _ => Err(Refusal {
            from: from.clone(),
            event,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::TargetEvent::*;
    use super::TargetOrderStatus::*;
    use super::*;

    const EVENTS: [TargetEvent; 5] = [
        Trigger,
        Fill,
        Expire { part_filled: false },
        Expire { part_filled: true },
        Cancel,
    ];

    fn allowed() -> Vec<(TargetOrderStatus, TargetEvent, TargetOrderStatus)> {
        vec![
            (Active, Trigger, Triggered),
            (Triggered, Fill, Filled),
            (Active, Expire { part_filled: false }, Expired),
            (Active, Expire { part_filled: true }, Expired),
            (Triggered, Expire { part_filled: true }, Expired),
            (Active, Cancel, Cancelled),
        ]
    }

    #[test]
    fn allowed_moves() {
        for (from, event, to) in allowed() {
            assert_eq!(transition(&from, event), Ok(to), "{from:?} on {event:?}");
        }
    }

    #[test]
    fn every_other_move_is_refused() {
        let allowed = allowed();
        for from in [
            Active,
            Triggered,
            Filled,
            Cancelled,
            Expired,
            Unknown("paused".into()),
        ] {
            for event in EVENTS {
                if allowed.iter().any(|(f, e, _)| *f == from && *e == event) {
                    continue;
                }
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
