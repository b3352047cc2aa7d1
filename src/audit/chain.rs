//! The hash chain: each record's hash is SHA-256 over the previous hash and
//! the record's canonical form, so editing or deleting any row breaks every
//! link after it.

use chrono::{DateTime, DurationRound, TimeDelta, Utc};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::details::Details;

/// The hash before the first record.
pub const GENESIS: [u8; 32] = [0; 32];

/// Postgres keeps microseconds; hashing the same precision lets a stored
/// row be re-hashed exactly.
pub fn truncate_to_micros(t: DateTime<Utc>) -> DateTime<Utc> {
    t.duration_trunc(TimeDelta::microseconds(1)).unwrap_or(t)
}

/// The fields a hash covers, as stored.
pub struct Hashed<'a> {
    pub occurred_at: DateTime<Utc>,
    pub tenant_id: Option<Uuid>,
    pub actor_id: Option<Uuid>,
    pub actor_email: &'a str,
    pub action: &'a str,
    pub target: &'a str,
    pub outcome: &'a str,
    pub ip: &'a str,
    pub user_agent: &'a str,
    pub details: &'a Details,
}

pub fn hash(prev: &[u8], r: &Hashed<'_>) -> [u8; 32] {
    // A JSON array is an unambiguous encoding of the fields; `details` is
    // serde_json's compact text of the value (`Details`). The array is
    // written straight into the digest (no JSON value built per record:
    // verifying a million records hashes a million of them).
    let id = |t: Option<Uuid>| t.map(|t| t.to_string()).unwrap_or_default();
    let canonical = (
        r.occurred_at.timestamp_micros(),
        id(r.tenant_id),
        id(r.actor_id),
        r.actor_email,
        r.action,
        r.target,
        r.outcome,
        r.ip,
        r.user_agent,
        r.details.as_str(),
    );
    let mut h = Sha256::new();
    h.update(prev);
    serde_json::to_writer(Digesting(&mut h), &canonical).expect("hashing cannot fail");
    h.finalize().into()
}

/// Feeds what is written to a digest.
struct Digesting<'a>(&'a mut Sha256);

impl std::io::Write for Digesting<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_field_change_changes_the_hash() {
        let details = Details::of(&serde_json::json!({"b": 1, "a": "x"}));
        let base = Hashed {
            occurred_at: truncate_to_micros(Utc::now()),
            tenant_id: None,
            actor_id: None,
            actor_email: "a@b.c",
            action: "auth.sign_in",
            target: "user",
            outcome: "success",
            ip: "127.0.0.1",
            user_agent: "ua",
            details: &details,
        };
        let h = hash(&GENESIS, &base);
        assert_ne!(h, hash(&h, &base), "the previous hash is covered");
        let changed = Hashed {
            outcome: "failure",
            ..base
        };
        assert_ne!(h, hash(&GENESIS, &changed));
    }

    #[test]
    fn the_encoding_is_the_json_array_of_the_fields() {
        let value = serde_json::json!({"b": 1, "a": "x\"y"});
        let details = Details::of(&value);
        let at = DateTime::from_timestamp_micros(1_700_000_000_123_456).unwrap();
        let tenant = Uuid::from_u128(7);
        let record = Hashed {
            occurred_at: at,
            tenant_id: Some(tenant),
            actor_id: None,
            actor_email: "a@b.c",
            action: "auth.sign_in",
            target: "user",
            outcome: "success",
            ip: "127.0.0.1",
            user_agent: "ua \u{e9}",
            details: &details,
        };
        let canonical = serde_json::json!([
            at.timestamp_micros(),
            tenant.to_string(),
            "",
            "a@b.c",
            "auth.sign_in",
            "user",
            "success",
            "127.0.0.1",
            "ua \u{e9}",
            value.to_string(),
        ]);
        let mut h = Sha256::new();
        h.update(GENESIS);
        h.update(canonical.to_string().as_bytes());
        let expected: [u8; 32] = h.finalize().into();
        assert_eq!(hash(&GENESIS, &record), expected);
    }
}
