//! The catalogue's built-in grants, given to existing tenants' built-in
//! roles at start-up, each once (`builtin_grants` records them). New
//! tenants get the whole set when their roles are created
//! (`store::seed_builtin_roles`).

use sqlx::PgPool;

use super::permissions::builtin_roles;

/// The advisory lock that lets one start-up at a time give grants (replicas
/// start together).
const LOCK: i64 = 0x0062_7569_6c74_696e; // "builtin"

/// Gives existing tenants' built-in roles the grants the catalogue declares
/// and no start-up gave yet; how many grants were new.
pub async fn grant_new(pool: &PgPool) -> Result<usize, sqlx::Error> {
    let (permissions, roles): (Vec<String>, Vec<String>) = builtin_roles()
        .into_iter()
        .flat_map(|(role, perms)| {
            perms
                .into_iter()
                .map(move |p| (p.name().to_owned(), role.to_owned()))
        })
        .unzip();
    let mut tx = pool.begin().await?;
    sqlx::query!("SELECT pg_advisory_xact_lock($1)", LOCK)
        .execute(&mut *tx)
        .await?;
    let first = !sqlx::query_scalar!("SELECT EXISTS (SELECT 1 FROM builtin_grants)")
        .fetch_one(&mut *tx)
        .await?
        .unwrap_or(false);
    let new = sqlx::query!(
        "INSERT INTO builtin_grants (permission, role) SELECT * FROM unnest($1::text[], $2::text[]) \
         ON CONFLICT DO NOTHING RETURNING permission, role",
        &permissions,
        &roles,
    )
    .fetch_all(&mut *tx)
    .await?;
    if !first && !new.is_empty() {
        let (permissions, roles): (Vec<String>, Vec<String>) =
            new.iter().map(|g| (g.permission.clone(), g.role.clone())).unzip();
        sqlx::query!(
            "INSERT INTO role_permissions (role_id, permission) \
             SELECT r.id, g.permission FROM roles r \
             JOIN unnest($1::text[], $2::text[]) AS g (permission, role) ON r.name = g.role \
             WHERE r.is_builtin ON CONFLICT DO NOTHING",
            &permissions,
            &roles,
        )
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(if first { 0 } else { new.len() })
}
