//! The tenant's members: changing a role (through the gate), removing,
//! disabling, unlocking. People join by invitation (`invitations`). The last owner of a tenant can't be
//! removed or demoted; only an owner makes or unmakes owners.

use serde::Deserialize;
use uuid::Uuid;

use super::permissions::OWNER;
use super::store::{self, MemberRow};
use super::Member;
use crate::approvals::submit_control;
use crate::audit::{self, outcome, Event, NewRecord};
use crate::auth::throttle;
use crate::controls::members::{RoleChange, RoleChangeAction};
use crate::controls::membership::{MembershipAction, MembershipChange};
use crate::state::AppState;
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

/// Files the member's removal through the gate.
#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id, user = %target.user_id))]
pub async fn remove(state: &AppState, member: &Member, target: &MemberRow) -> Result<String, Failure> {
    removal_refused(state, member, target).await?;
    let change = MembershipChange::Remove {
        user_id: target.user_id,
        email: target.email.clone(),
        role: target.role_name.clone(),
    };
    let summary = format!(
        "Remove {} ({}) from {}",
        target.email, target.role_name, member.tenant_name
    );
    submit_control::<MembershipAction>(
        state,
        member,
        &format!("member:{}", target.user_id),
        &summary,
        change,
    )
    .await
}

/// Ends a lockout after repeated failed sign-ins, for a member who called
/// in; the failure count starts again from zero.
#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id, user = %target.user_id))]
pub async fn unlock(state: &AppState, member: &Member, target: &MemberRow) -> Result<String, Failure> {
    if !target.locked {
        return Err(Refusal::form(format!("{} is not locked out.", target.email)).into());
    }
    let mut tx = state.pool.begin().await?;
    throttle::record_success(&mut *tx, target.user_id).await?;
    let record = record(member, Event::MembersUnlocked, format!("user:{}", target.user_id))
        .with_details(serde_json::json!({"email": target.email}));
    audit::store::append_in(&mut tx, &[record]).await?;
    tx.commit().await?;
    Ok(format!("{} can sign in again.", target.email))
}

/// Files whether every member of the tenant must use two-factor (those
/// whose role can approve, administer or reveal card details always must).
#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id, required))]
pub async fn require_two_factor(
    state: &AppState,
    member: &Member,
    required: bool,
) -> Result<String, Failure> {
    let summary = match required {
        true => "Require two-factor of every member",
        false => "Require two-factor only of members who approve, administer or reveal card details",
    };
    let change = MembershipChange::RequireTwoFactor { required };
    submit_control::<MembershipAction>(state, member, "tenant:two_factor", summary, change).await
}

/// Platform admins disable an account everywhere (its sessions end at
/// once) or enable it again, through this tenant's gate.
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
    let (change, verb) = match disabled {
        true => (
            MembershipChange::Disable {
                user_id,
                email: target.email.clone(),
            },
            "Disable",
        ),
        false => (
            MembershipChange::Enable {
                user_id,
                email: target.email.clone(),
            },
            "Enable",
        ),
    };
    let summary = format!("{verb} the account of {}", target.email);
    submit_control::<MembershipAction>(state, member, &format!("account:{user_id}"), &summary, change).await
}
