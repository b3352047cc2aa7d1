//! CSRF protection for every unsafe request: a synchronizer token bound to
//! the session, sent either as the `X-CSRF-Token` header (htmx sends it on
//! every request from the page's `hx-headers`) or as the `csrf_token` form
//! field. Before sign-in, the pages that work without a session (sign-in,
//! an invitation's, password reset) use a double-submit cookie.

use actix_web::cookie::{Cookie, SameSite};
use constant_time_eq::constant_time_eq;

pub const HEADER: &str = "x-csrf-token";
pub const FIELD: &str = "csrf_token";
/// The pre-session token for the pages that work without a session.
pub const LOGIN_COOKIE: &str = "paydesk_login_csrf";

/// The pages that accept a form without a session.
pub fn is_pre_session(path: &str) -> bool {
    matches!(path, "/login" | "/login/two-factor" | "/password/forgot")
        || path.starts_with("/password/reset/")
        || path.starts_with("/invitations/")
}

/// Compares a presented token with the expected one in constant time.
pub fn matches(expected: &str, presented: Option<&str>) -> bool {
    match presented {
        Some(p) if !expected.is_empty() => constant_time_eq(expected.as_bytes(), p.as_bytes()),
        _ => false,
    }
}

/// The `csrf_token` field of an urlencoded form body.
pub fn form_token(body: &[u8]) -> Option<String> {
    serde_urlencoded::from_bytes::<Vec<(String, String)>>(body)
        .ok()?
        .into_iter()
        .find(|(k, _)| k == FIELD)
        .map(|(_, v)| v)
}

/// The form token of a page that works with or without a session (the
/// two-factor step, an invitation): the session's when there is one, since
/// the CSRF check then expects it, else a fresh pre-session token.
pub fn page_token(signed_in: Option<&crate::auth::session::SignedIn>) -> String {
    signed_in.map_or_else(crate::auth::session::random_token, |s| s.csrf_token.clone())
}

/// Such a page's answer: a pre-session token also goes in the cookie.
pub fn page_answer(
    status: actix_web::http::StatusCode,
    token: &str,
    body: String,
    signed_in: bool,
    secure: bool,
) -> actix_web::HttpResponse {
    match signed_in {
        true => actix_web::HttpResponse::build(status)
            .content_type("text/html; charset=utf-8")
            .body(body),
        false => pre_session_page(status, token, body, secure),
    }
}

/// A pre-session page's answer: the page with a fresh token in its form
/// and the same token in the cookie.
pub fn pre_session_page(
    status: actix_web::http::StatusCode,
    token: &str,
    body: String,
    secure: bool,
) -> actix_web::HttpResponse {
    actix_web::HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .cookie(login_cookie(token.to_owned(), secure))
        .body(body)
}

pub fn login_cookie(token: String, secure: bool) -> Cookie<'static> {
    Cookie::build(LOGIN_COOKIE, token)
        .path("/")
        .http_only(true)
        .secure(secure)
        .same_site(SameSite::Strict)
        .finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_must_match_exactly() {
        assert!(matches("abc", Some("abc")));
        assert!(!matches("abc", Some("abd")));
        assert!(!matches("abc", None));
        assert!(!matches("", Some("")));
        assert_eq!(form_token(b"a=1&csrf_token=xyz").as_deref(), Some("xyz"));
        assert_eq!(form_token(b"a=1"), None);
    }
}
