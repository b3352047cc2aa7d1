//! A card's status and the moves between them (spec "Cards", "States and
//! transitions"): pending until provisioned, then active or frozen at the
//! holder's word, and terminated for good.

/// The statuses a card goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CardState {
    Pending,
    Active,
    Frozen,
    Terminated,
}

impl CardState {
    /// The state of a card's `status`. The sandbox writes only these four;
    /// anything else (a hand-edited snapshot) reads as active, as the
    /// checks of single statuses did before there was one function.
    pub fn of(status: &str) -> CardState {
        match status {
            "pending" => CardState::Pending,
            "frozen" => CardState::Frozen,
            "terminated" => CardState::Terminated,
            _ => CardState::Active,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            CardState::Pending => "pending",
            CardState::Active => "active",
            CardState::Frozen => "frozen",
            CardState::Terminated => "terminated",
        }
    }
}

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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    pub from: CardState,
    pub event: CardEvent,
}

/// The one place a card's status changes. Freezing a frozen card or
/// unfreezing an active one is allowed and changes nothing.
pub fn transition(from: CardState, event: CardEvent) -> Result<CardState, Refusal> {
    use CardEvent::*;
    use CardState::*;
    match (from, event) {
        (Pending, Provisioned) => Ok(Active),
        (Active | Frozen, Freeze) => Ok(Frozen),
        (Active | Frozen, Unfreeze) => Ok(Active),
        (Pending | Active | Frozen, Terminate) => Ok(Terminated),
        _ => Err(Refusal { from, event }),
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
            assert_eq!(transition(from, event), Ok(to), "{from:?} on {event:?}");
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
                transition(from, event),
                Err(Refusal { from, event }),
                "{from:?} on {event:?}"
            );
        }
    }

    #[test]
    fn statuses_read_back_as_written() {
        for state in [Pending, Active, Frozen, Terminated] {
            assert_eq!(CardState::of(state.as_str()), state);
        }
    }
}
