//! What handlers take and give: the caller, the JSON body and query of a
//! request (refused in RFC 7807 form when malformed), and answers as exact
//! JSON bytes, which idempotency stores and replays byte for byte.

use std::future::{ready, Ready};

use actix_web::body::BoxBody;
use actix_web::dev::Payload;
use actix_web::http::{header, StatusCode};
use actix_web::web::Bytes;
use actix_web::{FromRequest, HttpMessage, HttpRequest, HttpResponse, Responder};
use chrono::{DateTime, Utc};
use paydesk_api::wire::{Envelope, Metadata};
use serde::de::DeserializeOwned;
use serde::Serialize;
use uuid::Uuid;

use crate::error::ApiError;

/// Who is calling, set by the gatekeeper once the signature verified.
#[derive(Debug, Clone)]
pub struct Caller {
    pub client_id: Uuid,
    pub company_id: Uuid,
    pub request_id: String,
}

impl FromRequest for Caller {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(
            req.extensions()
                .get::<Caller>()
                .cloned()
                .ok_or_else(|| ApiError::Unauthorized("this request is not authenticated".to_owned())),
        )
    }
}

/// The verified body bytes, kept by the gatekeeper.
#[derive(Debug, Clone, Default)]
pub struct RawBody(pub Bytes);

/// A JSON body parsed into `T`, with its canonical form (sorted keys,
/// compact), which idempotency compares.
#[derive(Debug)]
pub struct JsonBody<T> {
    pub value: T,
    pub canonical: String,
}

impl<T: DeserializeOwned> FromRequest for JsonBody<T> {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let raw = req.extensions().get::<RawBody>().cloned().unwrap_or_default();
        ready(parse_json_body(req, &raw.0))
    }
}

fn parse_json_body<T: DeserializeOwned>(req: &HttpRequest, bytes: &[u8]) -> Result<JsonBody<T>, ApiError> {
    let value: serde_json::Value = if bytes.iter().all(u8::is_ascii_whitespace) {
        serde_json::Value::Object(Default::default())
    } else {
        if !is_json_content_type(req) {
            return Err(ApiError::UnsupportedMediaType);
        }
        serde_json::from_slice(bytes)
            .map_err(|e| ApiError::invalid(format!("the body is not valid JSON ({e}); send a JSON object")))?
    };
    if !value.is_object() {
        return Err(ApiError::invalid("the body must be a JSON object"));
    }
    let canonical = value.to_string();
    let value = serde_path_to_error::deserialize(value).map_err(|e| {
        let message = e.inner().to_string();
        let path = e.path().to_string();
        let field = if path == "." {
            missing_field_name(&message).unwrap_or_default()
        } else {
            path
        };
        if field.is_empty() {
            ApiError::invalid(message)
        } else {
            ApiError::field(field, message)
        }
    })?;
    Ok(JsonBody { value, canonical })
}

fn missing_field_name(message: &str) -> Option<String> {
    let rest = message.strip_prefix("missing field `")?;
    Some(rest.split('`').next()?.to_owned())
}

fn is_json_content_type(req: &HttpRequest) -> bool {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            let mime = v.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
            mime == "application/json" || (mime.starts_with("application/") && mime.ends_with("+json"))
        })
        .unwrap_or(false)
}

/// Where a list page starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum At<'a> {
    First,
    /// An opaque cursor this service issued.
    Cursor(&'a str),
    /// A 1-based page number.
    Page(usize),
    /// The number of matching records to skip (lists that take `offset`).
    Offset(usize),
}

/// The query string as pairs; empty values count as absent.
#[derive(Debug, Default)]
pub struct QueryParams(Vec<(String, String)>);

impl QueryParams {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(k, v)| k == key && !v.is_empty())
            .map(|(_, v)| v.as_str())
    }

    /// Every value of a repeated or comma-separated parameter.
    pub fn all(&self, key: &str) -> Vec<String> {
        self.0
            .iter()
            .filter(|(k, _)| k == key || k == &format!("{key}[]"))
            .flat_map(|(_, v)| v.split(','))
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
            .collect()
    }

    /// Refuses a query parameter the list does not know, naming it
    /// (sandbox-rules.md, Listing: a filter is never silently ignored).
    /// `limit`, `cursor` and `page` are known to every cursor list; a
    /// name ending in `[]` is its name's repeated form.
    pub fn known(&self, filters: &[&str]) -> Result<(), ApiError> {
        let mut names = vec!["limit", "cursor", "page"];
        names.extend_from_slice(filters);
        self.only(&names)
    }

    /// Refuses any query parameter but `names` (lists that page otherwise
    /// than by cursor, or not at all), naming the first other one.
    pub fn only(&self, names: &[&str]) -> Result<(), ApiError> {
        let unknown = self.0.iter().map(|(k, _)| k.as_str()).find(|k| {
            let name = k.strip_suffix("[]").unwrap_or(k);
            !names.contains(&name)
        });
        match unknown {
            None => Ok(()),
            Some(name) if names.is_empty() => Err(ApiError::field(
                name,
                "is not a parameter of this list; it takes none",
            )),
            Some(name) => Err(ApiError::field(
                name,
                format!("is not a parameter of this list; it takes {}", names.join(", ")),
            )),
        }
    }

    /// Where the page starts: the `cursor` when given (it wins), else the
    /// 1-based `page` (pages of `limit`, as the official client sends
    /// them), else `offset` (where the list knows it), else the first page.
    pub fn at(&self) -> Result<At<'_>, ApiError> {
        if let Some(cursor) = self.get("cursor") {
            return Ok(At::Cursor(cursor));
        }
        if let Some(v) = self.get("page") {
            return match v.parse::<usize>() {
                Ok(n) if n >= 1 => Ok(At::Page(n)),
                _ => Err(ApiError::field("page", "must be an integer from 1")),
            };
        }
        match self.get("offset") {
            None => Ok(At::First),
            Some(v) => v
                .parse::<usize>()
                .map(At::Offset)
                .map_err(|_| ApiError::field("offset", "must be an integer from 0")),
        }
    }

    /// A list answered whole unless `limit` or `page` asks for a page:
    /// then page `page` (from 1) of `limit` (1..100, default 20) items.
    pub fn whole_or_page<T>(&self, items: Vec<T>) -> Result<Vec<T>, ApiError> {
        if self.get("limit").is_none() && self.get("page").is_none() {
            return Ok(items);
        }
        let limit = self.limit(20, 100)?;
        let skip = match self.at()? {
            At::Page(n) => (n - 1).saturating_mul(limit),
            At::First | At::Cursor(_) | At::Offset(_) => 0,
        };
        Ok(items.into_iter().skip(skip).take(limit).collect())
    }

    /// `limit` within 1..=max, `default` when absent.
    pub fn limit(&self, default: usize, max: usize) -> Result<usize, ApiError> {
        match self.get("limit") {
            None => Ok(default),
            Some(v) => match v.parse::<usize>() {
                Ok(n) if (1..=max).contains(&n) => Ok(n),
                _ => Err(ApiError::field(
                    "limit",
                    format!("must be an integer from 1 to {max}"),
                )),
            },
        }
    }

    /// An optional parameter that must be one of `allowed`.
    pub fn one_of(&self, key: &str, allowed: &[&str]) -> Result<Option<String>, ApiError> {
        self.parse_opt(key, &allowed.join(", "), |v| {
            allowed.contains(&v).then(|| v.to_owned())
        })
    }

    /// Parses an optional enum-like parameter with `parse`, naming the
    /// allowed values when it fails.
    pub fn parse_opt<T>(
        &self,
        key: &str,
        allowed: &str,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<Option<T>, ApiError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => parse(v)
                .map(Some)
                .ok_or_else(|| ApiError::field(key, format!("'{v}' is not one of {allowed}"))),
        }
    }
}

impl FromRequest for QueryParams {
    type Error = ApiError;
    type Future = Ready<Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(
            serde_urlencoded::from_str::<Vec<(String, String)>>(req.query_string())
                .map(QueryParams)
                .map_err(|_| ApiError::invalid("the query string is malformed")),
        )
    }
}

/// A finished JSON answer: status and the exact bytes sent.
#[derive(Debug, Clone)]
pub struct JsonAnswer {
    pub status: StatusCode,
    pub body: Bytes,
}

/// How a stored answer (idempotency) is kept in snapshots and on disk:
/// the status and the body as text (answers are UTF-8 JSON).
#[derive(serde::Serialize, serde::Deserialize)]
struct KeptAnswer {
    status: u16,
    body: String,
}

impl serde::Serialize for JsonAnswer {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        KeptAnswer {
            status: self.status.as_u16(),
            body: String::from_utf8_lossy(&self.body).into_owned(),
        }
        .serialize(serializer)
    }
}

impl<'de> serde::Deserialize<'de> for JsonAnswer {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let kept = KeptAnswer::deserialize(deserializer)?;
        Ok(JsonAnswer {
            status: StatusCode::from_u16(kept.status).map_err(serde::de::Error::custom)?,
            body: Bytes::from(kept.body),
        })
    }
}

impl Responder for JsonAnswer {
    type Body = BoxBody;

    fn respond_to(self, _: &HttpRequest) -> HttpResponse {
        HttpResponse::build(self.status)
            .insert_header((header::CONTENT_TYPE, "application/json"))
            .body(self.body)
    }
}

/// Serializes any value as an answer.
pub fn json<T: Serialize>(status: StatusCode, value: &T) -> JsonAnswer {
    JsonAnswer {
        status,
        body: Bytes::from(serde_json::to_vec(value).expect("answers serialize")),
    }
}

/// The success envelope around `data`.
pub fn envelope<T: Serialize>(
    status: StatusCode,
    message: &str,
    data: T,
    request_id: &str,
    now: DateTime<Utc>,
) -> JsonAnswer {
    json(
        status,
        &Envelope {
            success: true,
            message: message.to_owned(),
            data,
            timestamp: now,
            metadata: Some(Metadata {
                request_id: request_id.to_owned(),
            }),
        },
    )
}

/// The success envelope for a caller's request.
pub fn answer<T: Serialize>(
    status: StatusCode,
    message: &str,
    data: T,
    caller: &Caller,
    now: DateTime<Utc>,
) -> JsonAnswer {
    envelope(status, message, data, &caller.request_id, now)
}

/// Parses a path id that must be a UUID (`VALIDATION_ERROR`, "invalid id").
pub fn parse_id(raw: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(raw).map_err(|_| ApiError::field("id", "invalid id: expected a UUID"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_missing_field() {
        assert_eq!(
            missing_field_name("missing field `chain`").as_deref(),
            Some("chain")
        );
        assert_eq!(missing_field_name("something else"), None);
    }

    #[test]
    fn limit_is_bounded() {
        let q = QueryParams(vec![("limit".into(), "101".into())]);
        assert!(q.limit(20, 100).is_err());
        let q = QueryParams(vec![("limit".into(), "0".into())]);
        assert!(q.limit(20, 100).is_err());
        let q = QueryParams(vec![("limit".into(), "abc".into())]);
        assert!(q.limit(20, 100).is_err());
        assert_eq!(QueryParams::default().limit(20, 100).unwrap(), 20);
    }

    #[test]
    fn repeated_and_comma_separated_values_are_collected() {
        let q = QueryParams(vec![
            ("addresses".into(), "a,b".into()),
            ("addresses".into(), "c".into()),
        ]);
        assert_eq!(q.all("addresses"), vec!["a", "b", "c"]);
    }
}
