//! The tenant's roles: custom roles made and deleted, and the
//! roles-by-permissions matrix, whose changes go through the gate. The
//! Owner role keeps every permission, so a tenant can't lock itself out.

use std::collections::HashSet;

use uuid::Uuid;

use super::permissions::{Permission, OWNER};
use super::store::{self, RoleRow};
use super::Member;
use crate::approvals::submit_control;
use crate::audit::{self, outcome, Event, NewRecord};
use crate::controls::roles::{PermissionsChange, PermissionsChangeAction, RoleDiff};
use crate::state::AppState;
use crate::web::error::PortalError;
use crate::web::form::{self, Failure, Refusal};

/// Owner keeps every permission.
pub fn editable(role: &RoleRow) -> bool {
    !(role.is_builtin && role.name == OWNER)
}

fn record(member: &Member, event: Event, role_id: Uuid, name: &str) -> NewRecord {
    NewRecord::new(
        &member.actor(),
        Some(member.tenant_id),
        event,
        format!("role:{role_id}"),
        outcome::SUCCESS,
    )
    .with_details(serde_json::json!({"name": name}))
}

#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id))]
pub async fn create(state: &AppState, member: &Member, name: &str) -> Result<String, Failure> {
    let name = form::bounded(name, "name", "the role a name", 60)?;
    let mut tx = state.pool.begin().await?;
    let Some(id) = store::create_role(&mut *tx, member.tenant_id, &name).await? else {
        return Err(Refusal::field(
            "name",
            format!("A role named '{name}' already exists; choose another name."),
        )
        .into());
    };
    audit::store::append_in(&mut tx, &[record(member, Event::RolesCreated, id, &name)]).await?;
    tx.commit().await?;
    Ok(format!(
        "Role '{name}' created with no permissions; tick its boxes below and save."
    ))
}

pub async fn role(state: &AppState, member: &Member, id: Uuid) -> Result<RoleRow, PortalError> {
    store::role(&state.pool, member.tenant_id, id)
        .await?
        .ok_or_else(|| PortalError::NotFound("no such role".to_owned()))
}

/// Only a custom role nobody holds can be deleted.
pub fn deletable(role: &RoleRow) -> Result<(), Refusal> {
    match (role.is_builtin, role.members) {
        (true, _) => Err(Refusal::form(format!(
            "'{}' is built in and can't be deleted.",
            role.name
        ))),
        (false, 0) => Ok(()),
        (false, n) => Err(Refusal::form(format!(
            "'{}' was not deleted: {n} member(s) hold it. Move them to another role first.",
            role.name
        ))),
    }
}

#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id, role = %role.id))]
pub async fn delete(state: &AppState, member: &Member, role: &RoleRow) -> Result<String, Failure> {
    deletable(role)?;
    // Someone may have been given the role since the page loaded.
    let mut tx = state.pool.begin().await?;
    if !store::delete_role(&mut *tx, member.tenant_id, role.id).await? {
        return Err(Refusal::form(format!(
            "'{}' was not deleted: someone holds it now. Move them to another role first.",
            role.name
        ))
        .into());
    }
    audit::store::append_in(
        &mut tx,
        &[record(member, Event::RolesDeleted, role.id, &role.name)],
    )
    .await?;
    tx.commit().await?;
    Ok(format!("Role '{}' deleted.", role.name))
}

/// The roles whose permissions differ from the boxes ticked
/// (`<role id>:<permission>` fields).
fn differences(roles: &[RoleRow], fields: &[(String, String)]) -> Vec<RoleDiff> {
    let checked: HashSet<(Uuid, Permission)> = fields
        .iter()
        .filter_map(|(k, _)| {
            let (role, perm) = k.split_once(':')?;
            Some((Uuid::parse_str(role).ok()?, Permission::parse(perm)?))
        })
        .collect();
    roles
        .iter()
        .filter(|r| editable(r))
        .filter_map(|role| {
            // Stored permissions come back sorted by name; compare like with like.
            let mut wanted: Vec<String> = Permission::ALL
                .iter()
                .filter(|p| checked.contains(&(role.id, **p)))
                .map(|p| p.name().to_owned())
                .collect();
            wanted.sort();
            (wanted != role.permissions).then(|| RoleDiff {
                role_id: role.id,
                role_name: role.name.clone(),
                added: wanted
                    .iter()
                    .filter(|p| !role.permissions.contains(p))
                    .cloned()
                    .collect(),
                removed: role
                    .permissions
                    .iter()
                    .filter(|p| !wanted.contains(p))
                    .cloned()
                    .collect(),
                permissions: wanted,
            })
        })
        .collect()
}

/// Saves the whole matrix as one change through the gate.
#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id))]
pub async fn save_matrix(
    state: &AppState,
    member: &Member,
    fields: &[(String, String)],
) -> Result<String, Failure> {
    let roles = store::roles(&state.pool, member.tenant_id).await?;
    let changes = differences(&roles, fields);
    if changes.is_empty() {
        return Ok("Nothing changed.".to_owned());
    }
    let names: Vec<&str> = changes.iter().map(|c| c.role_name.as_str()).collect();
    let summary = format!("Change the permissions of {}", names.join(", "));
    let change = PermissionsChange { roles: changes };
    submit_control::<PermissionsChangeAction>(state, member, "roles", &summary, change).await
}
