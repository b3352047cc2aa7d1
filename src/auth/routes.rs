//! Sign-in, sign-out, "sign out everywhere" and password change.

use actix_web::web::{self, Data, Form};
use actix_web::{HttpRequest, HttpResponse};
use askama::Template;
use chrono::Utc;
use secrecy::SecretString;
use serde::Deserialize;

use super::session::{self, SignedIn};
use super::{csrf, password, store, throttle};
use crate::audit::Event;
use crate::audit::{self, outcome, Actor, NewRecord};
use crate::startup::AppState;
use crate::web::error::PortalError;
use crate::web::middleware::{client_ip, local_path, user_agent};
use crate::web::page::{html, redirect};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/login", web::get().to(login_form))
        .route("/login", web::post().to(login))
        .route("/logout", web::post().to(logout))
        .route("/logout/everywhere", web::post().to(logout_everywhere))
        .route("/account/password", web::get().to(password_form))
        .route("/account/password", web::post().to(change_password));
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
    next: String,
}

fn login_page(
    status: actix_web::http::StatusCode,
    page: LoginPage,
    secure: bool,
) -> Result<HttpResponse, PortalError> {
    let token = page.csrf_token.clone();
    Ok(HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .cookie(csrf::login_cookie(token, secure))
        .body(page.render()?))
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
    password: String,
    #[serde(default)]
    next: String,
}

async fn login(
    state: Data<AppState>,
    req: HttpRequest,
    form: Form<LoginForm>,
) -> Result<HttpResponse, PortalError> {
    let form = form.into_inner();
    let ip = client_ip(&req);
    let actor = Actor {
        user_id: None,
        email: form.email.trim().to_lowercase(),
        ip: ip.clone(),
        user_agent: user_agent(&req),
    };
    let refuse = |status, message: String| {
        login_page(
            status,
            LoginPage {
                csrf_token: session::random_token(),
                email: form.email.clone(),
                error: Some(message),
                notice: None,
                next: local_path(&form.next).unwrap_or_default().to_owned(),
            },
            state.secure_cookies,
        )
    };
    if throttle::address_blocked(&state.pool, &ip).await? {
        audit::store::append(
            &state.pool,
            &[NewRecord::new(
                &actor,
                None,
                Event::AuthSignInFailed,
                &actor.email,
                outcome::FAILURE,
            )
            .with_details(serde_json::json!({"reason": "address throttled"}))],
        )
        .await?;
        return refuse(
            actix_web::http::StatusCode::TOO_MANY_REQUESTS,
            "Too many failed sign-ins from your network. Wait 15 minutes, then try again.".to_owned(),
        );
    }
    let user = store::by_email(&state.pool, &form.email).await?;
    let matches = password::verify(
        user.as_ref().map(|u| u.password_hash.clone()),
        SecretString::from(form.password),
    )
    .await;
    let locked = user
        .as_ref()
        .and_then(|u| u.locked_until)
        .filter(|until| *until > Utc::now());
    let active = user.as_ref().is_some_and(|u| u.disabled_at.is_none());

    if let (Some(user), true, None, true) = (&user, matches, locked, active) {
        throttle::record_success(&state.pool, user.id).await?;
        let token = session::start(&state.pool, user.id, None, &ip, &actor.user_agent).await?;
        let actor = Actor {
            user_id: Some(user.id),
            ..actor
        };
        audit::store::append(
            &state.pool,
            &[NewRecord::new(
                &actor,
                None,
                Event::AuthSignIn,
                format!("user:{}", user.id),
                outcome::SUCCESS,
            )],
        )
        .await?;
        let next = if user.must_change_password {
            "/account/password"
        } else {
            local_path(&form.next).unwrap_or("/")
        };
        return Ok(HttpResponse::SeeOther()
            .insert_header((actix_web::http::header::LOCATION, next))
            .cookie(session::cookie(token, state.secure_cookies))
            .finish());
    }

    let reason = match (&user, locked, active, matches) {
        (None, ..) => "unknown email",
        (Some(_), Some(_), ..) => "account locked",
        (Some(_), None, false, _) => "account disabled",
        _ => "wrong password",
    };
    let now_locked = if reason == "wrong password" {
        throttle::record_failure(&state.pool, &ip, user.as_ref().map(|u| u.id)).await?
    } else {
        throttle::record_failure(&state.pool, &ip, None).await?;
        locked
    };
    audit::store::append(
        &state.pool,
        &[NewRecord::new(
            &Actor {
                user_id: user.as_ref().map(|u| u.id),
                ..actor.clone()
            },
            None,
            Event::AuthSignInFailed,
            &actor.email,
            outcome::FAILURE,
        )
        .with_details(serde_json::json!({ "reason": reason }))],
    )
    .await?;
    let message = match now_locked {
        Some(until) => format!(
            "This account is locked after repeated failed sign-ins. Try again after {} UTC, or ask an admin.",
            until.format("%H:%M")
        ),
        None => "The email or password is not right. Check both and try again.".to_owned(),
    };
    refuse(actix_web::http::StatusCode::UNAUTHORIZED, message)
}

async fn logout(state: Data<AppState>, user: SignedIn) -> Result<HttpResponse, PortalError> {
    session::end(&state.pool, &user.token_hash).await?;
    audit::store::append(
        &state.pool,
        &[NewRecord::new(
            &user.actor(),
            None,
            Event::AuthSignOut,
            format!("user:{}", user.user_id),
            outcome::SUCCESS,
        )],
    )
    .await?;
    Ok(HttpResponse::SeeOther()
        .insert_header((actix_web::http::header::LOCATION, "/login?signed_out=1"))
        .cookie(session::removal_cookie(state.secure_cookies))
        .finish())
}

async fn logout_everywhere(state: Data<AppState>, user: SignedIn) -> Result<HttpResponse, PortalError> {
    let ended = session::end_all(&state.pool, user.user_id).await?;
    audit::store::append(
        &state.pool,
        &[NewRecord::new(
            &user.actor(),
            None,
            Event::AuthSignOutEverywhere,
            format!("user:{}", user.user_id),
            outcome::SUCCESS,
        )
        .with_details(serde_json::json!({ "sessions_ended": ended }))],
    )
    .await?;
    Ok(HttpResponse::SeeOther()
        .insert_header((actix_web::http::header::LOCATION, "/login?signed_out=1"))
        .cookie(session::removal_cookie(state.secure_cookies))
        .finish())
}

#[derive(Template)]
#[template(path = "auth/password.html")]
struct PasswordPage {
    csrf_token: String,
    forced: bool,
    error: Option<String>,
    min_length: usize,
}

async fn password_form(user: SignedIn) -> Result<HttpResponse, PortalError> {
    html(&PasswordPage {
        csrf_token: user.csrf_token.clone(),
        forced: user.must_change_password,
        error: None,
        min_length: password::MIN_LENGTH,
    })
}

#[derive(Deserialize)]
pub struct PasswordForm {
    current_password: String,
    new_password: String,
    confirm_password: String,
}

async fn change_password(
    state: Data<AppState>,
    user: SignedIn,
    form: Form<PasswordForm>,
) -> Result<HttpResponse, PortalError> {
    let form = form.into_inner();
    let again = |message: String| -> Result<HttpResponse, PortalError> {
        let page = PasswordPage {
            csrf_token: user.csrf_token.clone(),
            forced: user.must_change_password,
            error: Some(message),
            min_length: password::MIN_LENGTH,
        };
        Ok(HttpResponse::UnprocessableEntity()
            .content_type("text/html; charset=utf-8")
            .body(page.render()?))
    };
    let stored = store::by_id(&state.pool, user.user_id)
        .await?
        .map(|u| u.password_hash);
    if !password::verify(stored, SecretString::from(form.current_password)).await {
        return again("Your current password is not right.".to_owned());
    }
    if let Err(message) = password::check_new(&form.new_password, &user.email) {
        return again(message);
    }
    if form.new_password != form.confirm_password {
        return again("The two new passwords differ. Type the same one twice.".to_owned());
    }
    let hash = password::hash(SecretString::from(form.new_password)).await;
    store::set_password(&state.pool, user.user_id, &hash).await?;
    // Other sessions may belong to whoever knew the old password.
    session::end_others(&state.pool, user.user_id, &user.token_hash).await?;
    audit::store::append(
        &state.pool,
        &[NewRecord::new(
            &user.actor(),
            None,
            Event::AuthPasswordChanged,
            format!("user:{}", user.user_id),
            outcome::SUCCESS,
        )],
    )
    .await?;
    Ok(redirect("/?password_changed=1"))
}
