//! The typed async client: one method per operation, the envelope
//! unwrapped, RFC 7807 answers as [`ApiError::Problem`], and every request
//! signed with [`crate::signing`].
//!
//! Retries: only idempotent calls are retried (reads, and writes that carry
//! a reference, which the service de-duplicates), on 429 (honouring
//! `Retry-After`), 502/503/504, connection failures, timeouts and empty
//! 5xx answers. A write that times out or gets a 5xx without a body
//! reports [`ApiError::OutcomeUnknown`]: the caller must read the result
//! back by its reference instead of sending again blindly.

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::HeaderMap;
use secrecy::SecretString;

use crate::wire::Problem;

mod addresses;
mod balances;
mod beneficiaries;
mod bulk;
mod cards;
mod control;
mod customers;
mod lightning;
mod payouts;
mod trading;
mod transport;
mod virtual_accounts;
mod withdrawals;

/// The header the service puts its request id in.
pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// A client id and its secret. The secret never prints.
#[derive(Clone)]
pub struct Credentials {
    pub client_id: String,
    secret: SecretString,
}

impl Credentials {
    pub fn new(client_id: impl Into<String>, secret: impl Into<String>) -> Self {
        Self {
            client_id: client_id.into(),
            secret: SecretString::from(secret.into()),
        }
    }
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("client_id", &self.client_id)
            .field("secret", &"[redacted]")
            .finish()
    }
}

/// Everything that can go wrong with a call, typed so that a caller can
/// tell a refusal from an unknown outcome.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The service answered with an RFC 7807 problem.
    #[error("{} ({status}): {} [correlation id {}]", problem.title, problem.detail, problem.correlation_id)]
    Problem {
        status: u16,
        problem: Box<Problem>,
        retry_after: Option<Duration>,
    },
    /// A write may or may not have happened (timeout, or 5xx without a body).
    #[error("the outcome of {method} {path} is unknown ({reason}); read it back by its reference before trying again")]
    OutcomeUnknown {
        method: &'static str,
        path: String,
        reason: String,
    },
    /// A read could not be completed (connection refused, timeout, 5xx without a body).
    #[error("the service could not be reached: {0}")]
    Unavailable(String),
    /// The service answered with something this client cannot read.
    #[error("the service answered {status} with a body this client cannot read: {reason}")]
    UnexpectedResponse { status: u16, reason: String },
}

impl ApiError {
    pub fn status(&self) -> Option<u16> {
        match self {
            ApiError::Problem { status, .. } | ApiError::UnexpectedResponse { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The service's error code (e.g. `VALIDATION_ERROR`), when it gave one.
    pub fn code(&self) -> Option<&str> {
        match self {
            ApiError::Problem { problem, .. } => problem.code.as_deref(),
            _ => None,
        }
    }

    /// An onchain payout's finalize refused because its deposit has not
    /// been confirmed yet: the payout waits (read it back later), it did
    /// not fail.
    pub fn is_deposit_not_confirmed(&self) -> bool {
        self.status() == Some(422) && self.code() == Some(crate::wire::codes::DEPOSIT_NOT_CONFIRMED)
    }

    pub fn problem(&self) -> Option<&Problem> {
        match self {
            ApiError::Problem { problem, .. } => Some(problem),
            _ => None,
        }
    }

    fn is_retryable(&self) -> bool {
        match self {
            ApiError::Problem { status, .. } => matches!(status, 429 | 502 | 503 | 504),
            ApiError::OutcomeUnknown { .. } | ApiError::Unavailable(_) => true,
            ApiError::UnexpectedResponse { .. } => false,
        }
    }
}

/// How a client behaves; the defaults suit an interactive portal.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Time allowed for one attempt, connect to last byte.
    pub timeout: Duration,
    /// Extra attempts for idempotent calls.
    pub max_retries: u32,
    /// First backoff; doubles each retry.
    pub backoff: Duration,
    /// Longest `Retry-After` the client will wait for before giving up.
    pub max_retry_after: Duration,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(15),
            max_retries: 2,
            backoff: Duration::from_millis(200),
            max_retry_after: Duration::from_secs(10),
        }
    }
}

/// What one attempt of a call did, for callers that record upstream calls
/// (the portal's audit log). Never contains credentials or bodies.
#[derive(Debug, Clone)]
pub struct CallRecord {
    pub method: &'static str,
    pub path: String,
    pub status: Option<u16>,
    /// The service's request id (`x-request-id`, or the problem's correlation id).
    pub request_id: Option<String>,
    pub outcome: CallOutcome,
    pub duration: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallOutcome {
    Ok,
    /// A 4xx answer.
    Refused,
    /// A 5xx answer with a body.
    Failed,
    /// No answer, or an empty 5xx: the operation may or may not have run.
    Unknown,
}

impl CallOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            CallOutcome::Ok => "ok",
            CallOutcome::Refused => "refused",
            CallOutcome::Failed => "failed",
            CallOutcome::Unknown => "unknown",
        }
    }
}

/// Receives a [`CallRecord`] after every attempt.
pub trait CallObserver: Send + Sync {
    fn observe(&self, record: CallRecord);
}

/// A signed client for one set of credentials.
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    base_url: String,
    credentials: Credentials,
    options: ClientOptions,
    observer: Option<Arc<dyn CallObserver>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("base_url", &self.base_url)
            .field("credentials", &self.credentials)
            .finish()
    }
}

/// An answer read off the wire, before it becomes a typed value.
struct RawResponse {
    status: u16,
    headers: HeaderMap,
    body: Vec<u8>,
}

impl Client {
    pub fn new(base_url: impl Into<String>, credentials: Credentials) -> Self {
        Self::with_options(base_url, credentials, ClientOptions::default())
    }

    pub fn with_options(
        base_url: impl Into<String>,
        credentials: Credentials,
        options: ClientOptions,
    ) -> Self {
        Self::with_http(Self::http_client(&options), base_url, credentials, options)
    }

    /// The connection pool a client uses; share one among many clients.
    pub fn http_client(options: &ClientOptions) -> reqwest::Client {
        reqwest::Client::builder()
            .timeout(options.timeout)
            .connect_timeout(options.timeout.min(Duration::from_secs(5)))
            .build()
            .expect("the HTTP client's TLS backend initialises")
    }

    /// A client over an existing connection pool.
    pub fn with_http(
        http: reqwest::Client,
        base_url: impl Into<String>,
        credentials: Credentials,
        options: ClientOptions,
    ) -> Self {
        Self {
            http,
            base_url: base_url.into().trim_end_matches('/').to_owned(),
            credentials,
            options,
            observer: None,
        }
    }

    /// The same client, reporting every attempt to `observer`.
    pub fn observed(&self, observer: Arc<dyn CallObserver>) -> Self {
        Self {
            observer: Some(observer),
            ..self.clone()
        }
    }

    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    pub fn client_id(&self) -> &str {
        &self.credentials.client_id
    }
}

fn push_opt(q: &mut Vec<(&'static str, String)>, key: &'static str, value: Option<String>) {
    if let Some(v) = value {
        q.push((key, v));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_never_print_the_secret() {
        let c = Credentials::new("id", "super-secret-value");
        assert!(!format!("{c:?}").contains("super-secret-value"));
    }
}
