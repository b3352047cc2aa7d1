//! A withdrawal's status and the moves between them: made `pending`,
//! broadcast to `processing`, then `completed` or `failed` on chain.

pub use paydesk_api::models::withdrawals::WithdrawalStatus;

/// What happens to a withdrawal on its chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WithdrawalEvent {
    Broadcast,
    Settle,
    /// The network rejected it (test value: memo `fail`).
    Fail,
}

pub type Refusal = crate::lifecycle::Refusal<WithdrawalStatus, WithdrawalEvent>;

/// The one place a withdrawal's status changes. A status the sandbox
/// never writes moves nowhere.
pub fn transition(from: &WithdrawalStatus, event: WithdrawalEvent) -> Result<WithdrawalStatus, Refusal> {
    use WithdrawalEvent::*;
    use WithdrawalStatus::*;
    match (from, event) {
        (Pending, Broadcast) => Ok(Processing),
        (Processing, Settle) => Ok(Completed),
        (Processing, Fail) => Ok(Failed),
        _ => Err(Refusal {
            from: from.clone(),
            event,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::WithdrawalEvent::*;
    use super::WithdrawalStatus::*;
    use super::*;

    const ALLOWED: [(WithdrawalStatus, WithdrawalEvent, WithdrawalStatus); 3] = [
        (Pending, Broadcast, Processing),
        (Processing, Settle, Completed),
        (Processing, Fail, Failed),
    ];

    #[test]
    fn allowed_moves() {
        for (from, event, to) in ALLOWED {
            assert_eq!(transition(&from, event), Ok(to), "{from:?} on {event:?}");
        }
    }

    #[test]
    fn every_other_move_is_refused() {
        for from in [Pending, Processing, Completed, Failed, Unknown("queued".into())] {
            for event in [Broadcast, Settle, Fail] {
                if ALLOWED.iter().any(|(f, e, _)| *f == from && *e == event) {
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
