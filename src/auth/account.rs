//! Signing in and out and changing one's password: the rules behind the
//! forms (throttling by address, lockout by account, one message for a
//! wrong email, a wrong password and a locked account, so the page doesn't
//! tell which accounts exist), each outcome audited.

use chrono::Utc;
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
    /// The browser's session cookie, if it still has one: a new sign-in
    /// ends it, so one browser never holds two live sessions.
    pub previous_session: Option<String>,
}

/// A session begun: its token (for the cookie) and where to go first.
pub struct Started {
    pub token: String,
    pub must_change_password: bool,
}

/// What a right password leads to: a session, or (with two-factor on)
/// the code page under a short-lived challenge token.
pub enum SignedInWith {
    Session(Started),
    SecondFactor(String),
}

/// How long the code page waits after the password, and how many codes
/// it takes before the password must be given again.
pub const CHALLENGE_LIFETIME: chrono::Duration = chrono::Duration::minutes(5);
const CHALLENGE_ATTEMPTS: i32 = 5;

#[derive(Debug, thiserror::Error)]
pub enum SignInError {
    #[error("Too many failed sign-ins from your network. Wait 15 minutes, then try again.")]
    Throttled,
    /// Also a locked account's answer: telling "locked" apart would say
    /// the email has an account.
    #[error("The email or password is not right, or the account is locked for 15 minutes after repeated failures. Check both and try again, reset your password, or ask an admin to unlock it.")]
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
pub async fn sign_in(pool: &PgPool, attempt: Attempt) -> Result<SignedInWith, SignInError> {
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
    let expired = user
        .as_ref()
        .is_some_and(|u| u.must_change_password && u.password_expires_at.is_some_and(|t| t <= Utc::now()));
    actor.user_id = user.as_ref().map(|u| u.id);
    let reason = match (&user, locked, active, matches) {
        (Some(user), None, true, true) if !expired => {
            if user.two_factor {
                let challenge = session::random_token();
                sqlx::query!(
                    "INSERT INTO second_factor_challenges (token_hash, user_id, ip, user_agent, expires_at) \
                     VALUES ($1, $2, $3, $4, now() + $5::interval)",
                    session::token_hash(&challenge),
                    user.id,
                    attempt.ip,
                    attempt.user_agent,
                    crate::db::interval(CHALLENGE_LIFETIME),
                )
                .execute(pool)
                .await?;
                return Ok(SignedInWith::SecondFactor(challenge));
            }
            throttle::record_success(pool, user.id).await?;
            let started = begin_session(pool, &actor, attempt.previous_session.as_deref(), false).await?;
            return Ok(SignedInWith::Session(Started {
                must_change_password: user.must_change_password,
                ..started
            }));
        }
        (None, ..) => "unknown email",
        (Some(_), Some(_), ..) => "account locked",
        (Some(_), None, false, _) => "account disabled",
        (Some(_), None, true, true) => "one-time password expired",
        _ => "wrong password",
    };
    // Only a wrong password counts against the account.
    let counted = actor.user_id.filter(|_| reason == "wrong password");
    throttle::record_failure(pool, &attempt.ip, counted).await?;
    audit_failure(pool, &actor, reason).await?;
    Err(SignInError::Refused)
}

/// A new session for `actor` (the browser's previous one ends), audited
/// as a sign-in.
async fn begin_session(
    pool: &PgPool,
    actor: &Actor,
    previous: Option<&str>,
    verified: bool,
) -> Result<Started, sqlx::Error> {
    let user_id = actor.user_id.expect("a signed-in actor has an account");
    // Into the tenant last chosen (the first by name if none, or if it is
    // no longer theirs). Read before the transaction, which holds one
    // connection and must not wait for a second.
    let last = sqlx::query_scalar!("SELECT last_tenant_id FROM users WHERE id = $1", user_id)
        .fetch_one(pool)
        .await?;
    // Recorded in the tenant the user lands in (the platform log when they
    // belong to none), so no tenant sees another's.
    let landing = crate::access::store::membership(pool, user_id, last).await?;
    let mut tx = pool.begin().await?;
    if let Some(previous) = previous {
        session::end(&mut *tx, &session::token_hash(previous)).await?;
    }
    let token = session::start(&mut *tx, user_id, last, (&actor.ip, &actor.user_agent), verified).await?;
    let record = NewRecord::new(
        actor,
        landing.map(|m| m.tenant_id),
        Event::AuthSignIn,
        format!("user:{user_id}"),
        outcome::SUCCESS,
    )
    .with_details(serde_json::json!({ "two_factor": verified }));
    audit::store::append_in(&mut tx, &[record]).await?;
    tx.commit().await?;
    Ok(Started {
        token,
        must_change_password: false,
    })
}

#[derive(Debug, thiserror::Error)]
pub enum SecondFactorError {
    #[error("That code is not right. Type the 6 digits your app shows now, or one of your recovery codes.")]
    WrongCode,
    #[error("Sign in again: the code page waits 5 minutes and takes 5 tries.")]
    Expired,
    #[error(transparent)]
    Failure(#[from] Failure),
}

impl From<sqlx::Error> for SecondFactorError {
    fn from(e: sqlx::Error) -> Self {
        SecondFactorError::Failure(e.into())
    }
}

/// The second step of signing in: a TOTP or recovery code for the
/// challenge the password opened.
#[tracing::instrument(skip_all)]
pub async fn second_factor(
    pool: &PgPool,
    key: &crate::crypto::MasterKey,
    challenge: &str,
    code: &str,
    previous: Option<&str>,
) -> Result<Started, SecondFactorError> {
    let row = sqlx::query!(
        "UPDATE second_factor_challenges SET attempts = attempts + 1 \
         WHERE token_hash = $1 AND expires_at > now() AND attempts < $2 \
         RETURNING user_id, ip, user_agent",
        session::token_hash(challenge),
        CHALLENGE_ATTEMPTS,
    )
    .fetch_optional(pool)
    .await?
    .ok_or(SecondFactorError::Expired)?;
    let user = store::by_id(pool, row.user_id)
        .await?
        .ok_or(SecondFactorError::Expired)?;
    let actor = Actor {
        user_id: Some(user.id),
        email: user.email.clone(),
        ip: row.ip,
        user_agent: row.user_agent,
    };
    // A wrong code counts against the account like a wrong password, so
    // starting over with the password doesn't buy endless guesses.
    let locked = user.locked_until.is_some_and(|t| t > Utc::now());
    if locked || !super::two_factor::check(pool, key, user.id, code).await? {
        throttle::record_failure(pool, &actor.ip, Some(user.id)).await?;
        super::two_factor::record_failure(pool, &actor).await?;
        return Err(SecondFactorError::WrongCode);
    }
    sqlx::query!(
        "DELETE FROM second_factor_challenges WHERE token_hash = $1 OR expires_at < now()",
        session::token_hash(challenge)
    )
    .execute(pool)
    .await?;
    throttle::record_success(pool, user.id).await?;
    let started = begin_session(pool, &actor, previous, true).await?;
    Ok(Started {
        must_change_password: user.must_change_password,
        ..started
    })
}

#[tracing::instrument(skip_all, fields(user = %user.user_id, everywhere))]
pub async fn sign_out(pool: &PgPool, user: &SignedIn, everywhere: bool) -> Result<(), sqlx::Error> {
    let mut tx = pool.begin().await?;
    let record = if everywhere {
        let ended = session::end_all(&mut *tx, user.user_id).await?;
        NewRecord::new(
            &user.actor(),
            user.active_tenant_id,
            Event::AuthSignOutEverywhere,
            format!("user:{}", user.user_id),
            outcome::SUCCESS,
        )
        .with_details(serde_json::json!({ "sessions_ended": ended }))
    } else {
        session::end(&mut *tx, &user.token_hash).await?;
        NewRecord::new(
            &user.actor(),
            user.active_tenant_id,
            Event::AuthSignOut,
            format!("user:{}", user.user_id),
            outcome::SUCCESS,
        )
    };
    audit::store::append_in(&mut tx, &[record]).await?;
    tx.commit().await
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
    let mut tx = pool.begin().await?;
    store::set_password(&mut *tx, user.user_id, &hash).await?;
    // Other sessions may belong to whoever knew the old password.
    session::end_others(&mut *tx, user.user_id, &user.token_hash).await?;
    let record = NewRecord::new(
        &user.actor(),
        user.active_tenant_id,
        Event::AuthPasswordChanged,
        format!("user:{}", user.user_id),
        outcome::SUCCESS,
    );
    audit::store::append_in(&mut tx, &[record]).await?;
    tx.commit().await?;
    Ok(())
}
