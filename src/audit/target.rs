//! A record's target, kept split as well as whole: most targets read
//! "kind:id" (`approval:4242`, `user:<uuid>`), and the audit page's target
//! filter matches those exactly through an index per log, where free text
//! needs a trigram scan that grows with the log. The whole text is what the
//! chain hashes; the parts are derived from it (by `split`, and by the same
//! rule in the migration 20261128000100 for older records).

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
    /// "kind:id": that target exactly.
    Exact { kind: String, id: String },
    /// "kind:", or a word that is the kind of some record in the log:
    /// every record of that kind.
    Kind(String),
    /// Anything else: the text anywhere in the target.
    Text(String),
}

impl TargetMatch {
    /// Reads the filter as typed. A bare word is taken as a kind here; the
    /// search falls back to `Text` when no record of the log has that kind.
    pub fn parse(filter: &str) -> Self {
        let filter = filter.trim();
        let (kind, id) = match filter.split_once(':') {
            Some((kind, id)) => (kind.to_lowercase(), id),
            None => (filter.to_lowercase(), ""),
        };
        match split(&kind) {
            (Some(_), None) if id.is_empty() => TargetMatch::Kind(kind),
            // The id as typed: ids are matched exactly.
            (Some(_), None) => TargetMatch::Exact {
                kind,
                id: id.to_owned(),
            },
            _ => TargetMatch::Text(filter.to_owned()),
        }
    }

    /// What the page says the filter matched.
    pub fn describe(&self) -> String {
        match self {
            TargetMatch::Exact { kind, id } => format!("Target is exactly {kind}:{id}."),
            TargetMatch::Kind(kind) => format!("Every record whose target is of kind {kind} ({kind}:…)."),
            TargetMatch::Text(text) => format!("Targets containing “{text}” anywhere."),
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
    fn the_filter_reads_kind_id_a_kind_or_text() {
        assert_eq!(
            TargetMatch::parse(" Approval:4242 "),
            TargetMatch::Exact {
                kind: "approval".into(),
                id: "4242".into()
            }
        );
        assert_eq!(TargetMatch::parse("user:"), TargetMatch::Kind("user".into()));
        assert_eq!(
            TargetMatch::parse("connection"),
            TargetMatch::Kind("connection".into())
        );
        assert_eq!(
            TargetMatch::parse("/api/payouts"),
            TargetMatch::Text("/api/payouts".into())
        );
        assert_eq!(
            TargetMatch::parse("no such target"),
            TargetMatch::Text("no such target".into())
        );
    }
}
