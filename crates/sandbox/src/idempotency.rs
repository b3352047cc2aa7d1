//! Idempotency by reference, the same for every operation that takes one:
//! the same reference with the same body replays the stored answer byte for
//! byte; a different body is a 409 and changes nothing; only an answer
//! that ran is stored, so a refused request can be corrected and retried.
//! Callers look up, run and save under the store's one lock (see
//! `Company::once`), so concurrent requests with one reference run exactly
//! once.

use sha2::{Digest, Sha256};

use crate::book::{Book, Record};
use crate::error::ApiError;
use crate::respond::JsonAnswer;

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct IdempotencyStore {
    /// Keyed by `key(operation, reference)`.
    saved: Book<Saved>,
}

/// One string per (operation, reference), so the store serializes as a
/// plain JSON object; operation names hold no space, so the two parts
/// never run together.
fn key(operation: &str, reference: &str) -> String {
    format!("{operation} {reference}")
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Saved {
    /// `key(operation, reference)`.
    #[serde(default)]
    key: String,
    fingerprint: [u8; 32],
    answer: JsonAnswer,
}

impl Record for Saved {
    type Key = String;

    fn key(&self) -> String {
        self.key.clone()
    }

    fn adopt_key(&mut self, key: String) {
        self.key = key;
    }
}

fn fingerprint(canonical_body: &str) -> [u8; 32] {
    Sha256::digest(canonical_body.as_bytes()).into()
}

impl IdempotencyStore {
    /// The stored answer for this reference, if the same body ran before.
    pub fn replay(
        &self,
        operation: &'static str,
        reference: &str,
        canonical_body: &str,
    ) -> Result<Option<JsonAnswer>, ApiError> {
        match self.saved.by_key(&key(operation, reference)) {
            None => Ok(None),
            Some(saved) if saved.fingerprint == fingerprint(canonical_body) => Ok(Some(saved.answer.clone())),
            Some(_) => Err(ApiError::IdempotencyConflict(format!(
                "reference '{reference}' was already used with a different body; use a new reference for a new request"
            ))),
        }
    }

    pub fn save(
        &mut self,
        operation: &'static str,
        reference: &str,
        canonical_body: &str,
        answer: &JsonAnswer,
    ) {
        self.saved.push(Saved {
            key: key(operation, reference),
            fingerprint: fingerprint(canonical_body),
            answer: answer.clone(),
        });
    }

    /// The saved answers' book, for the data directory.
    pub fn book(&mut self) -> &mut Book<Saved> {
        &mut self.saved
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::http::StatusCode;
    use actix_web::web::Bytes;

    fn answer(text: &'static str) -> JsonAnswer {
        JsonAnswer {
            status: StatusCode::CREATED,
            body: Bytes::from_static(text.as_bytes()),
        }
    }

    #[test]
    fn same_body_replays_and_a_different_body_conflicts() {
        let mut store = IdempotencyStore::default();
        assert!(store.replay("op", "r1", "{}").unwrap().is_none());
        store.save("op", "r1", "{}", &answer("first"));
        assert_eq!(
            store.replay("op", "r1", "{}").unwrap().unwrap().body,
            answer("first").body
        );
        let conflict = store.replay("op", "r1", r#"{"a":1}"#).unwrap_err();
        assert_eq!(conflict.code(), "IDEMPOTENCY_CONFLICT");
        assert!(store.replay("other-op", "r1", r#"{"a":1}"#).unwrap().is_none());
    }
}
