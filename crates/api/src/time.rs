//! Times on the wire: RFC 3339 in UTC with exactly three fractional digits.
//!
//! chrono's default form drops the fraction on a whole second, so
//! `…:46Z` would sort after `…:46.001Z` as text; a fixed width keeps the
//! text order the time order for clients that compare strings.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Deserializer, Serializer};

/// The wire form of `t`.
pub fn wire(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// `#[serde(with = "crate::time::millis")]` for a `DateTime<Utc>` field.
pub mod millis {
    use super::*;

    pub fn serialize<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&wire(*t))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
        DateTime::<Utc>::deserialize(d)
    }
}

/// `#[serde(default, with = "crate::time::millis_opt")]` for an
/// `Option<DateTime<Utc>>` field.
pub mod millis_opt {
    use super::*;

    pub fn serialize<S: Serializer>(t: &Option<DateTime<Utc>>, s: S) -> Result<S::Ok, S::Error> {
        match t {
            Some(t) => s.serialize_some(&wire(*t)),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<DateTime<Utc>>, D::Error> {
        Option::<DateTime<Utc>>::deserialize(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn whole_seconds_keep_three_digits_so_text_order_is_time_order() {
        let whole = Utc.with_ymd_and_hms(2026, 11, 26, 3, 10, 46).unwrap();
        let later = whole + chrono::Duration::milliseconds(1);
        assert_eq!(wire(whole), "2026-11-26T03:10:46.000Z");
        assert!(wire(whole) < wire(later));
    }

    #[test]
    fn fields_round_trip() {
        #[derive(serde::Serialize, serde::Deserialize, PartialEq, Debug)]
        struct T {
            #[serde(with = "millis")]
            at: DateTime<Utc>,
            #[serde(default, with = "millis_opt")]
            maybe: Option<DateTime<Utc>>,
        }
        let t = T {
            at: Utc.with_ymd_and_hms(2026, 1, 2, 3, 4, 5).unwrap(),
            maybe: None,
        };
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(json, r#"{"at":"2026-01-02T03:04:05.000Z","maybe":null}"#);
        assert_eq!(
            serde_json::from_str::<T>(r#"{"at":"2026-01-02T03:04:05Z"}"#).unwrap(),
            t
        );
    }
}
