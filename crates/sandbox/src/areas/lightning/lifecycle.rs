//! An invoice record's status and the moves between them. An incoming
//! invoice is issued `pending`, then paid or expired; an outgoing
//! payment's record is made `paid`, `failed` or (a held payment)
//! `pending`, which then ends paid or failed.

pub use paydesk_api::models::lightning::InvoiceStatus;

/// What happens to a pending invoice or payment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvoiceEvent {
    /// Settled: the invoice was paid, or the held payment went through.
    Pay,
    /// Its expiry came unpaid.
    Expire,
    /// A held payment could not be settled.
    Fail,
}

pub type Refusal = crate::lifecycle::Refusal<InvoiceStatus, InvoiceEvent>;

/// The one place an invoice record's status changes: only a pending one
/// moves. A status the sandbox never writes moves nowhere.
pub fn transition(from: &InvoiceStatus, event: InvoiceEvent) -> Result<InvoiceStatus, Refusal> {
    use InvoiceEvent::*;
    use InvoiceStatus::*;
    match (from, event) {
        (Pending, Pay) => Ok(Paid),
        (Pending, Expire) => Ok(Expired),
        (Pending, Fail) => Ok(Failed),
        _ => Err(Refusal {
            from: from.clone(),
            event,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::InvoiceEvent::*;
    use super::InvoiceStatus::*;
    use super::*;

    #[test]
    fn allowed_moves() {
        for (from, event, to) in [
            (Pending, Pay, Paid),
            (Pending, Expire, Expired),
            (Pending, Fail, Failed),
        ] {
            assert_eq!(transition(&from, event), Ok(to), "{from:?} on {event:?}");
        }
    }

    #[test]
    fn refused_moves() {
        let mut refused = Vec::new();
        for from in [Paid, Expired, Failed, Unknown("held".into())] {
            for event in [Pay, Expire, Fail] {
                refused.push((from.clone(), event));
            }
        }
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
