//! Tenants' and connections' SQL. Secrets are stored sealed (see
//! `crypto.rs`) and never read back except to sign calls.

use chrono::{DateTime, Utc};
use sqlx::{PgExecutor, PgPool, Postgres, Transaction};
use uuid::Uuid;

use crate::access::store as access;

/// Creates a tenant with its built-in roles; returns (tenant id, Owner role id).
pub async fn create_tenant(
    tx: &mut Transaction<'_, Postgres>,
    name: &str,
) -> Result<(Uuid, Uuid), sqlx::Error> {
    let id = Uuid::new_v4();
    sqlx::query!("INSERT INTO tenants (id, name) VALUES ($1, $2)", id, name)
        .execute(&mut **tx)
        .await?;
    let owner = access::seed_builtin_roles(tx, id).await?;
    Ok((id, owner))
}

/// A connection as the portal uses it; secrets still sealed.
#[derive(Debug, Clone)]
pub struct Connection {
    pub id: Uuid,
    pub is_primary: bool,
    pub tenant_id: Uuid,
    pub name: String,
    pub environment: String,
    pub base_url: String,
    pub client_id: String,
    pub client_secret_enc: Vec<u8>,
    pub webhook_secret_enc: Option<Vec<u8>>,
    pub is_builtin: bool,
    pub updated_at: DateTime<Utc>,
}

pub struct NewConnection<'a> {
    pub tenant_id: Uuid,
    pub name: &'a str,
    pub environment: &'a str,
    pub base_url: &'a str,
    pub client_id: &'a str,
    pub client_secret_enc: Vec<u8>,
    pub webhook_secret_enc: Option<Vec<u8>>,
    pub is_builtin: bool,
}

pub async fn add_connection<'e>(db: impl PgExecutor<'e>, c: NewConnection<'_>) -> Result<Uuid, sqlx::Error> {
    let id = Uuid::new_v4();
    sqlx::query!(
        "INSERT INTO connections (id, tenant_id, name, environment, base_url, client_id, client_secret_enc, \
         webhook_secret_enc, is_builtin) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        id,
        c.tenant_id,
        c.name,
        c.environment,
        c.base_url,
        c.client_id,
        c.client_secret_enc,
        c.webhook_secret_enc,
        c.is_builtin,
    )
    .execute(db)
    .await?;
    Ok(id)
}

/// The connection to the in-process sandbox, if default mode made one.
pub async fn builtin_connection(pool: &PgPool) -> Result<Option<Connection>, sqlx::Error> {
    sqlx::query_as!(
        Connection,
        "SELECT id, is_primary, tenant_id, name, environment, base_url, client_id, client_secret_enc, \
           webhook_secret_enc, is_builtin, updated_at \
         FROM connections WHERE is_builtin ORDER BY created_at LIMIT 1",
    )
    .fetch_optional(pool)
    .await
}

/// The in-process sandbox listens on a new port at every start.
pub async fn set_base_url(pool: &PgPool, connection_id: Uuid, base_url: &str) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE connections SET base_url = $2, updated_at = now() WHERE id = $1",
        connection_id,
        base_url,
    )
    .execute(pool)
    .await?;
    Ok(())
}

pub async fn connections(pool: &PgPool, tenant_id: Uuid) -> Result<Vec<Connection>, sqlx::Error> {
    sqlx::query_as!(
        Connection,
        "SELECT id, is_primary, tenant_id, name, environment, base_url, client_id, client_secret_enc, \
           webhook_secret_enc, is_builtin, updated_at \
         FROM connections WHERE tenant_id = $1 ORDER BY is_primary DESC, created_at",
        tenant_id,
    )
    .fetch_all(pool)
    .await
}

pub async fn connection(pool: &PgPool, tenant_id: Uuid, id: Uuid) -> Result<Option<Connection>, sqlx::Error> {
    sqlx::query_as!(
        Connection,
        "SELECT id, is_primary, tenant_id, name, environment, base_url, client_id, client_secret_enc, \
           webhook_secret_enc, is_builtin, updated_at \
         FROM connections WHERE tenant_id = $1 AND id = $2",
        tenant_id,
        id,
    )
    .fetch_optional(pool)
    .await
}

pub async fn make_primary(
    tx: &mut Transaction<'_, Postgres>,
    tenant_id: Uuid,
    id: Uuid,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE connections SET is_primary = (id = $2), updated_at = now() WHERE tenant_id = $1",
        tenant_id,
        id,
    )
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Deletes a connection the tenant added (never the built-in one).
/// Deletes a connection (never the built-in sandbox's); false when there
/// was none to delete.
pub async fn delete_connection_in(
    tx: &mut Transaction<'_, Postgres>,
    tenant_id: Uuid,
    id: Uuid,
) -> Result<bool, sqlx::Error> {
    Ok(sqlx::query!(
        "DELETE FROM connections WHERE tenant_id = $1 AND id = $2 AND NOT is_builtin",
        tenant_id,
        id,
    )
    .execute(&mut **tx)
    .await?
    .rows_affected()
        == 1)
}

pub async fn connection_name_taken(pool: &PgPool, tenant_id: Uuid, name: &str) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT EXISTS (SELECT 1 FROM connections WHERE tenant_id = $1 AND name = $2) AS "exists!""#,
        tenant_id,
        name,
    )
    .fetch_one(pool)
    .await
}

#[derive(Debug, Clone)]
pub struct TenantRow {
    pub id: Uuid,
    pub name: String,
    pub members: i64,
    pub created_at: DateTime<Utc>,
    /// The platform's admins may confirm its grants (`access::grants`).
    pub platform_confirms_grants: bool,
}

pub async fn tenants(pool: &PgPool) -> Result<Vec<TenantRow>, sqlx::Error> {
    sqlx::query_as!(
        TenantRow,
        r#"SELECT t.id, t.name, (SELECT count(*) FROM memberships m WHERE m.tenant_id = t.id) AS "members!",
                  t.created_at, t.platform_confirms_grants
           FROM tenants t ORDER BY t.name"#,
    )
    .fetch_all(pool)
    .await
}

pub async fn allowed_base_urls(pool: &PgPool) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar!("SELECT base_url FROM allowed_base_urls ORDER BY base_url")
        .fetch_all(pool)
        .await
}

pub async fn allow_base_url(db: impl PgExecutor<'_>, base_url: &str) -> Result<bool, sqlx::Error> {
    Ok(sqlx::query!(
        "INSERT INTO allowed_base_urls (base_url) VALUES ($1) ON CONFLICT DO NOTHING",
        base_url,
    )
    .execute(db)
    .await?
    .rows_affected()
        == 1)
}

pub async fn disallow_base_url(db: impl PgExecutor<'_>, base_url: &str) -> Result<bool, sqlx::Error> {
    Ok(
        sqlx::query!("DELETE FROM allowed_base_urls WHERE base_url = $1", base_url)
            .execute(db)
            .await?
            .rows_affected()
            == 1,
    )
}

/// A connection by id, whatever its tenant (the webhook receiver knows
/// only the id in its URL).
pub async fn connection_by_id(pool: &PgPool, id: Uuid) -> Result<Option<Connection>, sqlx::Error> {
    sqlx::query_as!(
        Connection,
        "SELECT id, is_primary, tenant_id, name, environment, base_url, client_id, client_secret_enc, \
           webhook_secret_enc, is_builtin, updated_at \
         FROM connections WHERE id = $1",
        id,
    )
    .fetch_optional(pool)
    .await
}
