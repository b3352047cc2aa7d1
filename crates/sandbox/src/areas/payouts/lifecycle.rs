//! A payout's status and the moves between them (spec "Payouts"):
//! QUOTE -> INITIATED -> PENDING -> PROCESSING -> COMPLETED or FAILED, and
//! EXPIRED when the quote runs out before finalize.

pub use paydesk_api::models::payouts::PayoutStatus;

/// What happens to a payout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayoutEvent {
    Initialize,
    /// Finalized: the wallet debited, the payout handed to the rail.
    Finalize,
    /// The rail picked it up.
    StartProcessing,
    /// The rail settled it.
    Complete,
    /// The beneficiary's bank rejected it.
    Fail,
    /// The quote ran out before finalize.
    Expire,
}

pub type Refusal = crate::lifecycle::Refusal<PayoutStatus, PayoutEvent>;

/// The one place a payout's status changes. A status the sandbox never
/// writes moves nowhere.
pub fn transition(from: &PayoutStatus, event: PayoutEvent) -> Result<PayoutStatus, Refusal> {
    use PayoutEvent::*;
    use PayoutStatus::*;
    match (from, event) {
        (Quote, Initialize) => Ok(Initiated),
        (Initiated, Finalize) => Ok(Pending),
        (Pending, StartProcessing) => Ok(Processing),
        (Processing, Complete) => Ok(Completed),
        (Processing, Fail) => Ok(Failed),
        (Quote | Initiated, Expire) => Ok(Expired),
        _ => Err(Refusal {
            from: from.clone(),
            event,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::PayoutEvent::*;
    use super::PayoutStatus::*;
    use super::*;

    const EVENTS: [PayoutEvent; 6] = [Initialize, Finalize, StartProcessing, Complete, Fail, Expire];

    fn allowed() -> Vec<(PayoutStatus, PayoutEvent, PayoutStatus)> {
        vec![
            (Quote, Initialize, Initiated),
            (Initiated, Finalize, Pending),
            (Pending, StartProcessing, Processing),
            (Processing, Complete, Completed),
            (Processing, Fail, Failed),
            (Quote, Expire, Expired),
            (Initiated, Expire, Expired),
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
        let statuses = [
            Quote,
            Initiated,
            Pending,
            Processing,
            Completed,
            Failed,
            Expired,
            Unknown("ON_HOLD".into()),
        ];
        let allowed = allowed();
        for from in statuses {
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
