//! Password reset by mail: a single-use link, valid for an hour. Asking
//! answers the same whether or not the email has an account, and the
//! lookup and the mail happen after the answer, so neither the words nor
//! the timing tell who has an account. A reset also ends a lockout and
//! every session of the account.

use chrono::Duration;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use uuid::Uuid;

use super::session::{self, token_hash};
use super::{password, store as users};
use crate::audit::{self, outcome, Actor, Event, NewRecord};
use crate::mail::Mail;
use crate::state::AppState;
use crate::web::form::{Failure, Refusal};

pub const VALID_FOR: Duration = Duration::hours(1);
/// Links asked for one account within an hour, beyond which asking again
/// sends nothing (no mailbox flooding).
const MAX_OPEN: i64 = 3;

/// Starts a reset in the background and returns at once.
pub fn request(state: actix_web::web::Data<AppState>, email: String, actor: Actor) {
    tokio::spawn(async move {
        if let Err(e) = send_link(&state, &email, actor).await {
            tracing::warn!(error = %e, "a password reset could not be sent");
        }
    });
}

async fn send_link(state: &AppState, email: &str, mut actor: Actor) -> anyhow::Result<()> {
    let Some(user) = users::by_email(&state.pool, email).await? else {
        return Ok(());
    };
    if user.disabled_at.is_some() {
        return Ok(());
    }
    let open = sqlx::query_scalar!(
        r#"SELECT count(*) AS "count!" FROM password_resets
           WHERE user_id = $1 AND used_at IS NULL AND created_at > now() - interval '1 hour'"#,
        user.id,
    )
    .fetch_one(&state.pool)
    .await?;
    if open >= MAX_OPEN {
        return Ok(());
    }
    let token = session::random_token();
    let mut tx = state.pool.begin().await?;
    sqlx::query!(
        "INSERT INTO password_resets (token_hash, user_id, expires_at) VALUES ($1, $2, now() + $3::interval)",
        token_hash(&token),
        user.id,
        crate::db::interval(VALID_FOR),
    )
    .execute(&mut *tx)
    .await?;
    let mail = Mail {
        to: user.email.clone(),
        subject: "Reset your Paydesk password".to_owned(),
        body: format!(
            "Someone (we hope you) asked to reset the password of {} on Paydesk.\n\nOpen this link within an hour to choose a new one; it works once:\n{}/password/reset/{token}\n\nIf it wasn't you, ignore this mail: your password stays as it is.\n",
            user.email, state.public_url,
        ),
    };
    actor.user_id = Some(user.id);
    let record = NewRecord::new(
        &actor,
        None,
        Event::AuthPasswordResetRequested,
        format!("user:{}", user.id),
        outcome::SUCCESS,
    );
    audit::store::append_in(&mut tx, &[record]).await?;
    // Committed before mailing: the transaction must not hold its
    // connection while the mail takes another (anyone can ask for resets).
    tx.commit().await?;
    state.mailer.send(&state.pool, mail).await?;
    Ok(())
}

/// The account an open reset link is for.
pub async fn open(state: &AppState, token: &str) -> Result<Option<(Uuid, String)>, sqlx::Error> {
    Ok(sqlx::query!(
        "SELECT u.id, u.email FROM password_resets r JOIN users u ON u.id = r.user_id \
         WHERE r.token_hash = $1 AND r.used_at IS NULL AND r.expires_at > now() AND u.disabled_at IS NULL",
        token_hash(token),
    )
    .fetch_optional(&state.pool)
    .await?
    .map(|r| (r.id, r.email)))
}

#[derive(Deserialize)]
pub struct NewPassword {
    pub new_password: SecretString,
    pub confirm_password: SecretString,
}

#[tracing::instrument(skip_all)]
pub async fn reset(state: &AppState, token: &str, form: NewPassword, actor: Actor) -> Result<(), Failure> {
    let gone = || {
        Refusal::form(
            "This reset link has expired or was already used. Ask for a new one from the sign-in page.",
        )
    };
    let (user_id, email) = open(state, token).await?.ok_or_else(gone)?;
    password::check_new(form.new_password.expose_secret(), &email)
        .map_err(|m| Refusal::field("new_password", m))?;
    if form.new_password.expose_secret() != form.confirm_password.expose_secret() {
        return Err(Refusal::field(
            "confirm_password",
            "The two passwords differ. Type the same one twice.",
        )
        .into());
    }
    let hash = password::hash(form.new_password).await;
    let mut tx = state.pool.begin().await?;
    let used = sqlx::query_scalar!(
        "UPDATE password_resets SET used_at = now() \
         WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now() RETURNING user_id",
        token_hash(token),
    )
    .fetch_optional(&mut *tx)
    .await?;
    if used.is_none() {
        return Err(gone().into());
    }
    sqlx::query!(
        "UPDATE users SET password_hash = $2, must_change_password = false, password_expires_at = NULL, \
           failed_logins = 0, locked_until = NULL, updated_at = now() WHERE id = $1",
        user_id,
        hash,
    )
    .execute(&mut *tx)
    .await?;
    // Whoever knew the old password is signed out too.
    sqlx::query!("DELETE FROM sessions WHERE user_id = $1", user_id)
        .execute(&mut *tx)
        .await?;
    let actor = Actor {
        user_id: Some(user_id),
        email,
        ..actor
    };
    let record = NewRecord::new(
        &actor,
        None,
        Event::AuthPasswordReset,
        format!("user:{user_id}"),
        outcome::SUCCESS,
    );
    audit::store::append_in(&mut tx, &[record]).await?;
    tx.commit().await?;
    Ok(())
}
