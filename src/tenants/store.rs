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
    sqlx::query("INSERT INTO tenants (id, name) VALUES ($1, $2)")
        .bind(id)
        .bind(name)
        .execute(&mut **tx)
        .await?;
    let owner = access::seed_builtin_roles(tx, id).await?;
    Ok((id, owner))
}

/// A connection as the portal uses it; secrets still sealed.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Connection {
    pub id: Uuid,
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

const COLUMNS: &str =
    "id, tenant_id, name, environment, base_url, client_id, client_secret_enc, webhook_secret_enc, \
                       is_builtin, updated_at";

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
    sqlx::query(
        "INSERT INTO connections (id, tenant_id, name, environment, base_url, client_id, client_secret_enc, \
         webhook_secret_enc, is_builtin) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind(id)
    .bind(c.tenant_id)
    .bind(c.name)
    .bind(c.environment)
    .bind(c.base_url)
    .bind(c.client_id)
    .bind(c.client_secret_enc)
    .bind(c.webhook_secret_enc)
    .bind(c.is_builtin)
    .execute(db)
    .await?;
    Ok(id)
}

/// The tenant's primary connection: its oldest.
pub async fn primary_connection(pool: &PgPool, tenant_id: Uuid) -> Result<Option<Connection>, sqlx::Error> {
    sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM connections WHERE tenant_id = $1 ORDER BY created_at LIMIT 1"
    ))
    .bind(tenant_id)
    .fetch_optional(pool)
    .await
}

/// The connection to the in-process sandbox, if default mode made one.
pub async fn builtin_connection(pool: &PgPool) -> Result<Option<Connection>, sqlx::Error> {
    sqlx::query_as(&format!(
        "SELECT {COLUMNS} FROM connections WHERE is_builtin ORDER BY created_at LIMIT 1"
    ))
    .fetch_optional(pool)
    .await
}

/// The in-process sandbox listens on a new port at every start.
pub async fn set_base_url(pool: &PgPool, connection_id: Uuid, base_url: &str) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE connections SET base_url = $2, updated_at = now() WHERE id = $1")
        .bind(connection_id)
        .bind(base_url)
        .execute(pool)
        .await?;
    Ok(())
}
