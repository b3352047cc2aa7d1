//! One error type for the portal's handlers, mapped once to a response: a
//! redirect to sign-in, or a finished page (or htmx fragment) that tells the
//! user what happened and what to do. Internal details go to the log with
//! an incident id, never to the page.

use actix_web::http::{header, StatusCode};
use actix_web::{HttpResponse, ResponseError};
use askama::Template;
use paydesk_api::ApiError;
use uuid::Uuid;

#[derive(Debug, thiserror::Error)]
pub enum PortalError {
    #[error("sign in to continue")]
    NotSignedIn,
    #[error("choose a new password to continue")]
    PasswordChangeRequired,
    #[error("turn on two-factor to continue")]
    TwoFactorRequired,
    #[error("create a tenant to start")]
    SetUpTenant,
    #[error("you need the '{0}' permission for this; ask an admin of this tenant to grant it")]
    Forbidden(String),
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    BadRequest(String),
    #[error("you are not a member of any tenant yet; ask an admin to add you")]
    NoTenant,
    #[error("this form has expired or did not come from Paydesk; reload the page and try again")]
    CsrfRejected,
    #[error("the tenant has no API connection yet; an admin can add one under Settings → Connections")]
    NoConnection,
    #[error("{0}")]
    Upstream(#[from] ApiError),
    #[error("{0}")]
    Unavailable(String),
    #[error("something went wrong on our side")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl From<sqlx::Error> for PortalError {
    fn from(e: sqlx::Error) -> Self {
        PortalError::Internal(Box::new(e))
    }
}

impl From<askama::Error> for PortalError {
    fn from(e: askama::Error) -> Self {
        PortalError::Internal(Box::new(e))
    }
}

impl From<crate::crypto::CryptoError> for PortalError {
    fn from(e: crate::crypto::CryptoError) -> Self {
        PortalError::Internal(Box::new(e))
    }
}

#[derive(Template)]
#[template(path = "error.html")]
struct ErrorPage<'a> {
    status: u16,
    title: &'a str,
    message: String,
    correlation_id: Option<String>,
}

/// A readable sentence for an upstream failure, never the raw body.
pub fn describe_upstream(e: &ApiError) -> (String, Option<String>) {
    match e {
        ApiError::Problem { problem, status, .. } => {
            let detail = if problem.detail.is_empty() { &problem.title } else { &problem.detail };
            let correlation = (!problem.correlation_id.is_empty()).then(|| problem.correlation_id.clone());
            (format!("The payments service refused this ({status}): {detail}"), correlation)
        }
        ApiError::OutcomeUnknown { .. } => (
            "The payments service did not confirm the result. Check the records before trying again.".to_owned(),
            None,
        ),
        ApiError::Unavailable(_) => (
            "The payments service can't be reached right now. Try again in a moment.".to_owned(),
            None,
        ),
        ApiError::UnexpectedResponse { status, .. } => (
            format!("The payments service answered in a way Paydesk could not read (HTTP {status}). Try again later."),
            None,
        ),
    }
}

/// A refusal the user can fix (any 4xx but a 404, which is a missing
/// page) becomes the sentence to show on the form; anything else stays an
/// error for the error page.
pub fn user_fixable(e: ApiError) -> Result<String, PortalError> {
    match e {
        e @ ApiError::Problem {
            status: 400..=403 | 405..=499,
            ..
        } => Ok(describe_upstream(&e).0),
        e => Err(e.into()),
    }
}

impl ResponseError for PortalError {
    fn status_code(&self) -> StatusCode {
        match self {
            PortalError::NotSignedIn
            | PortalError::PasswordChangeRequired
            | PortalError::TwoFactorRequired
            | PortalError::SetUpTenant => StatusCode::SEE_OTHER,
            PortalError::Forbidden(_) | PortalError::CsrfRejected => StatusCode::FORBIDDEN,
            PortalError::NotFound(_) => StatusCode::NOT_FOUND,
            PortalError::BadRequest(_) => StatusCode::BAD_REQUEST,
            PortalError::NoTenant | PortalError::NoConnection => StatusCode::CONFLICT,
            PortalError::Upstream(ApiError::Problem { status: 404, .. }) => StatusCode::NOT_FOUND,
            PortalError::Upstream(_) => StatusCode::BAD_GATEWAY,
            PortalError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            PortalError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let redirect = match self {
            PortalError::NotSignedIn => Some("/login"),
            PortalError::PasswordChangeRequired => Some("/account/password"),
            PortalError::TwoFactorRequired => Some("/account/security"),
            PortalError::SetUpTenant => Some("/platform"),
            _ => None,
        };
        if let Some(to) = redirect {
            return HttpResponse::SeeOther()
                .insert_header((header::LOCATION, to))
                .insert_header(("HX-Redirect", to))
                .finish();
        }
        let status = self.status_code();
        let (message, correlation_id) = match self {
            PortalError::Upstream(e) => describe_upstream(e),
            PortalError::Internal(source) => {
                let incident = Uuid::new_v4().to_string();
                tracing::error!(%incident, error = %cause_chain(source.as_ref()), "internal error");
                (
                    "Something went wrong on our side. Try again; if it keeps happening, give this reference to your administrator."
                        .to_owned(),
                    Some(incident),
                )
            }
            other => (capitalize(&other.to_string()), None),
        };
        let title = match status {
            StatusCode::FORBIDDEN => "Not allowed",
            StatusCode::NOT_FOUND => "Not found",
            StatusCode::BAD_REQUEST => "That request could not be read",
            StatusCode::CONFLICT => "Not set up yet",
            StatusCode::BAD_GATEWAY | StatusCode::SERVICE_UNAVAILABLE => "Payments service problem",
            _ => "Something went wrong",
        };
        let body = ErrorPage {
            status: status.as_u16(),
            title,
            message,
            correlation_id,
        }
        .render()
        .unwrap_or_else(|_| "Something went wrong.".to_owned());
        HttpResponse::build(status)
            .content_type("text/html; charset=utf-8")
            .body(body)
    }
}

/// An error and every error beneath it, outermost first: what the log
/// needs to find the cause.
fn cause_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut chain = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        chain.push_str(": ");
        chain.push_str(&inner.to_string());
        cause = inner.source();
    }
    chain
}

fn capitalize(s: &str) -> String {
    match s.is_empty() {
        true => String::new(),
        false => super::show::sentence_case(s) + ".",
    }
}

/// The answer for a path the portal does not have.
pub async fn not_found() -> Result<HttpResponse, PortalError> {
    Err(PortalError::NotFound(
        "there is no page at this address".to_owned(),
    ))
}

/// Malformed forms, queries and paths get the same finished pages as
/// every other error, instead of actix's plain-text defaults.
pub fn extractor_config(cfg: &mut actix_web::web::ServiceConfig) {
    use actix_web::web::{FormConfig, PathConfig, QueryConfig};
    cfg.app_data(FormConfig::default().limit(256 * 1024).error_handler(|_, _| {
        PortalError::BadRequest(
            "the form was incomplete or malformed; reload the page and try again".to_owned(),
        )
        .into()
    }))
    .app_data(QueryConfig::default().error_handler(|_, _| {
        PortalError::BadRequest("the address has a malformed query; remove it and try again".to_owned())
            .into()
    }))
    .app_data(
        PathConfig::default().error_handler(|_, _| {
            PortalError::NotFound("there is no page at this address".to_owned()).into()
        }),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("reading the request failed")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn the_log_names_every_cause() {
        let error = Outer(std::io::Error::other("connection reset"));
        assert_eq!(
            cause_chain(&error),
            "reading the request failed: connection reset"
        );
    }
}
