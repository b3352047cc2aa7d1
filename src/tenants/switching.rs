//! Choosing the active tenant. The choice is recorded in the tenant
//! chosen, so each tenant's log shows who came into it and nothing of
//! where they were before.

use sqlx::PgPool;
use uuid::Uuid;

use crate::access::store as access;
use crate::audit::{self, outcome, Event, NewRecord};
use crate::auth::session::{self, SignedIn};

/// Makes `tenant_id` the user's active tenant; false when they are not a
/// member of it.
pub async fn switch(pool: &PgPool, user: &SignedIn, tenant_id: Uuid) -> Result<bool, sqlx::Error> {
    let mine = access::tenants_of(pool, user.user_id).await?;
    let Some((_, name)) = mine.iter().find(|(id, _)| *id == tenant_id) else {
        return Ok(false);
    };
    let mut tx = pool.begin().await?;
    session::set_active_tenant(&mut *tx, &user.token_hash, tenant_id).await?;
    // The next sign-in lands here too.
    sqlx::query!(
        "UPDATE users SET last_tenant_id = $2 WHERE id = $1",
        user.user_id,
        tenant_id
    )
    .execute(&mut *tx)
    .await?;
    let record = NewRecord::new(
        &user.actor(),
        Some(tenant_id),
        Event::AuthTenantSwitched,
        format!("tenant:{name}"),
        outcome::SUCCESS,
    );
    audit::store::append_in(&mut tx, &[record]).await?;
    tx.commit().await?;
    Ok(true)
}
