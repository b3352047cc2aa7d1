//! Middleware every request passes: the session (loaded once, put in the
//! request's extensions), CSRF on unsafe methods, and security headers.

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{Payload, ServiceRequest, ServiceResponse};
use actix_web::http::header::{self, HeaderValue};
use actix_web::http::Method;
use actix_web::middleware::Next;
use actix_web::web::{Bytes, BytesMut, Data};
use actix_web::HttpMessage;
use actix_web_flash_messages::IncomingFlashMessages;
use futures_util::StreamExt;

use crate::auth::csrf;
use crate::auth::session::{self, SignedIn};
use crate::state::AppState;
use crate::web::error::PortalError;

/// Largest form body read for its CSRF field.
const MAX_FORM_BYTES: usize = 256 * 1024;

/// The caller's address as the socket saw it.
pub fn client_ip(req: &actix_web::HttpRequest) -> String {
    req.peer_addr().map(|a| a.ip().to_string()).unwrap_or_default()
}

pub fn user_agent(req: &actix_web::HttpRequest) -> String {
    req.headers()
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .chars()
        .take(400)
        .collect()
}

fn is_unsafe(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

async fn read_form(req: &mut ServiceRequest) -> Result<Bytes, PortalError> {
    let mut payload = req.take_payload();
    let mut body = BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|_| PortalError::CsrfRejected)?;
        if body.len() + chunk.len() > MAX_FORM_BYTES {
            return Err(PortalError::Unavailable("the form is too large".to_owned()));
        }
        body.extend_from_slice(&chunk);
    }
    let body = body.freeze();
    req.set_payload(Payload::from(body.clone()));
    Ok(body)
}

async fn check_csrf(req: &mut ServiceRequest) -> Result<(), PortalError> {
    let signed_in = req.extensions().get::<SignedIn>().map(|s| s.csrf_token.clone());
    let expected = match &signed_in {
        Some(token) => token.clone(),
        None if csrf::is_pre_session(req.path()) => req
            .cookie(csrf::LOGIN_COOKIE)
            .map(|c| c.value().to_owned())
            .unwrap_or_default(),
        // Nothing to protect without a session: the handler sends them to sign in.
        None => return Err(PortalError::NotSignedIn),
    };
    let mut presented = req
        .headers()
        .get(csrf::HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let is_form = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
    if presented.is_none() && is_form {
        presented = csrf::form_token(&read_form(req).await?);
    }
    if csrf::matches(&expected, presented.as_deref()) {
        Ok(())
    } else {
        Err(PortalError::CsrfRejected)
    }
}

/// The notices the last response left for this one (a signed cookie).
async fn notices(req: &mut ServiceRequest) -> Vec<String> {
    req.extract::<IncomingFlashMessages>()
        .await
        .map(|messages| messages.iter().map(|m| m.content().to_owned()).collect())
        .unwrap_or_default()
}

/// Loads the session and enforces CSRF on unsafe methods (the webhook
/// receiver authenticates by signature instead).
pub async fn session_and_csrf(
    mut req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let state = req
        .app_data::<Data<AppState>>()
        .cloned()
        .expect("the app registers its state");
    let mut clear_cookie = false;
    // Static files need no session.
    let cookie = if req.path().starts_with("/static/") {
        None
    } else {
        req.cookie(session::COOKIE)
    };
    if let Some(cookie) = cookie {
        let ip = client_ip(req.request());
        let ua = user_agent(req.request());
        match session::load(&state.pool, &state.sessions, cookie.value(), &ip, &ua).await {
            Ok(Some((mut signed_in, membership))) => {
                signed_in.notices = notices(&mut req).await;
                req.extensions_mut().insert(signed_in);
                if let Some(membership) = membership {
                    req.extensions_mut().insert(membership);
                }
            }
            Ok(None) => clear_cookie = true,
            Err(e) => return Err(PortalError::from(e).into()),
        }
    }
    let changes = is_unsafe(req.method()) && !req.path().starts_with("/hooks/");
    if changes {
        if let Err(e) = check_csrf(&mut req).await {
            return Ok(req.error_response(e).map_into_boxed_body());
        }
    }
    let res = next.call(req).await;
    // What it changed holds for the next request here, without waiting to
    // hear of it (see `auth::session_cache`), whatever it answered.
    if changes {
        state.sessions.forget();
    }
    let mut res = res?.map_into_boxed_body();
    if clear_cookie {
        let _ = res
            .response_mut()
            .add_cookie(&session::removal_cookie(state.secure_cookies));
    }
    Ok(res)
}

/// Security headers on every answer: a CSP with no inline script, frame
/// denial, no-sniff, no referrer, HSTS over TLS, and no-store unless the
/// answer says otherwise (only static files do).
/// A path of this site only: no scheme, no host, no `//`.
pub fn local_path(candidate: &str) -> Option<&str> {
    let ok = candidate.starts_with('/')
        && !candidate.starts_with("//")
        && !candidate.contains('\\')
        && candidate.len() <= 500
        && !candidate.chars().any(char::is_control);
    ok.then_some(candidate)
}

/// The page the browser is on: the request's own for a page load, the
/// `HX-Current-URL` one for an htmx request.
fn current_page(req: &ServiceRequest, htmx: bool) -> Option<String> {
    if htmx {
        let url = req.headers().get("HX-Current-URL")?.to_str().ok()?;
        let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
        let path = &after_scheme[after_scheme.find('/')?..];
        return local_path(path).map(str::to_owned);
    }
    (req.method() == Method::GET)
        .then(|| req.uri().path_and_query().map(|p| p.as_str().to_owned()))
        .flatten()
        .filter(|p| local_path(p).is_some())
}

/// Sends a request whose session is gone to sign in, and back to the page
/// it was on afterwards. An htmx request (a live panel that polls) gets
/// `HX-Redirect` and no `Location`: htmx would follow a 303 itself and
/// swap the sign-in page into the panel; this way the whole browser goes.
pub async fn sign_in_redirects(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let htmx = req.headers().contains_key("HX-Request");
    let here = current_page(&req, htmx);
    let res = next.call(req).await?.map_into_boxed_body();
    let Some(to) = res
        .headers()
        .get("HX-Redirect")
        .and_then(|v| v.to_str().ok())
        .filter(|_| res.status().is_redirection())
        .map(str::to_owned)
    else {
        return Ok(res);
    };
    let to = match here.filter(|p| to == "/login" && p != "/" && !p.starts_with("/login")) {
        Some(page) => format!(
            "/login?{}",
            serde_urlencoded::to_string([("next", page)]).unwrap_or_default()
        ),
        None => to,
    };
    let (req, mut res) = res.into_parts();
    let location = HeaderValue::from_str(&to).map_err(actix_web::error::ErrorInternalServerError)?;
    if htmx {
        res = actix_web::HttpResponse::Ok()
            .insert_header(("HX-Redirect", location))
            .finish();
    } else {
        res.headers_mut().insert(header::LOCATION, location.clone());
        res.headers_mut()
            .insert(header::HeaderName::from_static("hx-redirect"), location);
    }
    Ok(ServiceResponse::new(req, res))
}

pub async fn security_headers(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let secure = req
        .app_data::<Data<AppState>>()
        .map(|s| s.secure_cookies)
        .unwrap_or(false);
    let mut res = next.call(req).await?.map_into_boxed_body();
    let headers = res.headers_mut();
    let set = |headers: &mut header::HeaderMap, name: header::HeaderName, value: &'static str| {
        if !headers.contains_key(&name) {
            headers.insert(name, HeaderValue::from_static(value));
        }
    };
    set(
        headers,
        header::CONTENT_SECURITY_POLICY,
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; \
         frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'",
    );
    set(headers, header::X_FRAME_OPTIONS, "DENY");
    set(headers, header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(headers, header::REFERRER_POLICY, "no-referrer");
    set(headers, header::CACHE_CONTROL, "no-store");
    if secure {
        set(
            headers,
            header::STRICT_TRANSPORT_SECURITY,
            "max-age=31536000; includeSubDomains",
        );
    }
    Ok(res)
}
