//! A card's status and the moves between them (spec "Cards", "States and
//! transitions"): pending until provisioned, then active or frozen at the
//! holder's word, and terminated for good. Also a card transaction's:
//! pending, then completed or failed.

/// The statuses a card goes through, as the API names them. A status
/// the sandbox never writes (only a hand-edited snapshot holds one) moves
/// as an active card does.
pub use paydesk_api::models::cards::CardState;
pub use paydesk_api::models::cards::CardTransactionStatus;

/// What happens to a card.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CardEvent {
    /// The issuer finished provisioning it.
    Provisioned,
    Freeze,
    Unfreeze,
    /// Terminated by the holder, or a lite card's terminate_date reached.
    Terminate,
}

/// A move the card's state does not allow; callers word it for theirs.
pub type Refusal = crate::lifecycle::Refusal<CardState, CardEvent>;

/// The one place a card's status changes. Freezing a frozen card or
/// unfreezing an active one is allowed and changes nothing.
pub fn transition(from: &CardState, event: CardEvent) -> Result<CardState, Refusal> {
    use CardEvent::*;
    use CardState::*;
    match (from, event) {
        (Pending, Provisioned) => Ok(Active),
        (Active | Frozen | Unknown(_), Freeze) => Ok(Frozen),
        (Active | Frozen | Unknown(_), Unfreeze) => Ok(Active),
        (Pending | Active | Frozen | Unknown(_), Terminate) => Ok(Terminated),
        _ => Err(Refusal {
            from: from.clone(),
            event,
        }),
    }
}

/// What happens to a card transaction (a fund, withdraw, spend or the
/// initial funding).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxEvent {
    Complete,
    Fail,
}

pub type TxRefusal = crate::lifecycle::Refusal<CardTransactionStatus, TxEvent>;

/// The one place a card transaction's status changes: only a pending one
/// ends.
pub fn tx_transition(
    from: &CardTransactionStatus,
    event: TxEvent,
) -> Result<CardTransactionStatus, TxRefusal> {
    match (from, event) {
        (CardTransactionStatus::Pending, TxEvent::Complete) => Ok(CardTransactionStatus::Completed),
        (CardTransactionStatus::Pending, TxEvent::Fail) => Ok(CardTransactionStatus::Failed),
        _ => Err(TxRefusal {
            from: from.clone(),
            event,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::CardEvent::*;
    use super::CardState::*;
    use super::*;

    #[test]
    fn allowed_moves() {
        let allowed = [
            (Pending, Provisioned, Active),
            (Active, Freeze, Frozen),
            (Frozen, Freeze, Frozen),
            (Frozen, Unfreeze, Active),
            (Active, Unfreeze, Active),
            (Pending, Terminate, Terminated),
            (Active, Terminate, Terminated),
            (Frozen, Terminate, Terminated),
        ];
        for (from, event, to) in allowed {
            assert_eq!(transition(&from, event), Ok(to), "{from:?} on {event:?}");
        }
    }

    #[test]
    fn refused_moves() {
        let refused = [
            (Active, Provisioned),
            (Frozen, Provisioned),
            (Terminated, Provisioned),
            (Pending, Freeze),
            (Pending, Unfreeze),
            (Terminated, Freeze),
            (Terminated, Unfreeze),
            (Terminated, Terminate),
        ];
        for (from, event) in refused {
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

    #[test]
    fn a_status_the_sandbox_never_writes_moves_as_an_active_card() {
        let odd = CardState::Unknown("blocked".into());
        assert_eq!(transition(&odd, Freeze), Ok(Frozen));
        assert_eq!(transition(&odd, Terminate), Ok(Terminated));
    }

    #[test]
    fn a_card_transaction_ends_once() {
        use CardTransactionStatus as T;
        assert_eq!(tx_transition(&T::Pending, TxEvent::Complete), Ok(T::Completed));
        assert_eq!(tx_transition(&T::Pending, TxEvent::Fail), Ok(T::Failed));
        for from in [T::Completed, T::Failed, T::Unknown("reversed".into())] {
            for event in [TxEvent::Complete, TxEvent::Fail] {
                assert_eq!(
                    tx_transition(&from, event),
                    Err(TxRefusal {
                        from: from.clone(),
                        event
                    }),
                    "{from:?} on {event:?}"
                );
            }
        }
    }
}
