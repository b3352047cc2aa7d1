//! Sign-in, sign-out, "sign out everywhere" and password change pages;
//! the rules live in `account`.

use actix_web::http::{header, StatusCode};
use actix_web::web::{self, Data, Form};
use actix_web::{HttpRequest, HttpResponse};
use askama::Template;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;

use super::account::{self, Attempt, PasswordChange, SecondFactorError, SignInError, SignedInWith, Started};
use super::session::{self, SignedIn};
use super::{csrf, password, reset};
use crate::area::Area;
use crate::state::AppState;
use crate::web::error::PortalError;
use crate::web::form::{split, FieldErrors};
use crate::web::middleware::{client_ip, local_path, user_agent};
use crate::web::page::{done, html, redirect, unprocessable};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/login", web::get().to(login_form))
        .route("/login", web::post().to(login))
        .route("/login/two-factor", web::get().to(code_form))
        .route("/login/two-factor", web::post().to(code))
        .route("/logout", web::post().to(logout))
        .route("/logout/everywhere", web::post().to(logout_everywhere))
        .route("/account/password", web::get().to(password_form))
        .route("/account/password", web::post().to(change_password))
        .route("/password/forgot", web::get().to(forgot_form))
        .route("/password/forgot", web::post().to(forgot))
        .route("/password/reset/{token}", web::get().to(reset_form))
        .route("/password/reset/{token}", web::post().to(reset));
}

#[derive(Template)]
#[template(path = "auth/login.html")]
struct LoginPage {
    csrf_token: String,
    email: String,
    error: Option<String>,
    notice: Option<&'static str>,
    /// The page to go back to once signed in.
    next: String,
}

#[derive(Deserialize)]
pub struct NoticeQuery {
    #[serde(default)]
    signed_out: Option<String>,
    #[serde(default)]
    reset: Option<String>,
    #[serde(default)]
    joined: Option<String>,
    #[serde(default)]
    next: String,
}

fn login_page(
    status: actix_web::http::StatusCode,
    page: LoginPage,
    secure: bool,
) -> Result<HttpResponse, PortalError> {
    Ok(csrf::pre_session_page(
        status,
        &page.csrf_token,
        page.render()?,
        secure,
    ))
}

async fn login_form(
    state: Data<AppState>,
    signed_in: Option<SignedIn>,
    query: web::Query<NoticeQuery>,
) -> Result<HttpResponse, PortalError> {
    if signed_in.is_some() {
        return Ok(redirect("/"));
    }
    let notice = match (&query.signed_out, query.next.is_empty()) {
        _ if query.joined.is_some() => Some("You joined the tenant. Sign in with your password and code to continue."),
        _ if query.reset.is_some() => Some("Your password is changed and every session of your account has ended. Sign in with the new password."),
        (Some(_), _) => Some("You are signed out."),
        (None, false) => Some("Your session ended. Sign in to go back to where you were."),
        (None, true) => None,
    };
    login_page(
        actix_web::http::StatusCode::OK,
        LoginPage {
            csrf_token: session::random_token(),
            email: String::new(),
            error: None,
            notice,
            next: local_path(&query.next).unwrap_or_default().to_owned(),
        },
        state.secure_cookies,
    )
}

#[derive(Deserialize)]
pub struct LoginForm {
    email: String,
    password: SecretString,
    #[serde(default)]
    next: String,
}

async fn login(
    state: Data<AppState>,
    req: HttpRequest,
    form: Form<LoginForm>,
) -> Result<HttpResponse, PortalError> {
    let LoginForm {
        email,
        password,
        next,
    } = form.into_inner();
    let attempt = Attempt {
        email: email.clone(),
        password,
        ip: client_ip(&req),
        user_agent: user_agent(&req),
        previous_session: req.cookie(session::COOKIE).map(|c| c.value().to_owned()),
    };
    let (status, message) = match account::sign_in(&state.pool, attempt).await {
        Ok(SignedInWith::Session(started)) => return Ok(signed_in(started, &next, state.secure_cookies)),
        Ok(SignedInWith::SecondFactor(challenge)) => {
            return Ok(to_code_page(&challenge, &next, state.secure_cookies))
        }
        Err(SignInError::Db(e)) => return Err(e.into()),
        Err(e @ SignInError::Throttled) => (StatusCode::TOO_MANY_REQUESTS, e.to_string()),
        Err(e) => (StatusCode::UNAUTHORIZED, e.to_string()),
    };
    let page = LoginPage {
        csrf_token: session::random_token(),
        email,
        error: Some(message),
        notice: None,
        next: local_path(&next).unwrap_or_default().to_owned(),
    };
    login_page(status, page, state.secure_cookies)
}

/// Into the portal with the new session: to choose a password first when
/// it must change, else back to the page the user came from.
pub fn signed_in(started: Started, next: &str, secure: bool) -> HttpResponse {
    let to = match started.must_change_password {
        true => "/account/password",
        false => local_path(next).unwrap_or("/"),
    };
    HttpResponse::SeeOther()
        .insert_header((header::LOCATION, to))
        .cookie(session::cookie(started.token, secure))
        .finish()
}

/// Back to sign-in, with the session cookie gone.
fn signed_out(secure: bool) -> HttpResponse {
    HttpResponse::SeeOther()
        .insert_header((header::LOCATION, "/login?signed_out=1"))
        .cookie(session::removal_cookie(secure))
        .finish()
}

async fn logout(state: Data<AppState>, user: SignedIn) -> Result<HttpResponse, PortalError> {
    account::sign_out(&state.pool, &user, false).await?;
    Ok(signed_out(state.secure_cookies))
}

async fn logout_everywhere(state: Data<AppState>, user: SignedIn) -> Result<HttpResponse, PortalError> {
    account::sign_out(&state.pool, &user, true).await?;
    Ok(signed_out(state.secure_cookies))
}

#[derive(Template)]
#[template(path = "auth/password.html")]
struct PasswordPage {
    csrf_token: String,
    forced: bool,
    errors: FieldErrors,
    min_length: usize,
}

fn password_page(user: &SignedIn, errors: FieldErrors) -> PasswordPage {
    PasswordPage {
        csrf_token: user.csrf_token.clone(),
        forced: user.must_change_password,
        errors,
        min_length: password::MIN_LENGTH,
    }
}

async fn password_form(user: SignedIn) -> Result<HttpResponse, PortalError> {
    html(&password_page(&user, FieldErrors::default()))
}

async fn change_password(
    state: Data<AppState>,
    user: SignedIn,
    form: Form<PasswordChange>,
) -> Result<HttpResponse, PortalError> {
    match split(account::change_password(&state.pool, &user, form.into_inner()).await)? {
        Ok(()) => Ok(done(
            "/",
            "Your password is changed. Your other sessions have ended.",
        )),
        Err(refusal) => Ok(unprocessable(password_page(&user, refusal.into()).render()?)),
    }
}

#[derive(Template)]
#[template(path = "auth/forgot.html")]
struct ForgotPage {
    csrf_token: String,
    sent: bool,
}

fn forgot_page(sent: bool, secure: bool) -> Result<HttpResponse, PortalError> {
    let page = ForgotPage {
        csrf_token: session::random_token(),
        sent,
    };
    Ok(csrf::pre_session_page(
        StatusCode::OK,
        &page.csrf_token,
        page.render()?,
        secure,
    ))
}

async fn forgot_form(state: Data<AppState>) -> Result<HttpResponse, PortalError> {
    forgot_page(false, state.secure_cookies)
}

#[derive(Deserialize)]
pub struct ForgotForm {
    email: String,
}

/// The same answer, at once, whatever the email: the work happens after.
async fn forgot(
    state: Data<AppState>,
    req: HttpRequest,
    form: Form<ForgotForm>,
) -> Result<HttpResponse, PortalError> {
    let actor = crate::audit::Actor {
        user_id: None,
        email: form.email.trim().to_lowercase(),
        ip: client_ip(&req),
        user_agent: user_agent(&req),
    };
    reset::request(state.clone(), form.email.trim().to_lowercase(), actor);
    forgot_page(true, state.secure_cookies)
}

#[derive(Template)]
#[template(path = "auth/reset.html")]
struct ResetPage {
    csrf_token: String,
    token: String,
    /// None: the link no longer works.
    email: Option<String>,
    errors: FieldErrors,
    min_length: usize,
}

async fn reset_page(
    state: &AppState,
    token: String,
    errors: FieldErrors,
) -> Result<HttpResponse, PortalError> {
    let email = reset::open(state, &token).await?.map(|(_, email)| email);
    let status = match (&email, errors.is_empty()) {
        (None, _) => StatusCode::GONE,
        (Some(_), true) => StatusCode::OK,
        (Some(_), false) => StatusCode::UNPROCESSABLE_ENTITY,
    };
    let page = ResetPage {
        csrf_token: session::random_token(),
        token,
        email,
        errors,
        min_length: password::MIN_LENGTH,
    };
    Ok(csrf::pre_session_page(
        status,
        &page.csrf_token,
        page.render()?,
        state.secure_cookies,
    ))
}

async fn reset_form(state: Data<AppState>, token: web::Path<String>) -> Result<HttpResponse, PortalError> {
    reset_page(&state, token.into_inner(), FieldErrors::default()).await
}

async fn reset(
    state: Data<AppState>,
    req: HttpRequest,
    token: web::Path<String>,
    form: Form<reset::NewPassword>,
) -> Result<HttpResponse, PortalError> {
    let actor = crate::audit::Actor {
        ip: client_ip(&req),
        user_agent: user_agent(&req),
        ..Default::default()
    };
    match split(reset::reset(&state, &token, form.into_inner(), actor).await)? {
        Ok(()) => Ok(HttpResponse::SeeOther()
            .insert_header((header::LOCATION, "/login?reset=1"))
            .cookie(session::removal_cookie(state.secure_cookies))
            .finish()),
        Err(refusal) => reset_page(&state, token.into_inner(), refusal.into()).await,
    }
}

/// The cookie that carries the second step's challenge: only to
/// `/login/two-factor`, for five minutes.
const CHALLENGE_COOKIE: &str = "paydesk_two_factor";

fn challenge_cookie(value: String, secure: bool) -> actix_web::cookie::Cookie<'static> {
    actix_web::cookie::Cookie::build(CHALLENGE_COOKIE, value)
        .path("/login/two-factor")
        .http_only(true)
        .secure(secure)
        .same_site(actix_web::cookie::SameSite::Strict)
        .max_age(actix_web::cookie::time::Duration::minutes(5))
        .finish()
}

fn to_code_page(challenge: &str, next: &str, secure: bool) -> HttpResponse {
    let query =
        serde_urlencoded::to_string([("next", local_path(next).unwrap_or_default())]).unwrap_or_default();
    HttpResponse::SeeOther()
        .insert_header((header::LOCATION, format!("/login/two-factor?{query}")))
        .cookie(challenge_cookie(challenge.to_owned(), secure))
        .finish()
}

#[derive(Template)]
#[template(path = "auth/two_factor.html")]
struct CodePage {
    csrf_token: String,
    error: Option<String>,
    next: String,
}

/// The code page; in a browser still signed in (signing in again), its
/// form carries that session's token, which the CSRF check expects.
fn code_page(
    status: StatusCode,
    error: Option<String>,
    next: &str,
    signed_in: Option<&SignedIn>,
    secure: bool,
) -> Result<HttpResponse, PortalError> {
    let page = CodePage {
        csrf_token: csrf::page_token(signed_in),
        error,
        next: local_path(next).unwrap_or_default().to_owned(),
    };
    let body = page.render()?;
    Ok(csrf::page_answer(
        status,
        &page.csrf_token,
        body,
        signed_in.is_some(),
        secure,
    ))
}

async fn code_form(
    state: Data<AppState>,
    signed_in: Option<SignedIn>,
    query: web::Query<NoticeQuery>,
) -> Result<HttpResponse, PortalError> {
    code_page(
        StatusCode::OK,
        None,
        &query.next,
        signed_in.as_ref(),
        state.secure_cookies,
    )
}

#[derive(Deserialize)]
pub struct CodeForm {
    code: SecretString,
    #[serde(default)]
    next: String,
}

async fn code(
    state: Data<AppState>,
    req: HttpRequest,
    already: Option<SignedIn>,
    form: Form<CodeForm>,
) -> Result<HttpResponse, PortalError> {
    let challenge = req
        .cookie(CHALLENGE_COOKIE)
        .map(|c| c.value().to_owned())
        .unwrap_or_default();
    let previous = req.cookie(session::COOKIE).map(|c| c.value().to_owned());
    let checked = account::second_factor(
        &state.pool,
        &state.key,
        &challenge,
        form.code.expose_secret(),
        previous.as_deref(),
    )
    .await;
    match checked {
        Ok(started) => {
            let mut res = signed_in(started, &form.next, state.secure_cookies);
            let mut gone = challenge_cookie(String::new(), state.secure_cookies);
            gone.set_max_age(actix_web::cookie::time::Duration::ZERO);
            res.add_cookie(&gone)
                .map_err(|e| PortalError::Internal(Box::new(e)))?;
            Ok(res)
        }
        Err(SecondFactorError::Failure(crate::web::form::Failure::Portal(e))) => Err(e),
        Err(e) => code_page(
            StatusCode::UNAUTHORIZED,
            Some(e.to_string()),
            &form.next,
            already.as_ref(),
            state.secure_cookies,
        ),
    }
}

/// Sign-in, sessions, passwords and two-factor.
pub const AREA: Area = Area::routes(|cfg| {
    configure(cfg);
    super::security::configure(cfg);
});
