//! The request journal of the control API (`GET /sandbox/requests`): each
//! company's latest authenticated calls with their answers, bodies kept as
//! JSON with secrets masked, so an integrator can see what the sandbox
//! received and said without logging on their side. Kept in memory only,
//! bounded per company.

use std::collections::{HashMap, VecDeque};

use paydesk_api::models::control::JournalEntry;
use serde_json::Value;
use uuid::Uuid;

/// Calls kept per company; older ones are dropped.
pub const KEPT_PER_COMPANY: usize = 200;

/// Bodies longer than this are kept as a truncated string.
const BODY_LIMIT: usize = 16 * 1024;

/// What replaces a secret's value.
const MASK: &str = "[masked]";

#[derive(Debug, Default)]
pub struct Journal {
    by_company: HashMap<Uuid, VecDeque<JournalEntry>>,
}

impl Journal {
    pub fn record(&mut self, company_id: Uuid, entry: JournalEntry) {
        let entries = self.by_company.entry(company_id).or_default();
        entries.push_front(entry);
        entries.truncate(KEPT_PER_COMPANY);
    }

    /// The company's calls, newest first.
    pub fn latest(&self, company_id: Uuid, limit: usize) -> Vec<JournalEntry> {
        self.by_company
            .get(&company_id)
            .map(|entries| entries.iter().take(limit).cloned().collect())
            .unwrap_or_default()
    }
}

/// Whether a key names a secret: credentials, card data, Lightning
/// preimages and signatures.
fn is_secret(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    matches!(key.as_str(), "pin" | "pan" | "cvv" | "cvc")
        || [
            "secret",
            "password",
            "card_number",
            "token",
            "preimage",
            "signature",
            "private_key",
        ]
        .iter()
        .any(|word| key.contains(word))
}

fn mask(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if is_secret(key) && !v.is_null() {
                    *v = Value::String(MASK.to_owned());
                } else {
                    mask(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(mask),
        _ => {}
    }
}

/// A body as the journal keeps it: JSON with secrets masked, a (truncated)
/// string when it is not JSON, null when empty.
pub fn kept_body(bytes: &[u8]) -> Value {
    if bytes.is_empty() {
        return Value::Null;
    }
    if bytes.len() > BODY_LIMIT {
        return Value::String(format!(
            "{}… ({} bytes)",
            String::from_utf8_lossy(&bytes[..BODY_LIMIT]),
            bytes.len()
        ));
    }
    match serde_json::from_slice::<Value>(bytes) {
        Ok(mut value) => {
            mask(&mut value);
            value
        }
        Err(_) => Value::String(String::from_utf8_lossy(bytes).into_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn masks_secrets_at_any_depth_and_keeps_the_rest() {
        let body = json!({"secret": "s", "url": "https://x", "details": {"card_number": "4111", "cvv": "123", "name": "A"}, "items": [{"client_secret": "c"}], "company_id": "k"});
        let kept = kept_body(body.to_string().as_bytes());
        assert_eq!(kept["secret"], MASK);
        assert_eq!(kept["url"], "https://x");
        assert_eq!(kept["details"]["card_number"], MASK);
        assert_eq!(kept["details"]["cvv"], MASK);
        assert_eq!(kept["details"]["name"], "A");
        assert_eq!(kept["items"][0]["client_secret"], MASK);
        assert_eq!(kept["company_id"], "k");
        assert_eq!(kept_body(b""), Value::Null);
        assert_eq!(kept_body(b"not json"), json!("not json"));
    }

    #[test]
    fn keeps_the_newest_calls_first_and_bounded() {
        let mut journal = Journal::default();
        let company = Uuid::new_v4();
        for i in 0..KEPT_PER_COMPANY + 5 {
            journal.record(
                company,
                JournalEntry {
                    request_id: i.to_string(),
                    method: "GET".into(),
                    path: "/api/balances".into(),
                    status: 200,
                    at: chrono::Utc::now(),
                    request_body: Value::Null,
                    response_body: Value::Null,
                },
            );
        }
        let all = journal.latest(company, usize::MAX);
        assert_eq!(all.len(), KEPT_PER_COMPANY);
        assert_eq!(all[0].request_id, (KEPT_PER_COMPANY + 4).to_string());
        assert!(journal.latest(Uuid::new_v4(), 10).is_empty());
    }
}
