//! A record's details in the form its hash covers: serde_json's compact
//! text of the value (keys sorted by their bytes, no spaces), as
//! `Value::to_string` writes it.
//!
//! Postgres gives jsonb back as text with spaces and keys sorted by length
//! first, so every record read must be put in that form again. Building a
//! `serde_json::Value` for it (a string allocated per key and per text,
//! a map per object) was most of the portal's share of verifying a
//! million records; `canonical` rewrites the text instead, copying keys,
//! texts without escapes and plain integers as they are, and handing to
//! serde_json only what it would write differently (escaped texts, other
//! numbers), so the result is byte for byte serde_json's.

use std::borrow::Cow;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::Value;
use sqlx::error::BoxDynError;
use sqlx::postgres::{PgTypeInfo, PgValueFormat, PgValueRef};
use sqlx::{Decode, Postgres};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Details(String);

impl Details {
    pub fn of(value: &Value) -> Self {
        Details(value.to_string())
    }

    /// Valid JSON text in any layout.
    pub fn from_text(text: &str) -> Result<Self, serde_json::Error> {
        canonical(text).map(Details)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }

    pub fn value(&self) -> Value {
        serde_json::from_str(&self.0).expect("details are JSON")
    }
}

impl Serialize for Details {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let raw: &RawValue = serde_json::from_str(&self.0).map_err(serde::ser::Error::custom)?;
        raw.serialize(serializer)
    }
}

/// Through a value: a bundle's lines are tagged enums, which serde reads
/// into a buffer first, and a raw value cannot be taken from that.
impl<'de> Deserialize<'de> for Details {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(|value| Details::of(&value))
    }
}

impl sqlx::Type<Postgres> for Details {
    fn type_info() -> PgTypeInfo {
        PgTypeInfo::with_name("jsonb")
    }
}

impl<'r> Decode<'r, Postgres> for Details {
    fn decode(value: PgValueRef<'r>) -> Result<Self, BoxDynError> {
        let binary = value.format() == PgValueFormat::Binary;
        let bytes = value.as_bytes()?;
        // jsonb's binary form is a version byte (1) before the text.
        let text = match (binary, bytes.split_first()) {
            (false, _) => bytes,
            (true, Some((1, text))) => text,
            (true, _) => return Err("unknown jsonb version".into()),
        };
        Ok(Details::from_text(std::str::from_utf8(text)?)?)
    }
}

/// `text` (any valid JSON) as serde_json's compact text of its value.
pub fn canonical(text: &str) -> Result<String, serde_json::Error> {
    let mut reader = Reader {
        text: text.as_bytes(),
        at: 0,
    };
    let mut out = Vec::with_capacity(text.len());
    if reader.value(&mut out).is_some() && reader.at_end() {
        return Ok(String::from_utf8(out).expect("whole tokens of a str and serde_json's text"));
    }
    // Whatever the rewrite does not take (invalid text, a repeated key)
    // serde_json answers for, errors included.
    Ok(serde_json::from_str::<Value>(text)?.to_string())
}

/// Reads JSON text, writing each value's canonical form; `None` at
/// anything it leaves to serde_json.
struct Reader<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn blank(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.text.get(self.at) {
            self.at += 1;
        }
    }

    fn eat(&mut self, byte: u8) -> bool {
        self.blank();
        let found = self.text.get(self.at) == Some(&byte);
        self.at += usize::from(found);
        found
    }

    fn at_end(&mut self) -> bool {
        self.blank();
        self.at == self.text.len()
    }

    fn value(&mut self, out: &mut Vec<u8>) -> Option<()> {
        self.blank();
        match *self.text.get(self.at)? {
            b'{' => self.object(out),
            b'[' => self.array(out),
            b'"' => write_string(self.string()?, out),
            b't' => self.word(b"true", out),
            b'f' => self.word(b"false", out),
            b'n' => self.word(b"null", out),
            _ => self.number(out),
        }
    }

    /// Members in key order: written as read, then put in order when
    /// they were not.
    fn object(&mut self, out: &mut Vec<u8>) -> Option<()> {
        self.at += 1;
        out.push(b'{');
        let start = out.len();
        let mut members: Vec<(Cow<'a, str>, std::ops::Range<usize>)> = Vec::new();
        if !self.eat(b'}') {
            loop {
                self.blank();
                if self.text.get(self.at) != Some(&b'"') {
                    return None;
                }
                let key = self.string()?;
                let from = out.len();
                write_string(key, out)?;
                out.push(b':');
                if !self.eat(b':') {
                    return None;
                }
                self.value(out)?;
                members.push((unescaped(key)?, from..out.len()));
                if self.eat(b'}') {
                    break;
                }
                if !self.eat(b',') {
                    return None;
                }
                out.push(b',');
            }
        }
        if !members.is_sorted_by(|a, b| a.0 < b.0) {
            members.sort_by(|a, b| a.0.cmp(&b.0));
            if members.windows(2).any(|w| w[0].0 == w[1].0) {
                return None;
            }
            let written = out.split_off(start);
            for (i, (_, range)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(&written[range.start - start..range.end - start]);
            }
        }
        out.push(b'}');
        Some(())
    }

    fn array(&mut self, out: &mut Vec<u8>) -> Option<()> {
        self.at += 1;
        out.push(b'[');
        if !self.eat(b']') {
            loop {
                self.value(out)?;
                if self.eat(b']') {
                    break;
                }
                if !self.eat(b',') {
                    return None;
                }
                out.push(b',');
            }
        }
        out.push(b']');
        Some(())
    }

    /// A string token, quotes included.
    fn string(&mut self) -> Option<&'a [u8]> {
        let start = self.at;
        self.at += 1;
        loop {
            match *self.text.get(self.at)? {
                b'"' => {
                    self.at += 1;
                    return Some(&self.text[start..self.at]);
                }
                b'\\' => self.at += 2,
                0..=0x1f => return None,
                _ => self.at += 1,
            }
        }
    }

    fn word(&mut self, word: &[u8], out: &mut Vec<u8>) -> Option<()> {
        let end = self.at + word.len();
        (self.text.get(self.at..end)? == word).then(|| {
            out.extend_from_slice(word);
            self.at = end;
        })
    }

    /// An integer that fits 64 bits as it is (serde_json writes those as
    /// read, "-0" aside); any other number as serde_json writes it.
    fn number(&mut self, out: &mut Vec<u8>) -> Option<()> {
        let start = self.at;
        while let Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') = self.text.get(self.at) {
            self.at += 1;
        }
        let token = &self.text[start..self.at];
        let digits = token.strip_prefix(b"-").unwrap_or(token);
        let plain = token == b"0"
            || (matches!(digits.first(), Some(b'1'..=b'9'))
                && digits.len() <= 18
                && digits.iter().all(u8::is_ascii_digit));
        if plain {
            out.extend_from_slice(token);
            return Some(());
        }
        let number: serde_json::Number = serde_json::from_slice(token).ok()?;
        serde_json::to_writer(out, &number).ok()
    }
}

/// A string token as serde_json writes it: as it is unless it has escapes
/// (serde_json escapes only quotes, backslashes and control characters,
/// which valid JSON text holds only escaped).
fn write_string(token: &[u8], out: &mut Vec<u8>) -> Option<()> {
    if !token.contains(&b'\\') {
        out.extend_from_slice(token);
        return Some(());
    }
    let text: String = serde_json::from_slice(token).ok()?;
    serde_json::to_writer(out, &text).ok()
}

/// A key as serde_json's map orders it: by its text, escapes read.
fn unescaped(token: &[u8]) -> Option<Cow<'_, str>> {
    if token.contains(&b'\\') {
        return serde_json::from_slice::<String>(token).ok().map(Cow::Owned);
    }
    std::str::from_utf8(&token[1..token.len() - 1])
        .ok()
        .map(Cow::Borrowed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            "\\PC*|[\"\\\\\u{0}-\u{1f}a-z\u{e9}\u{1F600}]{0,6}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
                prop::collection::btree_map("[a-z\"\\\\\u{1}\u{e9}]{0,4}", inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// The layout Postgres gives jsonb back in: ", " and ": ", keys
    /// shorter first.
    fn as_postgres_writes(value: &Value) -> String {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort_by_key(|k| (k.len(), k.as_bytes()));
                let members: Vec<String> = keys
                    .into_iter()
                    .map(|k| format!("{}: {}", Value::from(k.as_str()), as_postgres_writes(&map[k])))
                    .collect();
                format!("{{{}}}", members.join(", "))
            }
            Value::Array(items) => {
                let items: Vec<String> = items.iter().map(as_postgres_writes).collect();
                format!("[{}]", items.join(", "))
            }
            other => other.to_string(),
        }
    }

    proptest! {
        #[test]
        fn the_rewrite_is_serde_jsons_compact_text(value in json()) {
            for text in [value.to_string(), as_postgres_writes(&value), serde_json::to_string_pretty(&value).unwrap()] {
                let expected = serde_json::from_str::<Value>(&text).unwrap().to_string();
                prop_assert_eq!(canonical(&text).unwrap(), expected);
            }
        }
    }

    #[test]
    fn numbers_and_escapes_are_written_as_serde_json_writes_them() {
        let text = r#"{"b": 1.50, "a": "x\"y\u00e9", "aa": [-0, 1e2, 12345678901234567890123, {"z": null, "y": true}], "\u0061b": 0}"#;
        let expected = serde_json::from_str::<Value>(text).unwrap().to_string();
        assert_eq!(canonical(text).unwrap(), expected);
    }

    #[test]
    fn invalid_text_and_repeated_keys_are_serde_jsons_to_answer() {
        assert!(canonical("{\"a\": }").is_err());
        assert!(canonical("[1, 2").is_err());
        assert_eq!(canonical(r#"{"a": 1, "a": 2}"#).unwrap(), r#"{"a":2}"#);
    }
}
