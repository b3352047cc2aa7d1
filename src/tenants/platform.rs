//! The platform admin's work: tenants and the base-URL allow-list.

use super::model::normalize_base_url;
use super::store;
use crate::access::store as access;
use crate::audit::{self, outcome, Event, NewRecord};
use crate::auth::session::SignedIn;
use crate::state::AppState;
use crate::web::form::{self, Failure, Refusal};

/// The constraints that keep tenant names apart: exactly, and whatever
/// their case.
const TENANT_NAME_KEYS: &[&str] = &["tenants_name_key", "tenants_name_ci"];

/// Creates a tenant with its built-in roles; the platform admin who made it
/// is its first owner and can add members there.
#[tracing::instrument(skip_all)]
pub async fn create_tenant(state: &AppState, admin: &SignedIn, name: &str) -> Result<String, Failure> {
    let name = form::bounded(name, "name", "the tenant a name", 80)?;
    let mut tx = state.pool.begin().await?;
    let (tenant_id, owner) = match store::create_tenant(&mut tx, &name).await {
        Ok(created) => created,
        Err(e) if form::unique_violation(&e).is_some_and(|c| TENANT_NAME_KEYS.contains(&c)) => {
            return Err(Refusal::field(
                "name",
                format!("A tenant named '{name}' already exists; choose another name."),
            )
            .into())
        }
        Err(e) => return Err(e.into()),
    };
    access::add_member(
        &mut tx,
        tenant_id,
        admin.user_id,
        owner,
        access::GrantedBy::default(),
    )
    .await?;
    audit::store::append_in(
        &mut tx,
        &[record(admin, Event::TenantsCreated, &format!("tenant:{name}"))
            .with_details(serde_json::json!({"name": name}))],
    )
    .await?;
    tx.commit().await?;
    Ok(format!(
        "Created '{name}'. You are its owner; switch to it to add members and a connection."
    ))
}

/// A platform admin's action: in the platform log, never a tenant's.
fn record(admin: &SignedIn, event: Event, target: &str) -> NewRecord {
    NewRecord::new(&admin.actor(), None, event, target, outcome::SUCCESS)
}

#[tracing::instrument(skip_all)]
pub async fn allow(state: &AppState, admin: &SignedIn, raw: &str) -> Result<String, Failure> {
    let base_url = normalize_base_url(raw).map_err(|m| Refusal::field("base_url", m))?;
    let mut tx = state.pool.begin().await?;
    if !store::allow_base_url(&mut *tx, &base_url).await? {
        return Ok(format!("{base_url} was already allowed."));
    }
    audit::store::append_in(
        &mut tx,
        &[record(admin, Event::SettingsBaseUrlAllowed, &base_url)],
    )
    .await?;
    tx.commit().await?;
    Ok(format!("Connections may now use {base_url}."))
}

#[tracing::instrument(skip_all)]
pub async fn disallow(state: &AppState, admin: &SignedIn, base_url: &str) -> Result<String, Failure> {
    let base_url = base_url.trim();
    let mut tx = state.pool.begin().await?;
    if store::disallow_base_url(&mut *tx, base_url).await? {
        audit::store::append_in(
            &mut tx,
            &[record(admin, Event::SettingsBaseUrlDisallowed, base_url)],
        )
        .await?;
    }
    tx.commit().await?;
    Ok(format!(
        "{base_url} is off the allow-list; new connections can no longer use it."
    ))
}
