//! Server-side sessions. The cookie holds a random token; Postgres holds
//! its SHA-256, the user, the CSRF token and the active tenant, so any
//! replica can serve any request. Sessions end after 30 minutes idle or 12
//! hours in all, at sign-out, at "sign out everywhere", and when the user
//! is disabled.

use std::future::{ready, Ready};

use actix_web::cookie::{time, Cookie, SameSite};
use actix_web::dev::Payload;
use actix_web::{FromRequest, HttpMessage, HttpRequest};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use chrono::Duration;
use rand::RngCore;
use sha2::{Digest, Sha256};
use sqlx::types::Json;
use sqlx::{PgExecutor, PgPool};
use uuid::Uuid;

use super::session_cache::{Loaded, SessionCache};
use crate::access::store::Membership;
use crate::audit::Actor;
use crate::db::interval;
use crate::web::error::PortalError;

pub const COOKIE: &str = "paydesk_session";
pub const IDLE_TIMEOUT: Duration = Duration::minutes(30);
pub const ABSOLUTE_TIMEOUT: Duration = Duration::hours(12);
/// `last_seen_at` is refreshed at most this often, to spare writes.
const TOUCH_EVERY_SECS: i64 = 60;

/// A signed-in staff member, loaded once per request.
#[derive(Debug, Clone)]
pub struct SignedIn {
    pub token_hash: Vec<u8>,
    pub user_id: Uuid,
    pub email: String,
    pub display_name: String,
    pub is_platform_admin: bool,
    pub must_change_password: bool,
    pub csrf_token: String,
    pub active_tenant_id: Option<Uuid>,
    pub ip: String,
    pub user_agent: String,
    /// The account has TOTP two-factor turned on.
    pub two_factor: bool,
    /// When this session last proved the second factor (at sign-in or a
    /// step-up), for actions that need a fresh proof.
    pub verified_at: Option<chrono::DateTime<chrono::Utc>>,
    /// The active tenant requires two-factor of every member.
    pub tenant_requires_two_factor: bool,
    /// What the user's last change said (post, then redirect), shown once
    /// on the page they land on.
    pub notices: Vec<String>,
}

impl SignedIn {
    pub fn actor(&self) -> Actor {
        Actor {
            user_id: Some(self.user_id),
            email: self.email.clone(),
            ip: self.ip.clone(),
            user_agent: self.user_agent.clone(),
        }
    }
}

impl FromRequest for SignedIn {
    type Error = PortalError;
    type Future = Ready<Result<Self, PortalError>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        ready(
            req.extensions()
                .get::<SignedIn>()
                .cloned()
                .ok_or(PortalError::NotSignedIn),
        )
    }
}

pub fn random_token() -> String {
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

pub fn token_hash(token: &str) -> Vec<u8> {
    Sha256::digest(token.as_bytes()).to_vec()
}

/// Starts a session (a new id at every sign-in); returns the cookie token.
/// `verified` says the second factor was just proved.
pub async fn start(
    db: impl PgExecutor<'_>,
    user_id: Uuid,
    active_tenant_id: Option<Uuid>,
    (ip, user_agent): (&str, &str),
    verified: bool,
) -> Result<String, sqlx::Error> {
    let token = random_token();
    sqlx::query!(
        "INSERT INTO sessions (token_hash, user_id, csrf_token, active_tenant_id, ip, user_agent, verified_at) \
         VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $7 THEN now() END)",
        token_hash(&token),
        user_id,
        random_token(),
        active_tenant_id,
        ip,
        user_agent,
        verified,
    )
    .execute(db)
    .await?;
    Ok(token)
}

/// The live session for a cookie token, if any, with the member's view of
/// their active tenant (one round trip for both, since nearly every page
/// needs them, and none while `cache` holds them); ends an expired session.
pub async fn load(
    pool: &PgPool,
    cache: &SessionCache,
    token: &str,
    ip: &str,
    user_agent: &str,
) -> Result<Option<(SignedIn, Option<Membership>)>, sqlx::Error> {
    let hash = token_hash(token);
    let for_request = |mut kept: Loaded| {
        kept.signed_in.ip = ip.to_owned();
        kept.signed_in.user_agent = user_agent.to_owned();
        (kept.signed_in, kept.membership)
    };
    if let Some(kept) = cache.get(&hash) {
        return Ok(Some(for_request(kept)));
    }
    let generation = cache.generation();
    // The membership columns are all null when the user belongs to no tenant.
    let row = sqlx::query!(
        r#"SELECT s.user_id, u.email, u.display_name, u.is_platform_admin, u.must_change_password, s.csrf_token,
                  s.active_tenant_id, s.last_seen_at < now() - $2::interval AS "stale!",
                  extract(epoch FROM s.last_seen_at + $2::interval - now())::float8 AS "touch_in!",
                  extract(epoch FROM s.created_at + $4::interval - now())::float8 AS "ends_in!",
                  u.totp_enabled_at IS NOT NULL AS "two_factor!", s.verified_at,
                  coalesce(t.require_two_factor, false) AS "tenant_requires_two_factor!",
                  m.tenant_id AS "tenant_id?", m.tenant_name AS "tenant_name?", m.role_name AS "role_name?",
                  m.permissions AS "permissions?", m.environment AS "environment?",
                  m.connection_id AS "connection_id?", m.connection_updated_at AS "connection_updated_at?",
                  m.tenants AS "tenants?: Json<Vec<(Uuid, String)>>"
           FROM sessions s JOIN users u ON u.id = s.user_id
           LEFT JOIN LATERAL membership_of(s.user_id, s.active_tenant_id) m ON true
           LEFT JOIN tenants t ON t.id = m.tenant_id
           WHERE s.token_hash = $1 AND u.disabled_at IS NULL
             AND s.last_seen_at > now() - $3::interval AND s.created_at > now() - $4::interval"#,
        hash,
        interval(Duration::seconds(TOUCH_EVERY_SECS)),
        interval(IDLE_TIMEOUT),
        interval(ABSOLUTE_TIMEOUT),
    )
    .fetch_optional(pool)
    .await?;
    let Some(row) = row else {
        end(pool, &hash).await?;
        return Ok(None);
    };
    let touch_in = if row.stale {
        sqlx::query!(
            "UPDATE sessions SET last_seen_at = now() WHERE token_hash = $1",
            hash
        )
        .execute(pool)
        .await?;
        TOUCH_EVERY_SECS as f64
    } else {
        row.touch_in
    };
    let membership = match (row.tenant_id, row.tenant_name, row.role_name) {
        (Some(tenant_id), Some(tenant_name), Some(role_name)) => Some(Membership {
            tenant_id,
            tenant_name,
            role_name,
            permissions: row.permissions.unwrap_or_default(),
            environment: row.environment,
            connection_id: row.connection_id,
            connection_updated_at: row.connection_updated_at,
            tenants: row.tenants.unwrap_or_default(),
        }),
        _ => None,
    };
    let signed_in = SignedIn {
        token_hash: hash.clone(),
        user_id: row.user_id,
        email: row.email,
        display_name: row.display_name,
        is_platform_admin: row.is_platform_admin,
        must_change_password: row.must_change_password,
        csrf_token: row.csrf_token,
        active_tenant_id: row.active_tenant_id,
        ip: String::new(),
        user_agent: String::new(),
        two_factor: row.two_factor,
        verified_at: row.verified_at,
        tenant_requires_two_factor: row.tenant_requires_two_factor,
        notices: Vec::new(),
    };
    let loaded = Loaded {
        signed_in,
        membership,
    };
    let fresh_for = std::time::Duration::try_from_secs_f64(touch_in.min(row.ends_in)).unwrap_or_default();
    cache.keep(generation, hash, loaded.clone(), fresh_for);
    Ok(Some(for_request(loaded)))
}

pub async fn end(db: impl PgExecutor<'_>, token_hash: &[u8]) -> Result<(), sqlx::Error> {
    sqlx::query!("DELETE FROM sessions WHERE token_hash = $1", token_hash)
        .execute(db)
        .await?;
    Ok(())
}

/// Ends every session of a user; returns how many ended.
pub async fn end_all(db: impl PgExecutor<'_>, user_id: Uuid) -> Result<u64, sqlx::Error> {
    Ok(sqlx::query!("DELETE FROM sessions WHERE user_id = $1", user_id)
        .execute(db)
        .await?
        .rows_affected())
}

/// Ends every session of a user but `keep`.
pub async fn end_others(db: impl PgExecutor<'_>, user_id: Uuid, keep: &[u8]) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "DELETE FROM sessions WHERE user_id = $1 AND token_hash <> $2",
        user_id,
        keep
    )
    .execute(db)
    .await?;
    Ok(())
}

pub async fn set_active_tenant(
    db: impl PgExecutor<'_>,
    token_hash: &[u8],
    tenant_id: Uuid,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE sessions SET active_tenant_id = $2 WHERE token_hash = $1",
        token_hash,
        tenant_id
    )
    .execute(db)
    .await?;
    Ok(())
}

/// The session cookie: HttpOnly, SameSite=Lax, Secure over TLS, no expiry
/// (the server enforces the timeouts).
pub fn cookie(token: String, secure: bool) -> Cookie<'static> {
    Cookie::build(COOKIE, token)
        .path("/")
        .http_only(true)
        .secure(secure)
        .same_site(SameSite::Lax)
        .finish()
}

pub fn removal_cookie(secure: bool) -> Cookie<'static> {
    let mut c = cookie(String::new(), secure);
    c.set_max_age(time::Duration::ZERO);
    c
}

/// One of a user's live sessions, for their security page.
pub struct SessionRow {
    /// The hex of the token's hash: names the session without being it.
    pub id: String,
    pub ip: String,
    pub user_agent: String,
    pub created_at: chrono::DateTime<chrono::Utc>,
    pub last_seen_at: chrono::DateTime<chrono::Utc>,
    pub current: bool,
}

pub async fn of_user(pool: &PgPool, user: &SignedIn) -> Result<Vec<SessionRow>, sqlx::Error> {
    sqlx::query_as!(
        SessionRow,
        r#"SELECT encode(token_hash, 'hex') AS "id!", ip, user_agent, created_at, last_seen_at,
                  token_hash = $2 AS "current!"
           FROM sessions WHERE user_id = $1 AND last_seen_at > now() - $3::interval
           ORDER BY last_seen_at DESC"#,
        user.user_id,
        user.token_hash,
        interval(IDLE_TIMEOUT),
    )
    .fetch_all(pool)
    .await
}

/// Ends one of the user's own sessions; false when there is no such one.
pub async fn end_own(db: impl PgExecutor<'_>, user_id: Uuid, id: &str) -> Result<bool, sqlx::Error> {
    let Ok(hash) = hex::decode(id) else {
        return Ok(false);
    };
    let ended = sqlx::query!(
        "DELETE FROM sessions WHERE user_id = $1 AND token_hash = $2",
        user_id,
        hash
    )
    .execute(db)
    .await?;
    Ok(ended.rows_affected() == 1)
}
