//! `/account/security`: a member's own sessions (device, address, last
//! seen; end any of them) and two-factor (set up with a QR code, recovery
//! codes shown once, renew them, turn it off when nothing requires it).
//! It works for a signed-in user whatever their tenant, since a member
//! whose role needs two-factor is sent here before anything else.

use actix_web::web::{self, Data, Form, Path};
use actix_web::HttpResponse;
use askama::Template;
use serde::Deserialize;

use super::session::{self, SessionRow, SignedIn};
use super::two_factor::{self, Enrolment};
use crate::audit::{self, outcome, Event, NewRecord};
use crate::state::AppState;
use crate::web::error::PortalError;
use crate::web::form::{split, FieldErrors, Refusal};
use crate::web::page::{done, ok, unprocessable};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/account/security", web::get().to(show))
        .route("/account/security/two-factor", web::post().to(begin))
        .route("/account/security/two-factor/confirm", web::post().to(confirm))
        .route("/account/security/two-factor/disable", web::post().to(disable))
        .route("/account/security/recovery-codes", web::post().to(renew))
        .route("/account/security/sessions/{id}/end", web::post().to(end_session));
}

#[derive(Template)]
#[template(path = "auth/security.html")]
struct SecurityPage {
    csrf_token: String,
    email: String,
    two_factor: bool,
    required: bool,
    sessions: Vec<SessionRow>,
    enrolment: Option<Enrolment>,
    /// Shown once, right after they are made.
    recovery_codes: Vec<String>,
    errors: FieldErrors,
    notices: Vec<String>,
}

/// The page as it stands, with what this answer adds.
async fn page(
    state: &AppState,
    user: &SignedIn,
    enrolment: Option<Enrolment>,
    recovery_codes: Vec<String>,
    errors: FieldErrors,
) -> Result<String, PortalError> {
    Ok(SecurityPage {
        csrf_token: user.csrf_token.clone(),
        email: user.email.clone(),
        two_factor: user.two_factor || !recovery_codes.is_empty(),
        required: two_factor::required_for(&state.pool, user).await?,
        sessions: session::of_user(&state.pool, user).await?,
        enrolment,
        recovery_codes,
        errors,
        notices: user.notices.clone(),
    }
    .render()?)
}

async fn show(state: Data<AppState>, user: SignedIn) -> Result<HttpResponse, PortalError> {
    Ok(ok(
        page(&state, &user, None, Vec::new(), FieldErrors::default()).await?
    ))
}

async fn refuse(state: &AppState, user: &SignedIn, refusal: Refusal) -> Result<HttpResponse, PortalError> {
    Ok(unprocessable(
        page(state, user, None, Vec::new(), refusal.into()).await?,
    ))
}

/// Shows a new secret and its QR code, to be confirmed with a code.
async fn begin(state: Data<AppState>, user: SignedIn) -> Result<HttpResponse, PortalError> {
    match split(two_factor::begin(&state.pool, &state.key, &user).await)? {
        Ok(enrolment) => Ok(ok(page(
            &state,
            &user,
            Some(enrolment),
            Vec::new(),
            FieldErrors::default(),
        )
        .await?)),
        Err(refusal) => refuse(&state, &user, refusal).await,
    }
}

#[derive(Deserialize)]
pub struct CodeForm {
    #[serde(default)]
    code: String,
}

/// Turns two-factor on; the answer shows the recovery codes, once.
async fn confirm(
    state: Data<AppState>,
    user: SignedIn,
    form: Form<CodeForm>,
) -> Result<HttpResponse, PortalError> {
    match split(two_factor::confirm(&state.pool, &state.key, &user, &form.code).await)? {
        Ok(codes) => Ok(ok(page(&state, &user, None, codes, FieldErrors::default()).await?)),
        Err(refusal) => {
            // The same key again, beside the message, to try the next code.
            let pending = two_factor::pending(&state.pool, &state.key, &user).await?;
            Ok(unprocessable(
                page(&state, &user, pending, Vec::new(), refusal.into()).await?,
            ))
        }
    }
}

async fn renew(
    state: Data<AppState>,
    user: SignedIn,
    form: Form<CodeForm>,
) -> Result<HttpResponse, PortalError> {
    match split(two_factor::renew_recovery_codes(&state.pool, &state.key, &user, &form.code).await)? {
        Ok(codes) => Ok(ok(page(&state, &user, None, codes, FieldErrors::default()).await?)),
        Err(refusal) => refuse(&state, &user, refusal).await,
    }
}

async fn disable(
    state: Data<AppState>,
    user: SignedIn,
    form: Form<CodeForm>,
) -> Result<HttpResponse, PortalError> {
    let required = two_factor::required_for(&state.pool, &user).await?;
    match split(two_factor::disable(&state.pool, &state.key, &user, required, &form.code).await)? {
        Ok(()) => Ok(done("/account/security", "Two-factor is off for your account.")),
        Err(refusal) => refuse(&state, &user, refusal).await,
    }
}

async fn end_session(
    state: Data<AppState>,
    user: SignedIn,
    id: Path<String>,
) -> Result<HttpResponse, PortalError> {
    let mut tx = state.pool.begin().await?;
    if !session::end_own(&mut *tx, user.user_id, &id).await? {
        return Err(PortalError::NotFound(
            "no such session of yours; it may have ended already".to_owned(),
        ));
    }
    let record = NewRecord::new(
        &user.actor(),
        None,
        Event::AuthSessionEnded,
        format!("user:{}", user.user_id),
        outcome::SUCCESS,
    );
    audit::store::append_in(&mut tx, &[record]).await?;
    tx.commit().await?;
    Ok(done(
        "/account/security",
        "That session has ended; its browser must sign in again.",
    ))
}
