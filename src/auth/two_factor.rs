//! TOTP two-factor (RFC 6238, 30-second codes of 6 digits, as every
//! authenticator app makes them) with single-use recovery codes.
//!
//! Each code works once: the last time step used is kept, and only a
//! later one is accepted (one step of clock drift either way). It is
//! required of a member whose tenant asks for it, and always of a member
//! who can approve, administer or reveal card details
//! (`Permission::needs_two_factor`). Approving and revealing card details
//! also ask for a fresh proof: a code within the last five minutes
//! (`step_up`).

use chrono::{Duration, Utc};
use rand::Rng;
use secrecy::{ExposeSecret, SecretString};
use sha2::{Digest, Sha256};
use totp_rs::{Algorithm, Builder, Secret, Totp};
use uuid::Uuid;

use super::session::{self, SignedIn};
use super::throttle;
use crate::audit::{self, outcome, Actor, Event, NewRecord};
use crate::crypto::MasterKey;
use crate::web::error::PortalError;
use crate::web::form::{Failure, Refusal};

/// How recent a proof of the second factor must be for a sensitive action.
pub const STEP_UP_WINDOW: Duration = Duration::minutes(5);
const RECOVERY_CODES: usize = 10;
const STEP_SECONDS: u64 = 30;

/// A stored secret that can't be used: a fault of ours, not the user's.
fn broken(e: impl std::fmt::Display) -> PortalError {
    PortalError::Internal(format!("a TOTP secret is not usable: {e}").into())
}

/// The account's code maker: SHA-1, 6 digits, 30 seconds, as every
/// authenticator app expects; one step of drift accepted either way.
pub fn totp(secret: Secret, email: &str) -> Result<Totp, PortalError> {
    Builder::new()
        .with_algorithm(Algorithm::SHA1)
        .with_digits(6)
        .with_skew(1)
        .with_step_duration(STEP_SECONDS)
        .with_secret(secret)
        .with_issuer(Some("Paydesk"))
        .with_account_name(email)
        .build()
        .map_err(broken)
}

/// What an authenticator app needs: the key as text and as a QR code.
pub struct Enrolment {
    pub secret: String,
    pub qr_svg: String,
}

/// Starts (or restarts) enrolment with a new secret, kept sealed until a
/// code from it turns two-factor on.
#[tracing::instrument(skip_all, fields(user = %user.user_id))]
pub async fn begin(pool: &sqlx::PgPool, key: &MasterKey, user: &SignedIn) -> Result<Enrolment, Failure> {
    if user.two_factor {
        return Err(
            Refusal::form("Two-factor is already on. Turn it off first to move it to another app.").into(),
        );
    }
    let secret = Secret::generate();
    let encoded = secret.to_base32();
    let sealed = key.seal(&SecretString::from(encoded.clone()));
    sqlx::query!(
        "UPDATE users SET totp_secret_enc = $2, totp_enabled_at = NULL WHERE id = $1",
        user.user_id,
        sealed
    )
    .execute(pool)
    .await?;
    let url = totp(secret, &user.email)?.to_url().map_err(broken)?;
    Ok(Enrolment {
        secret: encoded,
        qr_svg: crate::web::qr::svg(&url),
    })
}

/// The enrolment under way (a secret not confirmed yet), shown again
/// after a wrong code.
pub async fn pending(
    pool: &sqlx::PgPool,
    key: &MasterKey,
    user: &SignedIn,
) -> Result<Option<Enrolment>, PortalError> {
    if user.two_factor {
        return Ok(None);
    }
    let Some((totp, _)) = secret_of(pool, key, user.user_id).await? else {
        return Ok(None);
    };
    Ok(Some(Enrolment {
        secret: totp.secret().to_base32(),
        qr_svg: crate::web::qr::svg(&totp.to_url().map_err(broken)?),
    }))
}

/// The pending or active secret of an account, opened.
async fn secret_of(
    pool: &sqlx::PgPool,
    key: &MasterKey,
    user_id: Uuid,
) -> Result<Option<(Totp, i64)>, PortalError> {
    let row = sqlx::query!(
        "SELECT email, totp_secret_enc, totp_last_step FROM users WHERE id = $1",
        user_id
    )
    .fetch_optional(pool)
    .await?;
    let Some(row) = row else { return Ok(None) };
    let Some(sealed) = row.totp_secret_enc else {
        return Ok(None);
    };
    let encoded = key.open(&sealed).map_err(broken)?;
    let secret = Secret::try_from_base32(encoded.expose_secret()).map_err(broken)?;
    Ok(Some((totp(secret, &row.email)?, row.totp_last_step)))
}

/// True when `code` is a current TOTP code of the account not used
/// before, or one of its unused recovery codes (which is then used up).
pub async fn check(pool: &sqlx::PgPool, key: &MasterKey, user_id: Uuid, code: &str) -> Result<bool, Failure> {
    let code: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    if code.len() == 6 && code.chars().all(|c| c.is_ascii_digit()) {
        let Some((totp, last_step)) = secret_of(pool, key, user_id).await? else {
            return Ok(false);
        };
        let step = totp.check(&code, Utc::now().timestamp() as u64).map(|s| s as i64);
        let Some(step) = step.filter(|s| *s > last_step) else {
            return Ok(false);
        };
        // Taken only if no other request took this step first.
        let taken = sqlx::query!(
            "UPDATE users SET totp_last_step = $2 WHERE id = $1 AND totp_last_step < $2",
            user_id,
            step
        )
        .execute(pool)
        .await?;
        return Ok(taken.rows_affected() == 1);
    }
    let used = sqlx::query!(
        "UPDATE recovery_codes SET used_at = now() WHERE user_id = $1 AND code_hash = $2 AND used_at IS NULL",
        user_id,
        recovery_hash(&code),
    )
    .execute(pool)
    .await?;
    Ok(used.rows_affected() == 1)
}

fn recovery_hash(code: &str) -> Vec<u8> {
    Sha256::digest(code.to_lowercase().replace('-', "").as_bytes()).to_vec()
}

/// Ten new recovery codes, replacing any earlier ones; shown once.
async fn new_recovery_codes(tx: &mut sqlx::PgConnection, user_id: Uuid) -> Result<Vec<String>, sqlx::Error> {
    const ALPHABET: &[u8] = b"abcdefghjkmnpqrstuvwxyz23456789";
    let codes: Vec<String> = {
        let mut rng = rand::thread_rng();
        (0..RECOVERY_CODES)
            .map(|_| {
                let mut part = || {
                    (0..5)
                        .map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())] as char)
                        .collect::<String>()
                };
                format!("{}-{}", part(), part())
            })
            .collect()
    };
    sqlx::query!("DELETE FROM recovery_codes WHERE user_id = $1", user_id)
        .execute(&mut *tx)
        .await?;
    for code in &codes {
        sqlx::query!(
            "INSERT INTO recovery_codes (user_id, code_hash) VALUES ($1, $2)",
            user_id,
            recovery_hash(code)
        )
        .execute(&mut *tx)
        .await?;
    }
    Ok(codes)
}

fn record(user: &SignedIn, event: Event) -> NewRecord {
    NewRecord::new(
        &user.actor(),
        None,
        event,
        format!("user:{}", user.user_id),
        outcome::SUCCESS,
    )
}

/// A code from a signed-in session, counted as a sign-in's code is: a
/// wrong one counts against the account, and the fifth in a row locks it
/// for 15 minutes and ends its sessions, so a stolen session can't guess
/// its way past step-up. A locked account's codes are refused unread.
async fn proves(pool: &sqlx::PgPool, key: &MasterKey, user: &SignedIn, code: &str) -> Result<bool, Failure> {
    if throttle::is_locked(pool, user.user_id).await? {
        return Err(locked_out());
    }
    if check(pool, key, user.user_id, code).await? {
        throttle::record_success(pool, user.user_id).await?;
        return Ok(true);
    }
    record_failure(pool, &user.actor()).await?;
    if throttle::record_account_failure(pool, user.user_id).await? {
        session::end_all(pool, user.user_id).await?;
        return Err(locked_out());
    }
    Ok(false)
}

fn locked_out() -> Failure {
    Refusal::form(
        "Too many wrong codes: the account is locked for 15 minutes and signed out everywhere. \
         Sign in again after that, or ask an admin to unlock it.",
    )
    .into()
}

/// Turns two-factor on once a code from the new secret checks; returns
/// the recovery codes to show once. The session counts as verified.
#[tracing::instrument(skip_all, fields(user = %user.user_id))]
pub async fn confirm(
    pool: &sqlx::PgPool,
    key: &MasterKey,
    user: &SignedIn,
    code: &str,
) -> Result<Vec<String>, Failure> {
    if !check(pool, key, user.user_id, code).await? {
        return Err(Refusal::field(
            "code",
            "That code is not right. Type the 6 digits your app shows now (they change every 30 seconds).",
        )
        .into());
    }
    let mut tx = pool.begin().await?;
    sqlx::query!(
        "UPDATE users SET totp_enabled_at = now() WHERE id = $1",
        user.user_id
    )
    .execute(&mut *tx)
    .await?;
    mark_verified(&mut tx, &user.token_hash).await?;
    let codes = new_recovery_codes(&mut tx, user.user_id).await?;
    audit::store::append_in(&mut tx, &[record(user, Event::AuthTwoFactorEnabled)]).await?;
    tx.commit().await?;
    Ok(codes)
}

async fn mark_verified(tx: &mut sqlx::PgConnection, token_hash: &[u8]) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE sessions SET verified_at = now() WHERE token_hash = $1",
        token_hash
    )
    .execute(tx)
    .await?;
    Ok(())
}

/// New recovery codes, after a code proves it is the account's owner.
#[tracing::instrument(skip_all, fields(user = %user.user_id))]
pub async fn renew_recovery_codes(
    pool: &sqlx::PgPool,
    key: &MasterKey,
    user: &SignedIn,
    code: &str,
) -> Result<Vec<String>, Failure> {
    if !proves(pool, key, user, code).await? {
        return Err(Refusal::field(
            "code",
            "That code is not right. Type the 6 digits your app shows now.",
        )
        .into());
    }
    let mut tx = pool.begin().await?;
    let codes = new_recovery_codes(&mut tx, user.user_id).await?;
    audit::store::append_in(&mut tx, &[record(user, Event::AuthRecoveryCodesRenewed)]).await?;
    tx.commit().await?;
    Ok(codes)
}

/// Turns two-factor off, when nothing the member holds requires it.
#[tracing::instrument(skip_all, fields(user = %user.user_id))]
pub async fn disable(
    pool: &sqlx::PgPool,
    key: &MasterKey,
    user: &SignedIn,
    required: bool,
    code: &str,
) -> Result<(), Failure> {
    if required {
        return Err(Refusal::form("Two-factor can't be turned off: your role (or your tenant) requires it. To move it to a new phone, ask an admin to reset it, or use a recovery code to sign in and enrol again.").into());
    }
    if !proves(pool, key, user, code).await? {
        return Err(Refusal::field(
            "code",
            "That code is not right. Type the 6 digits your app shows now.",
        )
        .into());
    }
    let mut tx = pool.begin().await?;
    sqlx::query!(
        "UPDATE users SET totp_secret_enc = NULL, totp_enabled_at = NULL WHERE id = $1",
        user.user_id
    )
    .execute(&mut *tx)
    .await?;
    sqlx::query!("DELETE FROM recovery_codes WHERE user_id = $1", user.user_id)
        .execute(&mut *tx)
        .await?;
    audit::store::append_in(&mut tx, &[record(user, Event::AuthTwoFactorDisabled)]).await?;
    tx.commit().await?;
    Ok(())
}

/// A fresh proof of the second factor for a sensitive action: the
/// session's own when it is recent, else the code given with the form.
#[tracing::instrument(skip_all, fields(user = %user.user_id))]
pub async fn step_up(
    pool: &sqlx::PgPool,
    key: &MasterKey,
    user: &SignedIn,
    code: Option<&str>,
) -> Result<(), Failure> {
    if !needs_step_up(user) {
        return Ok(());
    }
    let code = code.unwrap_or_default();
    if code.trim().is_empty() {
        return Err(Refusal::field(
            "code",
            "Confirm it's you: type the 6-digit code from your authenticator app.",
        )
        .into());
    }
    if !proves(pool, key, user, code).await? {
        return Err(Refusal::field(
            "code",
            "That code is not right. Type the 6 digits your app shows now.",
        )
        .into());
    }
    let mut tx = pool.begin().await?;
    mark_verified(&mut tx, &user.token_hash).await?;
    audit::store::append_in(&mut tx, &[record(user, Event::AuthSteppedUp)]).await?;
    tx.commit().await?;
    Ok(())
}

/// A sensitive action now would ask for a code.
pub fn needs_step_up(user: &SignedIn) -> bool {
    user.two_factor && !is_fresh(user)
}

/// The session proved the second factor within the step-up window.
pub fn is_fresh(user: &SignedIn) -> bool {
    user.verified_at.is_some_and(|t| t > Utc::now() - STEP_UP_WINDOW)
}

/// For the sign-in audit record when the second step fails.
pub async fn record_failure(pool: &sqlx::PgPool, actor: &Actor) -> Result<(), sqlx::Error> {
    let record = NewRecord::new(
        actor,
        None,
        Event::AuthTwoFactorFailed,
        &actor.email,
        outcome::FAILURE,
    );
    audit::store::append(pool, &[record]).await
}

/// Whether anything the user holds requires two-factor: being a platform
/// admin, a tenant that asks it of everyone, or a role with a permission
/// that needs it.
pub async fn required_for(pool: &sqlx::PgPool, user: &SignedIn) -> Result<bool, sqlx::Error> {
    if user.is_platform_admin {
        return Ok(true);
    }
    let sensitive: Vec<String> = crate::access::permissions::Permission::ALL
        .iter()
        .filter(|p| p.needs_two_factor())
        .map(|p| p.name().to_owned())
        .collect();
    sqlx::query_scalar!(
        r#"SELECT EXISTS (
             SELECT 1 FROM memberships m JOIN tenants t ON t.id = m.tenant_id
             LEFT JOIN role_permissions rp ON rp.role_id = m.role_id
             WHERE m.user_id = $1 AND (t.require_two_factor OR rp.permission = ANY($2))
           ) AS "required!""#,
        user.user_id,
        &sensitive,
    )
    .fetch_one(pool)
    .await
}
