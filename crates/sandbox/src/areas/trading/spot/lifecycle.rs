//! A spot order's status and the moves between them: an order is placed
//! `filled` (it filled at once) or `pending` (a limit order resting); a
//! resting order fills when the market reaches its price or is cancelled.

pub use paydesk_api::models::trading::OrderStatus;

/// What happens to a resting order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderEvent {
    /// The market reached the order's price.
    Fill,
    Cancel,
}

pub type Refusal = crate::lifecycle::Refusal<OrderStatus, OrderEvent>;

/// The one place a placed order's status changes. A status the sandbox
/// never writes (only a hand-edited snapshot holds one) moves nowhere.
pub fn transition(from: &OrderStatus, event: OrderEvent) -> Result<OrderStatus, Refusal> {
    use OrderEvent::*;
    use OrderStatus::*;
    match (from, event) {
        (Pending, Fill) => Ok(Filled),
        (Pending, Cancel) => Ok(Cancelled),
        _ => Err(Refusal {
            from: from.clone(),
            event,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::OrderEvent::*;
    use super::OrderStatus::*;
    use super::*;

    #[test]
    fn allowed_moves() {
        for (from, event, to) in [(Pending, Fill, Filled), (Pending, Cancel, Cancelled)] {
            assert_eq!(transition(&from, event), Ok(to), "{from:?} on {event:?}");
        }
    }

    #[test]
    fn refused_moves() {
        let refused = [
            (Filled, Fill),
            (Filled, Cancel),
            (Cancelled, Fill),
            (Cancelled, Cancel),
            (Rejected, Fill),
            (Rejected, Cancel),
            (Unknown("expired".into()), Cancel),
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
}
