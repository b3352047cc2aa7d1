//! The tenant's members: changing a role (through the gate), removing,
//! disabling, unlocking. People join by invitation (`invitations`). The last owner of a tenant can't be
//! removed or demoted; only an owner makes or unmakes owners.

use serde::Deserialize;
use uuid::Uuid;

use super::permissions::OWNER;
use super::store::{self, MemberRow};
use super::Member;
use crate::approvals::routes::submit_control;
use crate::audit::{self, outcome, Event, NewRecord};
use crate::auth::{store as users, throttle};
use crate::controls::members::{RoleChange, RoleChangeAction};
use crate::startup::AppState;
use crate::web::error::PortalError;
use crate::web::form::{Failure, Refusal};

#[derive(Debug, Default, Clone, Deserialize)]
pub struct NewMember {
    pub email: String,
    pub role_id: Option<Uuid>,
}

fn record(member: &Member, event: Event, target: String) -> NewRecord {
    NewRecord::new(
        &member.actor(),
        Some(member.tenant_id),
        event,
        target,
        outcome::SUCCESS,
    )
}

/// The role a form chose, if it is one of the tenant's and the member may
/// give it (only an Owner makes Owners).
pub async fn chosen_role(
    state: &AppState,
    member: &Member,
    role_id: Option<Uuid>,
) -> Result<store::RoleRow, Failure> {
    let role = match role_id {
        Some(id) => store::role(&state.pool, member.tenant_id, id).await?,
        None => None,
    }
    .ok_or_else(|| Refusal::field("role_id", "Choose one of this tenant's roles."))?;
    if role.name == OWNER && member.role_name != OWNER {
        return Err(Refusal::field("role_id", "Only an Owner can make someone an Owner.").into());
    }
    Ok(role)
}

pub async fn target(state: &AppState, member: &Member, user_id: Uuid) -> Result<MemberRow, PortalError> {
    store::member(&state.pool, member.tenant_id, user_id)
        .await?
        .ok_or_else(|| PortalError::NotFound("no such member".to_owned()))
}

/// Files the role change through the gate (a second admin approves it
/// when the policy asks).
#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id, %user_id))]
pub async fn change_role(
    state: &AppState,
    member: &Member,
    user_id: Uuid,
    role_id: Uuid,
) -> Result<String, Failure> {
    let target = target(state, member, user_id).await?;
    let role = store::role(&state.pool, member.tenant_id, role_id)
        .await?
        .ok_or_else(|| Refusal::form("Choose one of this tenant's roles."))?;
    if (target.role_name == OWNER || role.name == OWNER) && member.role_name != OWNER {
        return Err(
            Refusal::form("Only an Owner can make someone an Owner or change an Owner's role.").into(),
        );
    }
    let summary = format!(
        "Change {}'s role from {} to {}",
        target.email, target.role_name, role.name
    );
    let change = RoleChange {
        user_id: target.user_id,
        email: target.email,
        from_role: target.role_name,
        to_role_id: role.id,
        to_role: role.name,
    };
    let key = format!("member:{}", change.user_id);
    submit_control::<RoleChangeAction>(state, member, &key, &summary, change).await
}

/// Why `target` can't be removed by `member`, if they can't.
pub async fn removal_refused(state: &AppState, member: &Member, target: &MemberRow) -> Result<(), Failure> {
    if target.role_name == OWNER && member.role_name != OWNER {
        return Err(Refusal::form("Only an Owner can remove an Owner.").into());
    }
    let mut tx = state.pool.begin().await?;
    if target.role_name == OWNER && store::other_owners(&mut tx, member.tenant_id, target.user_id).await? == 0
    {
        return Err(Refusal::form(format!(
            "{} is the last owner and can't be removed. Make someone else an owner first.",
            target.email
        ))
        .into());
    }
    Ok(())
}

#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id, user = %target.user_id))]
pub async fn remove(state: &AppState, member: &Member, target: &MemberRow) -> Result<String, Failure> {
    removal_refused(state, member, target).await?;
    let mut tx = state.pool.begin().await?;
    store::remove_member(&mut tx, member.tenant_id, target.user_id).await?;
    audit::store::append_in(
        &mut tx,
        &[
            record(member, Event::MembersRemoved, format!("user:{}", target.user_id))
                .with_details(serde_json::json!({"email": target.email, "role": target.role_name})),
        ],
    )
    .await?;
    tx.commit().await?;
    Ok(format!(
        "{} no longer has access to {}.",
        target.email, member.tenant_name
    ))
}

/// Ends a lockout after repeated failed sign-ins, for a member who called
/// in; the failure count starts again from zero.
#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id, user = %target.user_id))]
pub async fn unlock(state: &AppState, member: &Member, target: &MemberRow) -> Result<String, Failure> {
    if !target.locked {
        return Err(Refusal::form(format!("{} is not locked out.", target.email)).into());
    }
    throttle::record_success(&state.pool, target.user_id).await?;
    let record = record(member, Event::MembersUnlocked, format!("user:{}", target.user_id))
        .with_details(serde_json::json!({"email": target.email}));
    audit::store::append(&state.pool, &[record]).await?;
    Ok(format!("{} can sign in again.", target.email))
}

/// Whether every member of the tenant must use two-factor (those whose
/// role can approve, administer or reveal card details always must).
#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id, required))]
pub async fn require_two_factor(
    state: &AppState,
    member: &Member,
    required: bool,
) -> Result<String, Failure> {
    let mut tx = state.pool.begin().await?;
    sqlx::query!(
        "UPDATE tenants SET require_two_factor = $2 WHERE id = $1",
        member.tenant_id,
        required
    )
    .execute(&mut *tx)
    .await?;
    let record = record(
        member,
        Event::MembersTwoFactorPolicy,
        format!("tenant:{}", member.tenant_id),
    )
    .with_details(serde_json::json!({"required": required}));
    audit::store::append_in(&mut tx, &[record]).await?;
    tx.commit().await?;
    Ok(match required {
        true => {
            "Every member now needs two-factor; those without it set it up at their next page.".to_owned()
        }
        false => {
            "Two-factor is now required only of members who can approve, administer or reveal card details."
                .to_owned()
        }
    })
}

/// Platform admins disable an account everywhere; its sessions end at once.
#[tracing::instrument(skip_all, fields(%user_id, disabled))]
pub async fn set_disabled(
    state: &AppState,
    member: &Member,
    user_id: Uuid,
    disabled: bool,
) -> Result<String, Failure> {
    if !member.user.is_platform_admin {
        return Err(PortalError::Forbidden("platform admin".to_owned()).into());
    }
    let target = target(state, member, user_id).await?;
    if target.user_id == member.user.user_id {
        return Err(Refusal::form("You can't disable your own account.").into());
    }
    users::set_disabled(&state.pool, target.user_id, disabled).await?;
    let (event, done) = if disabled {
        (Event::UsersDisabled, "disabled; their sessions have ended")
    } else {
        (Event::UsersEnabled, "enabled")
    };
    audit::store::append(
        &state.pool,
        &[record(member, event, format!("user:{}", target.user_id))
            .with_details(serde_json::json!({"email": target.email}))],
    )
    .await?;
    Ok(format!("{}'s account is {done}.", target.email))
}
