//! Roles' and memberships' SQL.

use chrono::{DateTime, Utc};
use sqlx::{PgExecutor, PgPool, Postgres, Transaction};
use uuid::Uuid;

use super::permissions;
use crate::web::listing::Range;

/// Creates the built-in roles of a new tenant; returns the Owner role's id.
pub async fn seed_builtin_roles(
    tx: &mut Transaction<'_, Postgres>,
    tenant_id: Uuid,
) -> Result<Uuid, sqlx::Error> {
    let mut owner = Uuid::nil();
    for (name, perms) in permissions::builtin_roles() {
        let id = Uuid::new_v4();
        sqlx::query!(
            "INSERT INTO roles (id, tenant_id, name, is_builtin) VALUES ($1, $2, $3, true)",
            id,
            tenant_id,
            name,
        )
        .execute(&mut **tx)
        .await?;
        let names: Vec<String> = perms.iter().map(|p| p.name().to_owned()).collect();
        sqlx::query!(
            "INSERT INTO role_permissions (role_id, permission) SELECT $1, unnest($2::text[])",
            id,
            &names,
        )
        .execute(&mut **tx)
        .await?;
        if name == permissions::OWNER {
            owner = id;
        }
    }
    Ok(owner)
}

/// Who made a grant: the member (None: the platform), and the second
/// admin who confirmed it, if one did (`access::ties`).
#[derive(Debug, Clone, Copy, Default)]
pub struct GrantedBy {
    pub by: Option<Uuid>,
    pub confirmed_by: Option<Uuid>,
}

/// Adds a membership, recording who granted it for the approval gate's
/// independence rules.
pub async fn add_member(
    tx: &mut Transaction<'_, Postgres>,
    tenant_id: Uuid,
    user_id: Uuid,
    role_id: Uuid,
    by: GrantedBy,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO memberships (tenant_id, user_id, role_id) VALUES ($1, $2, $3)",
        tenant_id,
        user_id,
        role_id,
    )
    .execute(&mut **tx)
    .await?;
    record_grant(tx, tenant_id, Some(user_id), role_id, &[], by).await
}

async fn record_grant(
    tx: &mut Transaction<'_, Postgres>,
    tenant_id: Uuid,
    user_id: Option<Uuid>,
    role_id: Uuid,
    added: &[String],
    by: GrantedBy,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO access_grants (tenant_id, user_id, role_id, added, granted_by, confirmed_by, confirmed_at) \
         VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $6::uuid IS NULL THEN NULL ELSE now() END)",
        tenant_id,
        user_id,
        role_id,
        added,
        by.by,
        by.confirmed_by,
    )
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// One membership granted or changed (`user_id` set), or permissions added
/// to a role (`user_id` None).
#[derive(Debug, Clone)]
pub struct Grant {
    /// None for a membership older than the grants table.
    pub id: Option<i64>,
    pub user_id: Option<Uuid>,
    pub role_id: Uuid,
    pub added: Vec<String>,
    pub granted_by: Option<Uuid>,
    pub granted_at: chrono::DateTime<chrono::Utc>,
    pub confirmed_by: Option<Uuid>,
}

impl Grant {
    /// A member made it and no second admin confirmed it.
    pub fn made_alone(&self) -> bool {
        self.granted_by.is_some() && self.confirmed_by.is_none()
    }
}

/// Every grant of a tenant, oldest first. Memberships older than the
/// grants table count as granted by the platform when they were created.
pub async fn grants(pool: &PgPool, tenant_id: Uuid) -> Result<Vec<Grant>, sqlx::Error> {
    sqlx::query_as!(
        Grant,
        r#"SELECT id, user_id, role_id AS "role_id!", added AS "added!", granted_by, granted_at AS "granted_at!",
                  confirmed_by
           FROM (SELECT id, user_id, role_id, added, granted_by, granted_at, confirmed_by
                 FROM access_grants WHERE tenant_id = $1
                 UNION ALL
                 SELECT NULL::bigint, m.user_id, m.role_id, '{}'::text[], NULL::uuid, m.created_at, NULL::uuid
                 FROM memberships m
                 WHERE m.tenant_id = $1 AND NOT EXISTS
                   (SELECT 1 FROM access_grants g WHERE g.tenant_id = $1 AND g.user_id = m.user_id)) grants
           ORDER BY granted_at"#,
        tenant_id,
    )
    .fetch_all(pool)
    .await
}

/// A member's view of one tenant: role, permissions, every tenant they
/// belong to (for the switcher) and the connection pages use, all read in
/// one call of the `membership_of` SQL function, since every page needs
/// them.
#[derive(Debug, Clone)]
pub struct Membership {
    pub tenant_id: Uuid,
    pub tenant_name: String,
    pub role_name: String,
    pub permissions: Vec<String>,
    pub environment: Option<String>,
    pub connection_id: Option<Uuid>,
    pub connection_updated_at: Option<chrono::DateTime<chrono::Utc>>,
    /// `[[id, name], ...]` of every tenant of the user, by name.
    pub tenants: sqlx::types::Json<Vec<(Uuid, String)>>,
}

/// The membership in `preferred` if the user has one, else their first
/// tenant by name.
pub async fn membership(
    pool: &PgPool,
    user_id: Uuid,
    preferred: Option<Uuid>,
) -> Result<Option<Membership>, sqlx::Error> {
    sqlx::query_as!(
        Membership,
        r#"SELECT tenant_id AS "tenant_id!", tenant_name AS "tenant_name!", role_name AS "role_name!",
                  permissions AS "permissions!", environment AS "environment?", connection_id AS "connection_id?",
                  connection_updated_at AS "connection_updated_at?",
                  tenants AS "tenants!: sqlx::types::Json<Vec<(Uuid, String)>>"
           FROM membership_of($1, $2)"#,
        user_id,
        preferred,
    )
    .fetch_optional(pool)
        .await
}

/// Every tenant the user belongs to, for the switcher.
pub async fn tenants_of(pool: &PgPool, user_id: Uuid) -> Result<Vec<(Uuid, String)>, sqlx::Error> {
    let rows = sqlx::query!(
        "SELECT t.id, t.name FROM memberships m JOIN tenants t ON t.id = m.tenant_id WHERE m.user_id = $1 ORDER BY t.name",
        user_id,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(|r| (r.id, r.name)).collect())
}

#[derive(Debug, Clone)]
pub struct RoleRow {
    pub id: Uuid,
    pub name: String,
    pub is_builtin: bool,
    pub permissions: Vec<String>,
    pub members: i64,
}

/// Every role of a tenant with its permissions and member count.
pub async fn roles(pool: &PgPool, tenant_id: Uuid) -> Result<Vec<RoleRow>, sqlx::Error> {
    sqlx::query_as!(
        RoleRow,
        r#"SELECT r.id, r.name, r.is_builtin,
                  COALESCE((SELECT array_agg(permission ORDER BY permission) FROM role_permissions
                            WHERE role_id = r.id), '{}') AS "permissions!",
                  (SELECT count(*) FROM memberships m WHERE m.role_id = r.id) AS "members!"
           FROM roles r WHERE r.tenant_id = $1 ORDER BY r.is_builtin DESC, r.created_at, r.name"#,
        tenant_id,
    )
    .fetch_all(pool)
    .await
}

pub async fn role(pool: &PgPool, tenant_id: Uuid, role_id: Uuid) -> Result<Option<RoleRow>, sqlx::Error> {
    Ok(roles(pool, tenant_id)
        .await?
        .into_iter()
        .find(|r| r.id == role_id))
}

pub async fn create_role(
    db: impl PgExecutor<'_>,
    tenant_id: Uuid,
    name: &str,
) -> Result<Option<Uuid>, sqlx::Error> {
    let id = Uuid::new_v4();
    let inserted = sqlx::query!(
        "INSERT INTO roles (id, tenant_id, name) VALUES ($1, $2, $3) ON CONFLICT (tenant_id, name) DO NOTHING",
        id,
        tenant_id,
        name,
    )
    .execute(db)
    .await?
    .rows_affected();
    Ok((inserted == 1).then_some(id))
}

/// Deletes a custom role nobody holds; false when it can't be deleted.
pub async fn delete_role(
    db: impl PgExecutor<'_>,
    tenant_id: Uuid,
    role_id: Uuid,
) -> Result<bool, sqlx::Error> {
    Ok(sqlx::query!(
        "DELETE FROM roles r WHERE r.id = $1 AND r.tenant_id = $2 AND NOT r.is_builtin \
         AND NOT EXISTS (SELECT 1 FROM memberships m WHERE m.role_id = r.id)",
        role_id,
        tenant_id,
    )
    .execute(db)
    .await?
    .rows_affected()
        == 1)
}

/// Replaces a role's permissions; `added` (those it did not have) is
/// recorded as a grant by `by`.
pub async fn set_permissions(
    tx: &mut Transaction<'_, Postgres>,
    tenant_id: Uuid,
    role_id: Uuid,
    permissions: &[String],
    added: &[String],
    by: GrantedBy,
) -> Result<(), sqlx::Error> {
    if !added.is_empty() {
        record_grant(tx, tenant_id, None, role_id, added, by).await?;
    }
    sqlx::query!("DELETE FROM role_permissions WHERE role_id = $1", role_id)
        .execute(&mut **tx)
        .await?;
    sqlx::query!(
        "INSERT INTO role_permissions (role_id, permission) SELECT $1, unnest($2::text[])",
        role_id,
        permissions,
    )
    .execute(&mut **tx)
    .await?;
    Ok(())
}

#[derive(Debug, Clone)]
pub struct MemberRow {
    pub user_id: Uuid,
    pub email: String,
    pub display_name: String,
    pub role_id: Uuid,
    pub role_name: String,
    pub disabled: bool,
    /// Locked out after repeated failed sign-ins.
    pub locked: bool,
    pub two_factor: bool,
    /// When they became a member of this tenant.
    pub joined_at: DateTime<Utc>,
}

pub async fn members(pool: &PgPool, tenant_id: Uuid) -> Result<Vec<MemberRow>, sqlx::Error> {
    members_joined(pool, tenant_id, Range::default()).await
}

/// The members who joined within the days of `joined`, by email.
pub async fn members_joined(
    pool: &PgPool,
    tenant_id: Uuid,
    joined: Range,
) -> Result<Vec<MemberRow>, sqlx::Error> {
    let (from, until) = joined.bounds();
    sqlx::query_as!(
        MemberRow,
        r#"SELECT u.id AS user_id, u.email, u.display_name, r.id AS role_id, r.name AS role_name,
                  u.disabled_at IS NOT NULL AS "disabled!", coalesce(u.locked_until > now(), false) AS "locked!",
                  u.totp_enabled_at IS NOT NULL AS "two_factor!", m.created_at AS joined_at
           FROM memberships m JOIN users u ON u.id = m.user_id JOIN roles r ON r.id = m.role_id
           WHERE m.tenant_id = $1 AND ($2::timestamptz IS NULL OR m.created_at >= $2)
             AND ($3::timestamptz IS NULL OR m.created_at < $3)
           ORDER BY u.email"#,
        tenant_id,
        from,
        until,
    )
    .fetch_all(pool)
    .await
}

pub async fn member(pool: &PgPool, tenant_id: Uuid, user_id: Uuid) -> Result<Option<MemberRow>, sqlx::Error> {
    Ok(members(pool, tenant_id)
        .await?
        .into_iter()
        .find(|m| m.user_id == user_id))
}

/// Owners of a tenant other than `except`.
pub async fn other_owners(
    tx: &mut Transaction<'_, Postgres>,
    tenant_id: Uuid,
    except: Uuid,
) -> Result<i64, sqlx::Error> {
    // Locks the tenant's owner memberships, so two admins can't each remove
    // "the other" last owner at once.
    let owners: Vec<Uuid> = sqlx::query_scalar!(
        "SELECT m.user_id FROM memberships m JOIN roles r ON r.id = m.role_id \
         WHERE m.tenant_id = $1 AND r.name = $2 AND r.is_builtin FOR UPDATE OF m",
        tenant_id,
        permissions::OWNER,
    )
    .fetch_all(&mut **tx)
    .await?;
    Ok(owners.iter().filter(|u| **u != except).count() as i64)
}

pub async fn set_member_role(
    tx: &mut Transaction<'_, Postgres>,
    tenant_id: Uuid,
    user_id: Uuid,
    role_id: Uuid,
    by: GrantedBy,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE memberships SET role_id = $3 WHERE tenant_id = $1 AND user_id = $2",
        tenant_id,
        user_id,
        role_id,
    )
    .execute(&mut **tx)
    .await?;
    record_grant(tx, tenant_id, Some(user_id), role_id, &[], by).await
}

pub async fn remove_member(
    tx: &mut Transaction<'_, Postgres>,
    tenant_id: Uuid,
    user_id: Uuid,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "DELETE FROM memberships WHERE tenant_id = $1 AND user_id = $2",
        tenant_id,
        user_id,
    )
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Whether every member of the tenant must use two-factor.
pub async fn set_two_factor_required(
    tx: &mut Transaction<'_, Postgres>,
    tenant_id: Uuid,
    required: bool,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE tenants SET require_two_factor = $2 WHERE id = $1",
        tenant_id,
        required
    )
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// A grant no second admin confirmed, as the Members page lists it.
#[derive(Debug, Clone)]
pub struct UnconfirmedGrant {
    pub id: i64,
    pub granted_by: Uuid,
    pub granted_by_email: String,
    /// The member it was given to; None for permissions added to a role.
    pub user_id: Option<Uuid>,
    /// The member's email, or "every <role>" for a role's permissions.
    pub grantee: String,
    pub what: String,
    pub granted_at: DateTime<Utc>,
}

/// The grants one admin made alone that still matter: to current members,
/// or permissions added to a role that still exists. Oldest first.
pub async fn unconfirmed_grants(
    pool: &PgPool,
    tenant_id: Uuid,
) -> Result<Vec<UnconfirmedGrant>, sqlx::Error> {
    sqlx::query_as!(
        UnconfirmedGrant,
        r#"SELECT g.id, g.granted_by AS "granted_by!", gb.email AS granted_by_email, g.user_id,
                  COALESCE(u.email, 'every ' || r.name) AS "grantee!",
                  CASE WHEN g.user_id IS NULL THEN 'adds ' || array_to_string(g.added, ', ') || ' to the role'
                       ELSE 'the ' || r.name || ' role' END AS "what!",
                  g.granted_at
           FROM access_grants g
           JOIN users gb ON gb.id = g.granted_by
           JOIN roles r ON r.id = g.role_id
           LEFT JOIN users u ON u.id = g.user_id
           WHERE g.tenant_id = $1 AND g.confirmed_by IS NULL
             AND (g.user_id IS NULL OR EXISTS (SELECT 1 FROM memberships m
                                               WHERE m.tenant_id = $1 AND m.user_id = g.user_id))
           ORDER BY g.granted_at"#,
        tenant_id,
    )
    .fetch_all(pool)
    .await
}

/// Confirms a grant as `by`: never the granter, nor its grantee (for a
/// role's permissions: nor a member holding that role). False when there
/// is no such grant left to confirm by them.
pub async fn confirm_grant(
    tx: &mut Transaction<'_, Postgres>,
    tenant_id: Uuid,
    id: i64,
    by: Uuid,
) -> Result<bool, sqlx::Error> {
    Ok(sqlx::query!(
        "UPDATE access_grants g SET confirmed_by = $3, confirmed_at = now() \
         WHERE g.id = $1 AND g.tenant_id = $2 AND g.confirmed_by IS NULL AND g.granted_by <> $3 \
           AND g.user_id IS DISTINCT FROM $3 \
           AND NOT (g.user_id IS NULL AND EXISTS (SELECT 1 FROM memberships m \
                    WHERE m.tenant_id = $2 AND m.user_id = $3 AND m.role_id = g.role_id))",
        id,
        tenant_id,
        by,
    )
    .execute(&mut **tx)
    .await?
    .rows_affected()
        == 1)
}

/// Whether the platform's admins may confirm the tenant's grants.
pub async fn platform_confirms_grants(pool: &PgPool, tenant_id: Uuid) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar!(
        "SELECT platform_confirms_grants FROM tenants WHERE id = $1",
        tenant_id
    )
    .fetch_one(pool)
    .await
}

pub async fn set_platform_confirms_grants(
    db: impl PgExecutor<'_>,
    tenant_id: Uuid,
    on: bool,
) -> Result<bool, sqlx::Error> {
    Ok(sqlx::query!(
        "UPDATE tenants SET platform_confirms_grants = $2 WHERE id = $1",
        tenant_id,
        on
    )
    .execute(db)
    .await?
    .rows_affected()
        == 1)
}

/// Ends an open invitation in `tx`; false when it was accepted, revoked
/// or replaced meanwhile.
pub async fn revoke_invitation(
    tx: &mut Transaction<'_, Postgres>,
    tenant_id: Uuid,
    id: Uuid,
) -> Result<bool, sqlx::Error> {
    Ok(sqlx::query!(
        "UPDATE invitations SET revoked_at = now() \
         WHERE id = $1 AND tenant_id = $2 AND accepted_at IS NULL AND revoked_at IS NULL",
        id,
        tenant_id,
    )
    .execute(&mut **tx)
    .await?
    .rows_affected()
        == 1)
}
