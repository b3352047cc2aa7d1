//! Throttling of sign-in attempts: an account locks for 15 minutes after 5
//! failures in a row, and an address that fails 20 times in 15 minutes is
//! refused until its failures age out. Both live in Postgres, so every
//! replica sees them.

use chrono::Duration;
use sqlx::{PgExecutor, PgPool};
use uuid::Uuid;

use crate::db::interval;

pub const MAX_ACCOUNT_FAILURES: i32 = 5;
pub const LOCKOUT: Duration = Duration::minutes(15);
pub const MAX_ADDRESS_FAILURES: i64 = 20;
pub const ADDRESS_WINDOW: Duration = Duration::minutes(15);

/// True when this address has failed too often lately.
pub async fn address_blocked(pool: &PgPool, ip: &str) -> Result<bool, sqlx::Error> {
    let failures = sqlx::query_scalar!(
        r#"SELECT count(*) AS "count!" FROM sign_in_failures WHERE ip = $1 AND failed_at > now() - $2::interval"#,
        ip,
        interval(ADDRESS_WINDOW),
    )
    .fetch_one(pool)
    .await?;
    Ok(failures >= MAX_ADDRESS_FAILURES)
}

/// Records a failure against the address and, when given, the account.
pub async fn record_failure(pool: &PgPool, ip: &str, user: Option<Uuid>) -> Result<(), sqlx::Error> {
    sqlx::query!("INSERT INTO sign_in_failures (ip) VALUES ($1)", ip)
        .execute(pool)
        .await?;
    sqlx::query!("DELETE FROM sign_in_failures WHERE failed_at < now() - interval '1 day'")
        .execute(pool)
        .await?;
    if let Some(user) = user {
        record_account_failure(pool, user).await?;
    }
    Ok(())
}

/// A failure against the account alone (a wrong second-factor code from a
/// signed-in session counts as a failed sign-in does); whether the account
/// is locked now.
pub async fn record_account_failure(pool: &PgPool, user: Uuid) -> Result<bool, sqlx::Error> {
    let locked = sqlx::query_scalar!(
        r#"UPDATE users SET failed_logins = failed_logins + 1,
             locked_until = CASE WHEN failed_logins + 1 >= $2 THEN now() + $3::interval ELSE locked_until END
           WHERE id = $1
           RETURNING COALESCE(locked_until > now(), false) AS "locked!""#,
        user,
        MAX_ACCOUNT_FAILURES,
        interval(LOCKOUT),
    )
    .fetch_optional(pool)
    .await?;
    Ok(locked.unwrap_or(false))
}

/// Whether the account is locked out now.
pub async fn is_locked(pool: &PgPool, user: Uuid) -> Result<bool, sqlx::Error> {
    let locked = sqlx::query_scalar!(
        r#"SELECT COALESCE(locked_until > now(), false) AS "locked!" FROM users WHERE id = $1"#,
        user
    )
    .fetch_optional(pool)
    .await?;
    Ok(locked.unwrap_or(false))
}

pub async fn record_success(db: impl PgExecutor<'_>, user: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE users SET failed_logins = 0, locked_until = NULL WHERE id = $1",
        user
    )
    .execute(db)
    .await?;
    Ok(())
}
