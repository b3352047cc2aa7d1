//! The signed call: one attempt on the wire, retries of idempotent
//! calls, and answers mapped to typed values or [`ApiError`]s.

use std::time::{Duration, Instant};

use reqwest::header::{ACCEPT, CONTENT_TYPE, RETRY_AFTER};
use secrecy::ExposeSecret;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::{ApiError, CallOutcome, CallRecord, Client, RawResponse, REQUEST_ID_HEADER};
use crate::paths::{Method, Operation};
use crate::signing::sign_request;
use crate::wire::{Envelope, Problem};

impl Client {
    /// Calls an operation whose answer is an envelope and returns its `data`.
    pub(super) async fn data<T: DeserializeOwned, B: Serialize>(
        &self,
        op: Operation,
        params: &[&str],
        query: &[(&str, String)],
        body: Option<&B>,
        idempotent: bool,
    ) -> Result<T, ApiError> {
        let envelope: Envelope<T> = self.call(op, params, query, body, idempotent).await?;
        Ok(envelope.data)
    }

    /// Calls an operation and decodes its whole answer, retrying only when
    /// `idempotent`.
    pub(super) async fn call<T: DeserializeOwned, B: Serialize>(
        &self,
        op: Operation,
        params: &[&str],
        query: &[(&str, String)],
        body: Option<&B>,
        idempotent: bool,
    ) -> Result<T, ApiError> {
        let path = op.path(params);
        let body = body.map(|b| serde_json::to_vec(b).expect("request bodies serialize"));
        let attempts = if idempotent {
            1 + self.options.max_retries
        } else {
            1
        };
        let mut attempt = 0;
        loop {
            attempt += 1;
            let started = Instant::now();
            let result = self.send_once(op.method(), &path, query, body.as_deref()).await;
            let request_id = result.as_ref().ok().and_then(|raw| {
                raw.headers
                    .get(REQUEST_ID_HEADER)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned)
            });
            let status = result.as_ref().ok().map(|raw| raw.status);
            let decoded = result.and_then(|raw| decode::<T>(op.method(), &path, raw));
            self.report(
                op.method(),
                &path,
                &decoded,
                status,
                request_id,
                started.elapsed(),
            );
            let err = match decoded {
                Ok(value) => return Ok(value),
                Err(e) => e,
            };
            if attempt >= attempts || !err.is_retryable() {
                return Err(err);
            }
            let wait = match &err {
                ApiError::Problem {
                    retry_after: Some(after),
                    ..
                } => {
                    if *after > self.options.max_retry_after {
                        return Err(err);
                    }
                    *after
                }
                _ => self.options.backoff * 2u32.pow(attempt - 1),
            };
            tracing::debug!(%path, attempt, ?wait, error = %err, "retrying an idempotent call");
            tokio::time::sleep(wait).await;
        }
    }

    fn report<T>(
        &self,
        method: Method,
        path: &str,
        result: &Result<T, ApiError>,
        status: Option<u16>,
        request_id: Option<String>,
        duration: Duration,
    ) {
        let Some(observer) = &self.observer else {
            return;
        };
        let outcome = match result {
            Ok(_) => CallOutcome::Ok,
            Err(ApiError::Problem { status, .. }) | Err(ApiError::UnexpectedResponse { status, .. })
                if *status >= 500 =>
            {
                CallOutcome::Failed
            }
            Err(ApiError::Problem { .. }) | Err(ApiError::UnexpectedResponse { .. }) => CallOutcome::Refused,
            Err(ApiError::OutcomeUnknown { .. }) | Err(ApiError::Unavailable(_)) => CallOutcome::Unknown,
        };
        let request_id = request_id.or_else(|| match result {
            Err(ApiError::Problem { problem, .. }) if !problem.correlation_id.is_empty() => {
                Some(problem.correlation_id.clone())
            }
            _ => None,
        });
        observer.observe(CallRecord {
            method: method.as_str(),
            path: path.to_owned(),
            status,
            request_id,
            outcome,
            duration,
        });
    }

    async fn send_once(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<&[u8]>,
    ) -> Result<RawResponse, ApiError> {
        let mut url = reqwest::Url::parse(&format!("{}{}", self.base_url, path))
            .map_err(|e| ApiError::Unavailable(format!("the base URL is not valid: {e}")))?;
        if !query.is_empty() {
            let mut pairs = url.query_pairs_mut();
            for (k, v) in query {
                pairs.append_pair(k, v);
            }
        }
        let signed = sign_request(
            &self.credentials.client_id,
            self.credentials.secret.expose_secret(),
            body.unwrap_or_default(),
            chrono::Utc::now().timestamp(),
        );
        let http_method = match method {
            Method::Get => reqwest::Method::GET,
            Method::Post => reqwest::Method::POST,
            Method::Put => reqwest::Method::PUT,
            Method::Delete => reqwest::Method::DELETE,
        };
        let mut request = self
            .http
            .request(http_method, url)
            .header(ACCEPT, "application/json");
        for (name, value) in signed.pairs() {
            request = request.header(name, value);
        }
        if let Some(body) = body {
            request = request
                .header(CONTENT_TYPE, "application/json")
                .body(body.to_vec());
        }
        let lost = |reason: String| unknown_or_unavailable(method, path, reason);
        let response = request.send().await.map_err(|e| {
            if e.is_connect() {
                ApiError::Unavailable(format!("could not connect: {}", root_cause(&e)))
            } else {
                lost(describe_transport_error(&e))
            }
        })?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response
            .bytes()
            .await
            .map_err(|e| lost(describe_transport_error(&e)))?;
        Ok(RawResponse {
            status,
            headers,
            body: body.to_vec(),
        })
    }
}

fn unknown_or_unavailable(method: Method, path: &str, reason: String) -> ApiError {
    if method == Method::Get {
        ApiError::Unavailable(reason)
    } else {
        ApiError::OutcomeUnknown {
            method: method.as_str(),
            path: path.to_owned(),
            reason,
        }
    }
}

fn decode<T: DeserializeOwned>(method: Method, path: &str, raw: RawResponse) -> Result<T, ApiError> {
    if (200..300).contains(&raw.status) {
        return serde_json::from_slice(&raw.body).map_err(|e| ApiError::UnexpectedResponse {
            status: raw.status,
            reason: e.to_string(),
        });
    }
    if raw.status >= 500 && raw.body.iter().all(u8::is_ascii_whitespace) {
        return Err(unknown_or_unavailable(
            method,
            path,
            format!("the service answered {} without a body", raw.status),
        ));
    }
    let retry_after = raw
        .headers
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(parse_retry_after);
    match serde_json::from_slice::<Problem>(&raw.body) {
        Ok(mut problem) => {
            if problem.status == 0 {
                problem.status = raw.status;
            }
            Err(ApiError::Problem {
                status: raw.status,
                problem: Box::new(problem),
                retry_after,
            })
        }
        Err(_) => Err(ApiError::UnexpectedResponse {
            status: raw.status,
            reason: "the error body is not an RFC 7807 problem".to_owned(),
        }),
    }
}

/// `Retry-After` as seconds or an HTTP date.
fn parse_retry_after(value: &str) -> Option<Duration> {
    if let Ok(secs) = value.trim().parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = chrono::DateTime::parse_from_rfc2822(value.trim()).ok()?;
    let secs = (at.timestamp() - chrono::Utc::now().timestamp()).max(0);
    Some(Duration::from_secs(secs as u64))
}

fn describe_transport_error(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        "the request timed out".to_owned()
    } else {
        format!("the connection failed: {}", root_cause(e))
    }
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause: &dyn std::error::Error = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_seconds() {
        assert_eq!(parse_retry_after("3"), Some(Duration::from_secs(3)));
        assert_eq!(parse_retry_after("soon"), None);
    }
}
