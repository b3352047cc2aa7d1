//! Roles' and memberships' SQL.

use sqlx::{PgPool, Postgres, Transaction};
use uuid::Uuid;

use super::permissions;

/// Creates the built-in roles of a new tenant; returns the Owner role's id.
pub async fn seed_builtin_roles(
    tx: &mut Transaction<'_, Postgres>,
    tenant_id: Uuid,
) -> Result<Uuid, sqlx::Error> {
    let mut owner = Uuid::nil();
    for (name, perms) in permissions::builtin_roles() {
        let id = Uuid::new_v4();
        sqlx::query("INSERT INTO roles (id, tenant_id, name, is_builtin) VALUES ($1, $2, $3, true)")
            .bind(id)
            .bind(tenant_id)
            .bind(name)
            .execute(&mut **tx)
            .await?;
        sqlx::query("INSERT INTO role_permissions (role_id, permission) SELECT $1, unnest($2::text[])")
            .bind(id)
            .bind(&perms)
            .execute(&mut **tx)
            .await?;
        if name == permissions::OWNER {
            owner = id;
        }
    }
    Ok(owner)
}

pub async fn add_member(
    tx: &mut Transaction<'_, Postgres>,
    tenant_id: Uuid,
    user_id: Uuid,
    role_id: Uuid,
) -> Result<(), sqlx::Error> {
    sqlx::query("INSERT INTO memberships (tenant_id, user_id, role_id) VALUES ($1, $2, $3)")
        .bind(tenant_id)
        .bind(user_id)
        .bind(role_id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// A member's view of one tenant.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Membership {
    pub tenant_id: Uuid,
    pub tenant_name: String,
    pub role_name: String,
    pub permissions: Vec<String>,
    pub environment: Option<String>,
}

/// The membership in `preferred` if the user has one, else their first
/// tenant by name.
pub async fn membership(
    pool: &PgPool,
    user_id: Uuid,
    preferred: Option<Uuid>,
) -> Result<Option<Membership>, sqlx::Error> {
    sqlx::query_as(
        "SELECT t.id AS tenant_id, t.name AS tenant_name, r.name AS role_name, \
                COALESCE(array_agg(rp.permission ORDER BY rp.permission) FILTER (WHERE rp.permission IS NOT NULL), '{}') AS permissions, \
                (SELECT c.environment FROM connections c WHERE c.tenant_id = t.id ORDER BY c.created_at LIMIT 1) AS environment \
         FROM memberships m \
         JOIN tenants t ON t.id = m.tenant_id \
         JOIN roles r ON r.id = m.role_id \
         LEFT JOIN role_permissions rp ON rp.role_id = r.id \
         WHERE m.user_id = $1 \
         GROUP BY t.id, t.name, r.name \
         ORDER BY (t.id = $2) DESC NULLS LAST, t.name \
         LIMIT 1",
    )
    .bind(user_id)
    .bind(preferred)
    .fetch_optional(pool)
    .await
}

/// Every tenant the user belongs to, for the switcher.
pub async fn tenants_of(pool: &PgPool, user_id: Uuid) -> Result<Vec<(Uuid, String)>, sqlx::Error> {
    sqlx::query_as(
        "SELECT t.id, t.name FROM memberships m JOIN tenants t ON t.id = m.tenant_id WHERE m.user_id = $1 ORDER BY t.name",
    )
    .bind(user_id)
    .fetch_all(pool)
    .await
}
