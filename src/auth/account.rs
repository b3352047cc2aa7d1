//! Signing in and out and changing one's password: the rules behind the
//! forms (throttling by address, lockout by account, one message for every
//! wrong email or password so the page doesn't tell which), each outcome
//! audited.

use chrono::{DateTime, Utc};
use secrecy::{ExposeSecret, SecretString};
use sqlx::PgPool;

use super::session::{self, SignedIn};
use super::{password, store, throttle};
use crate::audit::{self, outcome, Actor, Event, NewRecord};
use crate::web::form::{Failure, Refusal};

/// Who is trying to sign in, from where.
pub struct Attempt {
    pub email: String,
    pub password: SecretString,
    pub ip: String,
    pub user_agent: String,
}

/// A session begun: its token (for the cookie) and where to go first.
pub struct Started {
    pub token: String,
    pub must_change_password: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum SignInError {
    #[error("Too many failed sign-ins from your network. Wait 15 minutes, then try again.")]
    Throttled,
    #[error("This account is locked after repeated failed sign-ins. Try again after {} UTC, or ask an admin.", .0.format("%H:%M"))]
    Locked(DateTime<Utc>),
    #[error("The email or password is not right. Check both and try again.")]
    Refused,
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

async fn audit_failure(pool: &PgPool, actor: &Actor, reason: &str) -> Result<(), sqlx::Error> {
    let record = NewRecord::new(
        actor,
        None,
        Event::AuthSignInFailed,
        &actor.email,
        outcome::FAILURE,
    )
    .with_details(serde_json::json!({ "reason": reason }));
    audit::store::append(pool, &[record]).await
}

#[tracing::instrument(skip_all, fields(ip = %attempt.ip))]
pub async fn sign_in(pool: &PgPool, attempt: Attempt) -> Result<Started, SignInError> {
    let mut actor = Actor {
        user_id: None,
        email: attempt.email.trim().to_lowercase(),
        ip: attempt.ip.clone(),
        user_agent: attempt.user_agent.clone(),
    };
    if throttle::address_blocked(pool, &attempt.ip).await? {
        audit_failure(pool, &actor, "address throttled").await?;
        return Err(SignInError::Throttled);
    }
    let user = store::by_email(pool, &attempt.email).await?;
    let matches = password::verify(user.as_ref().map(|u| u.password_hash.clone()), attempt.password).await;
    let locked = user
        .as_ref()
        .and_then(|u| u.locked_until)
        .filter(|until| *until > Utc::now());
    let active = user.as_ref().is_some_and(|u| u.disabled_at.is_none());
    actor.user_id = user.as_ref().map(|u| u.id);
    let reason = match (&user, locked, active, matches) {
        (Some(user), None, true, true) => {
            throttle::record_success(pool, user.id).await?;
            let token = session::start(pool, user.id, None, &attempt.ip, &attempt.user_agent).await?;
            // Recorded in the tenant the user lands in (the platform log
            // when they belong to none), so no tenant sees another's.
            let landing = crate::access::store::membership(pool, user.id, None).await?;
            let record = NewRecord::new(
                &actor,
                landing.map(|m| m.tenant_id),
                Event::AuthSignIn,
                format!("user:{}", user.id),
                outcome::SUCCESS,
            );
            audit::store::append(pool, &[record]).await?;
            return Ok(Started {
                token,
                must_change_password: user.must_change_password,
            });
        }
        (None, ..) => "unknown email",
        (Some(_), Some(_), ..) => "account locked",
        (Some(_), None, false, _) => "account disabled",
        _ => "wrong password",
    };
    // Only a wrong password counts against the account.
    let counted = actor.user_id.filter(|_| reason == "wrong password");
    let now_locked = throttle::record_failure(pool, &attempt.ip, counted)
        .await?
        .or(locked);
    audit_failure(pool, &actor, reason).await?;
    Err(now_locked.map_or(SignInError::Refused, SignInError::Locked))
}

#[tracing::instrument(skip_all, fields(user = %user.user_id, everywhere))]
pub async fn sign_out(pool: &PgPool, user: &SignedIn, everywhere: bool) -> Result<(), sqlx::Error> {
    let record = if everywhere {
        let ended = session::end_all(pool, user.user_id).await?;
        NewRecord::new(
            &user.actor(),
            user.active_tenant_id,
            Event::AuthSignOutEverywhere,
            format!("user:{}", user.user_id),
            outcome::SUCCESS,
        )
        .with_details(serde_json::json!({ "sessions_ended": ended }))
    } else {
        session::end(pool, &user.token_hash).await?;
        NewRecord::new(
            &user.actor(),
            user.active_tenant_id,
            Event::AuthSignOut,
            format!("user:{}", user.user_id),
            outcome::SUCCESS,
        )
    };
    audit::store::append(pool, &[record]).await
}

/// The password form; secrets never leave their wrappers but to be checked.
#[derive(serde::Deserialize)]
pub struct PasswordChange {
    pub current_password: SecretString,
    pub new_password: SecretString,
    pub confirm_password: SecretString,
}

#[tracing::instrument(skip_all, fields(user = %user.user_id))]
pub async fn change_password(pool: &PgPool, user: &SignedIn, change: PasswordChange) -> Result<(), Failure> {
    let stored = store::by_id(pool, user.user_id).await?.map(|u| u.password_hash);
    if !password::verify(stored, change.current_password).await {
        return Err(Refusal::field("current_password", "Your current password is not right.").into());
    }
    password::check_new(change.new_password.expose_secret(), &user.email)
        .map_err(|m| Refusal::field("new_password", m))?;
    if change.new_password.expose_secret() != change.confirm_password.expose_secret() {
        return Err(Refusal::field(
            "confirm_password",
            "The two new passwords differ. Type the same one twice.",
        )
        .into());
    }
    let hash = password::hash(change.new_password).await;
    store::set_password(pool, user.user_id, &hash).await?;
    // Other sessions may belong to whoever knew the old password.
    session::end_others(pool, user.user_id, &user.token_hash).await?;
    let record = NewRecord::new(
        &user.actor(),
        user.active_tenant_id,
        Event::AuthPasswordChanged,
        format!("user:{}", user.user_id),
        outcome::SUCCESS,
    );
    audit::store::append(pool, &[record]).await?;
    Ok(())
}
