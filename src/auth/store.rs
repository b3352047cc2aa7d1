//! Users' SQL.

use chrono::{DateTime, Utc};
use sqlx::{PgExecutor, PgPool};
use uuid::Uuid;

/// A one-time password (the first admin's) stops working after this.
pub const ONE_TIME_PASSWORD_LIFETIME: chrono::Duration = chrono::Duration::hours(24);

#[derive(Debug, Clone)]
pub struct User {
    pub id: Uuid,
    pub email: String,
    pub display_name: String,
    pub password_hash: String,
    pub is_platform_admin: bool,
    pub must_change_password: bool,
    pub disabled_at: Option<DateTime<Utc>>,
    pub failed_logins: i32,
    pub locked_until: Option<DateTime<Utc>>,
    pub password_expires_at: Option<DateTime<Utc>>,
    pub two_factor: bool,
}

pub async fn by_email(pool: &PgPool, email: &str) -> Result<Option<User>, sqlx::Error> {
    sqlx::query_as!(
        User,
        r#"SELECT id, email, display_name, password_hash, is_platform_admin, must_change_password, disabled_at,
                  failed_logins, locked_until, password_expires_at, totp_enabled_at IS NOT NULL AS "two_factor!"
           FROM users WHERE email = $1"#,
        email.trim().to_lowercase(),
    )
    .fetch_optional(pool)
        .await
}

pub async fn by_id(pool: &PgPool, id: Uuid) -> Result<Option<User>, sqlx::Error> {
    sqlx::query_as!(
        User,
        r#"SELECT id, email, display_name, password_hash, is_platform_admin, must_change_password, disabled_at,
                  failed_logins, locked_until, password_expires_at, totp_enabled_at IS NOT NULL AS "two_factor!"
           FROM users WHERE id = $1"#,
        id,
    )
    .fetch_optional(pool)
        .await
}

pub async fn create<'e>(
    db: impl PgExecutor<'e>,
    email: &str,
    display_name: &str,
    password_hash: &str,
    is_platform_admin: bool,
    must_change_password: bool,
) -> Result<Uuid, sqlx::Error> {
    let id = Uuid::new_v4();
    sqlx::query!(
        "INSERT INTO users (id, email, display_name, password_hash, is_platform_admin, must_change_password, \
           password_expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $6 THEN now() + $7::interval END)",
        id,
        email.trim().to_lowercase(),
        display_name,
        password_hash,
        is_platform_admin,
        must_change_password,
        crate::db::interval(ONE_TIME_PASSWORD_LIFETIME),
    )
    .execute(db)
    .await?;
    Ok(id)
}

pub async fn count(pool: &PgPool) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar!(r#"SELECT count(*) AS "count!" FROM users"#)
        .fetch_one(pool)
        .await
}

pub async fn set_password(db: impl PgExecutor<'_>, id: Uuid, password_hash: &str) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE users SET password_hash = $2, must_change_password = false, password_expires_at = NULL, \
           updated_at = now() WHERE id = $1",
        id,
        password_hash,
    )
    .execute(db)
    .await?;
    Ok(())
}

/// Disables or re-enables an account in `tx`; disabling ends its sessions
/// there too, so it is signed out everywhere at once.
pub async fn set_disabled(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    id: Uuid,
    disabled: bool,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE users SET disabled_at = CASE WHEN $2 THEN now() ELSE NULL END, updated_at = now() WHERE id = $1",
        id,
        disabled,
    )
    .execute(&mut **tx)
    .await?;
    if disabled {
        sqlx::query!("DELETE FROM sessions WHERE user_id = $1", id)
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}
