//! A record's target, kept whole with its kind beside it: most targets
//! read "kind:id" (`approval:4242`, `user:<uuid>`), and upstream calls
//! read "METHOD /path" (`POST /api/payouts/po_42/cancel`). The whole text
//! is what the chain hashes; the kind is derived from it (by `split`, and
//! by the same rule in the migration 20261128000100 for older records),
//! the id by the SQL function `audit_target_ref` where an index needs it.
//!
//! The audit page's target filter is for an id a member pastes, whole or
//! its beginning, as they would into Stripe's or Modern Treasury's search:
//! - a kind alone (`approval`, `approval:`) is every record of that kind,
//!   when the log has one;
//! - anything else is matched, ignoring case, against the whole target and
//!   against the id it names: the id of "kind:id", or the object an
//!   upstream call's path names (the last segment with a digit or an
//!   underscore: `po_42` in `POST /api/payouts/po_42/cancel`; the SQL
//!   function `audit_target_ref`). Exactly, when some record of the log is
//!   (`approval:42`, `4242`, `po_42`); otherwise as their beginning
//!   (`approval:42` finds `approval:420` when there is no `approval:42`,
//!   `po_0000` every payout id starting so).
//!
//! Each reads a range of an index per log (one for the whole target, one
//! for its id, both lower-cased), or, when the match is common, the log's
//! time index until a page is full; neither grows with the log. Text in
//! the middle of a target (`payouts/po_42`) matches nothing: that was a
//! trigram scan, which did grow with the log (95 ms at 10M records).

/// The kind and id of a target, when it reads "kind" or "kind:id" with a
/// lower-case kind; other targets (`POST /api/payouts`) have neither.
pub fn split(target: &str) -> (Option<&str>, Option<&str>) {
    let (kind, id) = match target.split_once(':') {
        Some((kind, id)) => (kind, Some(id)),
        None => (target, None),
    };
    if kind.is_empty() || !kind.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') {
        return (None, None);
    }
    (Some(kind), id)
}

/// What the target filter matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetMatch {
    /// "kind:", or a word that is the kind of some record in the log:
    /// every record of that kind.
    Kind(String),
    /// Targets that are this text, or whose id is, ignoring case.
    Exact(String),
    /// Targets that begin with this text, or whose id does, ignoring case.
    Prefix(String),
}

impl TargetMatch {
    /// Reads the filter as typed. A bare word or "kind:" is taken as a
    /// kind, anything else as an exact target or id; the search falls back
    /// from a kind no record of the log has to an exact match, and from an
    /// exact match no record has to a prefix.
    pub fn parse(filter: &str) -> Self {
        let filter = filter.trim();
        let word = filter.strip_suffix(':').unwrap_or(filter).to_lowercase();
        match split(&word) {
            (Some(_), None) => TargetMatch::Kind(word),
            _ => TargetMatch::Exact(filter.to_owned()),
        }
    }

    /// What the page says the filter matched.
    pub fn describe(&self) -> String {
        match self {
            TargetMatch::Kind(kind) => format!("Every record whose target is of kind {kind} ({kind}:…)."),
            TargetMatch::Exact(text) => format!("Target or its id is exactly “{text}” (ignoring case)."),
            TargetMatch::Prefix(text) => {
                format!(
                    "No target or id is exactly “{text}”: targets or ids beginning with it (ignoring case)."
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_split_into_kind_and_id() {
        assert_eq!(split("approval:4242"), (Some("approval"), Some("4242")));
        assert_eq!(split("sandbox:price:BTC"), (Some("sandbox"), Some("price:BTC")));
        assert_eq!(split("audit_log"), (Some("audit_log"), None));
        assert_eq!(split("POST /api/payouts/po_1"), (None, None));
        assert_eq!(split("Thing:1"), (None, None));
        assert_eq!(split(":1"), (None, None));
    }

    #[test]
    fn the_filter_reads_a_kind_or_a_target_or_id() {
        assert_eq!(TargetMatch::parse("user:"), TargetMatch::Kind("user".into()));
        assert_eq!(
            TargetMatch::parse(" Connection "),
            TargetMatch::Kind("connection".into())
        );
        assert_eq!(
            TargetMatch::parse(" Approval:4242 "),
            TargetMatch::Exact("Approval:4242".into())
        );
        assert_eq!(TargetMatch::parse("po_42"), TargetMatch::Exact("po_42".into()));
        assert_eq!(
            TargetMatch::parse("POST /api/payouts"),
            TargetMatch::Exact("POST /api/payouts".into())
        );
    }
}
