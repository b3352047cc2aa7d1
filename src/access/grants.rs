//! Confirming the grants one admin made alone (`access::ties`): a second
//! admin of the tenant looks at who was added or given a role and
//! confirms it, and from then on it ties no one. Confirming is itself the
//! second pair of eyes, so it is recorded rather than filed for approval.
//! For a tenant with one admin, the platform's admins may confirm instead
//! when the tenant lets them (operators who host Paydesk for others).

use uuid::Uuid;

use super::store::{self, UnconfirmedGrant};
use super::Member;
use crate::audit::{self, outcome, Actor, Event, NewRecord};
use crate::auth::session::SignedIn;
use crate::state::AppState;
use crate::web::error::PortalError;
use crate::web::form::{Failure, Refusal};

/// Confirms one of the tenant's grants as this member (an admin other than
/// the one who made it, and not its grantee).
#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id, grant = id))]
pub async fn confirm(state: &AppState, member: &Member, id: i64) -> Result<String, Failure> {
    confirm_as(state, member.tenant_id, member.actor(), id).await
}

/// Confirms a grant of `tenant` as a platform admin, where the tenant lets
/// the platform's admins do so.
#[tracing::instrument(skip_all, fields(%tenant, grant = id))]
pub async fn confirm_for_platform(
    state: &AppState,
    admin: &SignedIn,
    tenant: Uuid,
    id: i64,
) -> Result<String, Failure> {
    if !store::platform_confirms_grants(&state.pool, tenant).await? {
        return Err(Refusal::form(
            "This tenant's grants are confirmed by its own admins; turn on \"Platform admins confirm grants\" for it first.",
        )
        .into());
    }
    confirm_as(state, tenant, admin.actor(), id).await
}

async fn confirm_as(state: &AppState, tenant: Uuid, actor: Actor, id: i64) -> Result<String, Failure> {
    let by = actor
        .user_id
        .ok_or_else(|| PortalError::Forbidden("a signed-in admin".to_owned()))?;
    let grant = store::unconfirmed_grants(&state.pool, tenant)
        .await?
        .into_iter()
        .find(|g| g.id == id)
        .ok_or_else(|| PortalError::NotFound("no grant waiting to be confirmed".to_owned()))?;
    if !may_confirm(&grant, by) {
        return Err(Refusal::form(format!(
            "You can't confirm this: {} made it or it was given to you. Another admin confirms it.",
            grant.granted_by_email
        ))
        .into());
    }
    let mut tx = state.pool.begin().await?;
    if !store::confirm_grant(&mut tx, tenant, id, by).await? {
        return Err(Refusal::form(
            "You can't confirm this grant: it was made by you, given to you or to your role, or confirmed meanwhile.",
        )
        .into());
    }
    let record = NewRecord::new(&actor, Some(tenant), Event::MembersGrantConfirmed, format!("grant:{id}"), outcome::SUCCESS)
        .with_details(serde_json::json!({"grantee": grant.grantee, "what": grant.what, "granted_by": grant.granted_by_email}));
    audit::store::append_in(&mut tx, &[record]).await?;
    tx.commit().await?;
    Ok(format!(
        "Confirmed: {} holds {} with a second admin's consent; it no longer ties them to {}.",
        grant.grantee, grant.what, grant.granted_by_email
    ))
}

/// Whether `who` may confirm the grant: not its maker, not its grantee.
pub fn may_confirm(grant: &UnconfirmedGrant, who: Uuid) -> bool {
    grant.granted_by != who && grant.user_id != Some(who)
}

/// Turns on or off the platform's admins confirming a tenant's grants.
#[tracing::instrument(skip_all, fields(%tenant, on))]
pub async fn set_platform_confirms(
    state: &AppState,
    admin: &SignedIn,
    tenant: Uuid,
    on: bool,
) -> Result<String, Failure> {
    let mut tx = state.pool.begin().await?;
    if !store::set_platform_confirms_grants(&mut *tx, tenant, on).await? {
        return Err(PortalError::NotFound("no such tenant".to_owned()).into());
    }
    let record = NewRecord::new(
        &admin.actor(),
        None,
        Event::TenantsPlatformConfirmsGrants,
        format!("tenant:{tenant}"),
        outcome::SUCCESS,
    )
    .with_details(serde_json::json!({"on": on}));
    audit::store::append_in(&mut tx, &[record]).await?;
    tx.commit().await?;
    Ok(match on {
        true => "Platform admins may now confirm this tenant's grants.".to_owned(),
        false => "Only this tenant's own admins confirm its grants now.".to_owned(),
    })
}
