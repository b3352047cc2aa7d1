//! A batch's and its items' statuses and the moves between them. An item
//! is valid or invalid in the draft; at confirm an invalid one is skipped
//! and a valid one sent as a withdrawal, whose status it then shows (a
//! failed one can be sent again). A batch is a draft until confirmed,
//! then sums up its sent items.

pub use paydesk_api::models::bulk::{BatchStatus, BulkItemStatus};
use paydesk_api::models::withdrawals::WithdrawalStatus;

/// What happens to an item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ItemEvent {
    /// Confirmed while invalid.
    Skip,
    /// Sent as a new withdrawal, which starts pending.
    Send,
    /// Its withdrawal moved on.
    Follow(WithdrawalStatus),
}

pub type ItemRefusal = crate::lifecycle::Refusal<BulkItemStatus, ItemEvent>;

/// The one place an item's status changes.
pub fn item_transition(from: &BulkItemStatus, event: ItemEvent) -> Result<BulkItemStatus, ItemRefusal> {
    use BulkItemStatus::*;
    match (from, &event) {
        (Invalid, ItemEvent::Skip) => Ok(Skipped),
        (Valid | Failed, ItemEvent::Send) => Ok(Pending),
        (Pending | Processing | Completed | Failed, ItemEvent::Follow(w)) => {
            Ok(BulkItemStatus::from(w.as_str()))
        }
        _ => Err(ItemRefusal {
            from: from.clone(),
            event,
        }),
    }
}

/// Where a confirmed batch's sent items stand, together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Some item is still pending or processing.
    InFlight,
    AllCompleted,
    AllFailed,
    Mixed,
}

impl Progress {
    /// Sums up the statuses of the items that were sent (not skipped).
    pub fn of<'a>(sent: impl Iterator<Item = &'a BulkItemStatus> + Clone) -> Self {
        use BulkItemStatus::*;
        if sent.clone().any(|s| matches!(s, Pending | Processing)) {
            Progress::InFlight
        } else if sent.clone().all(|s| *s == Completed) {
            Progress::AllCompleted
        } else if sent.clone().all(|s| *s == Failed) {
            Progress::AllFailed
        } else {
            Progress::Mixed
        }
    }
}

/// What happens to a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchEvent {
    Confirm,
    /// Its items moved: the batch shows where they stand.
    ItemsMoved(Progress),
}

pub type BatchRefusal = crate::lifecycle::Refusal<BatchStatus, BatchEvent>;

/// The one place a batch's status changes. A draft doesn't follow its
/// items; a confirmed batch follows them both ways, since a retry sends
/// failed items again.
pub fn batch_transition(from: &BatchStatus, event: BatchEvent) -> Result<BatchStatus, BatchRefusal> {
    use BatchStatus::*;
    match (from, event) {
        (Draft, BatchEvent::Confirm) => Ok(Processing),
        (Processing | Completed | Failed | PartiallyFailed, BatchEvent::ItemsMoved(progress)) => {
            Ok(match progress {
                Progress::InFlight => Processing,
                Progress::AllCompleted => Completed,
                Progress::AllFailed => Failed,
                Progress::Mixed => PartiallyFailed,
            })
        }
        _ => Err(BatchRefusal {
            from: from.clone(),
            event,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use BulkItemStatus as I;

    #[test]
    fn item_moves() {
        let allowed = [
            (I::Invalid, ItemEvent::Skip, I::Skipped),
            (I::Valid, ItemEvent::Send, I::Pending),
            (I::Failed, ItemEvent::Send, I::Pending),
            (
                I::Pending,
                ItemEvent::Follow(WithdrawalStatus::Processing),
                I::Processing,
            ),
            (
                I::Processing,
                ItemEvent::Follow(WithdrawalStatus::Completed),
                I::Completed,
            ),
            (
                I::Processing,
                ItemEvent::Follow(WithdrawalStatus::Failed),
                I::Failed,
            ),
        ];
        for (from, event, to) in allowed {
            assert_eq!(
                item_transition(&from, event.clone()),
                Ok(to),
                "{from:?} on {event:?}"
            );
        }
        let refused = [
            (I::Valid, ItemEvent::Skip),
            (I::Skipped, ItemEvent::Skip),
            (I::Invalid, ItemEvent::Send),
            (I::Skipped, ItemEvent::Send),
            (I::Pending, ItemEvent::Send),
            (I::Completed, ItemEvent::Send),
            (I::Valid, ItemEvent::Follow(WithdrawalStatus::Pending)),
            (I::Skipped, ItemEvent::Follow(WithdrawalStatus::Completed)),
            (I::Unknown("held".into()), ItemEvent::Send),
        ];
        for (from, event) in refused {
            assert_eq!(
                item_transition(&from, event.clone()),
                Err(ItemRefusal {
                    from: from.clone(),
                    event: event.clone()
                }),
                "{from:?} on {event:?}"
            );
        }
    }

    #[test]
    fn progress_sums_up_the_sent_items() {
        let of = |s: &[I]| Progress::of(s.iter());
        assert_eq!(of(&[I::Completed, I::Processing]), Progress::InFlight);
        assert_eq!(of(&[I::Completed, I::Completed]), Progress::AllCompleted);
        assert_eq!(of(&[I::Failed, I::Failed]), Progress::AllFailed);
        assert_eq!(of(&[I::Failed, I::Completed]), Progress::Mixed);
    }

    #[test]
    fn batch_moves() {
        use BatchStatus::*;
        let moved = BatchEvent::ItemsMoved;
        let allowed = [
            (Draft, BatchEvent::Confirm, Processing),
            (Processing, moved(Progress::AllCompleted), Completed),
            (Processing, moved(Progress::AllFailed), Failed),
            (Processing, moved(Progress::Mixed), PartiallyFailed),
            (Failed, moved(Progress::InFlight), Processing),
            (PartiallyFailed, moved(Progress::InFlight), Processing),
        ];
        for (from, event, to) in allowed {
            assert_eq!(batch_transition(&from, event), Ok(to), "{from:?} on {event:?}");
        }
        let refused = [
            (Draft, moved(Progress::InFlight)),
            (Processing, BatchEvent::Confirm),
            (Completed, BatchEvent::Confirm),
            (Unknown("archived".into()), moved(Progress::Mixed)),
        ];
        for (from, event) in refused {
            assert_eq!(
                batch_transition(&from, event),
                Err(BatchRefusal {
                    from: from.clone(),
                    event
                }),
                "{from:?} on {event:?}"
            );
        }
    }
}
