//! One error type for every refusal, rendered once as an RFC 7807 problem
//! with the service's `code` (see `sandbox-rules.md`, "Errors and statuses").

use actix_web::http::{header, StatusCode};
use actix_web::{HttpResponse, ResponseError};
use chrono::{DateTime, Utc};
use paydesk_api::wire::{codes, FieldError, Problem};

#[derive(Debug, Clone, thiserror::Error)]
pub enum ApiError {
    #[error("{detail}")]
    Validation { detail: String, errors: Vec<FieldError> },
    #[error("{0}")]
    Unauthorized(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    NotFound(String),
    /// `allow` lists the path's methods for the `Allow` header.
    #[error("this path does not accept the {method} method; it accepts {allow}")]
    MethodNotAllowed { method: String, allow: String },
    #[error("{0}")]
    IdempotencyConflict(String),
    #[error("the request body is larger than 1 MiB")]
    PayloadTooLarge,
    #[error("send the body as JSON with Content-Type: application/json")]
    UnsupportedMediaType,
    #[error("{detail}")]
    Unprocessable { code: &'static str, detail: String },
    #[error("{detail}")]
    RateLimited { retry_after_secs: u64, detail: String },
    #[error("the service is temporarily unavailable; retry shortly")]
    Unavailable,
}

impl ApiError {
    /// A 400 about one field.
    pub fn field(field: impl Into<String>, message: impl Into<String>) -> Self {
        let field = field.into();
        let message = message.into();
        ApiError::Validation {
            detail: format!("{field}: {message}"),
            errors: vec![FieldError { field, message }],
        }
    }

    /// A 400 about the request as a whole.
    pub fn invalid(detail: impl Into<String>) -> Self {
        ApiError::Validation {
            detail: detail.into(),
            errors: Vec::new(),
        }
    }

    pub fn unprocessable(code: &'static str, detail: impl Into<String>) -> Self {
        ApiError::Unprocessable {
            code,
            detail: detail.into(),
        }
    }

    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::Validation { .. } => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::IdempotencyConflict(_) => StatusCode::CONFLICT,
            ApiError::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::Unprocessable { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            ApiError::Validation { .. } => codes::VALIDATION_ERROR,
            ApiError::Unauthorized(_) => codes::UNAUTHORIZED,
            ApiError::Forbidden(_) => codes::FORBIDDEN,
            ApiError::NotFound(_) => codes::NOT_FOUND,
            ApiError::MethodNotAllowed { .. } => codes::METHOD_NOT_ALLOWED,
            ApiError::IdempotencyConflict(_) => codes::IDEMPOTENCY_CONFLICT,
            ApiError::PayloadTooLarge => codes::PAYLOAD_TOO_LARGE,
            ApiError::UnsupportedMediaType => codes::UNSUPPORTED_MEDIA_TYPE,
            ApiError::Unprocessable { code, .. } => code,
            ApiError::RateLimited { .. } => codes::RATE_LIMITED,
            ApiError::Unavailable => codes::SERVICE_UNAVAILABLE,
        }
    }

    fn title(&self) -> &'static str {
        match self {
            ApiError::Validation { .. } => "Validation error",
            ApiError::Unauthorized(_) => "Unauthorized",
            ApiError::Forbidden(_) => "Forbidden",
            ApiError::NotFound(_) => "Not found",
            ApiError::MethodNotAllowed { .. } => "Method not allowed",
            ApiError::IdempotencyConflict(_) => "Idempotency conflict",
            ApiError::PayloadTooLarge => "Payload too large",
            ApiError::UnsupportedMediaType => "Unsupported media type",
            ApiError::Unprocessable { .. } => "Unprocessable request",
            ApiError::RateLimited { .. } => "Too many requests",
            ApiError::Unavailable => "Service unavailable",
        }
    }

    /// The problem body, with the request's correlation id and sandbox time.
    pub fn problem(&self, correlation_id: &str, now: DateTime<Utc>) -> Problem {
        let code = self.code();
        Problem {
            kind: format!("/problems/{}", code.to_ascii_lowercase().replace('_', "-")),
            title: self.title().to_owned(),
            status: self.status().as_u16(),
            detail: self.to_string(),
            correlation_id: correlation_id.to_owned(),
            timestamp: Some(now),
            code: Some(code.to_owned()),
            errors: match self {
                ApiError::Validation { errors, .. } => errors.clone(),
                _ => Vec::new(),
            },
        }
    }

    /// The full HTTP answer.
    pub fn to_response(&self, correlation_id: &str, now: DateTime<Utc>) -> HttpResponse {
        let mut builder = HttpResponse::build(self.status());
        builder.insert_header((header::CONTENT_TYPE, "application/problem+json"));
        match self {
            ApiError::RateLimited { retry_after_secs, .. } => {
                builder.insert_header((header::RETRY_AFTER, retry_after_secs.to_string()));
            }
            ApiError::MethodNotAllowed { allow, .. } => {
                builder.insert_header((header::ALLOW, allow.as_str()));
            }
            _ => {}
        }
        let problem = self.problem(correlation_id, now);
        let body = serde_json::to_vec(&ProblemBody {
            message: &problem.detail,
            problem: &problem,
        })
        .unwrap_or_default();
        builder.body(body)
    }
}

/// The problem as sent: RFC 7807 plus `message` (equal to `detail`), which
/// the provider's official client prints; an addition the spec leaves room for.
#[derive(serde::Serialize)]
struct ProblemBody<'a> {
    #[serde(flatten)]
    problem: &'a Problem,
    message: &'a str,
}

/// Handlers return `ApiError`; the gatekeeper middleware re-renders it with
/// the request's id and the sandbox clock (see `gatekeeper.rs`). This
/// rendering is only the fallback when that context is missing.
impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.status()
    }

    fn error_response(&self) -> HttpResponse {
        self.to_response("", Utc::now())
    }
}
