//! Admins' pages: the roles-by-permissions matrix (custom roles too) and
//! the tenant's members. Every change is audited; the last owner of a
//! tenant can't be removed or demoted.

use std::collections::HashSet;

use actix_web::web::{self, Data, Form, Path};
use actix_web::HttpResponse;
use askama::Template;
use secrecy::SecretString;
use serde::Deserialize;
use uuid::Uuid;

use super::permissions::{self, Permission};
use super::store::{self, MemberRow, RoleRow};
use super::Member;
use crate::approvals::action::Action;
use crate::approvals::routes::submit_control;
use crate::approvals::store::{self as approvals, ActionRequest};
use crate::audit::Event;
use crate::audit::{self, outcome, NewRecord};
use crate::auth::{password, store as users};
use crate::controls::members::{RoleChange, RoleChangeAction};
use crate::controls::roles::{PermissionsChange, PermissionsChangeAction, RoleDiff};
use crate::startup::AppState;
use crate::web::confirm::{Confirm, Confirmed};
use crate::web::error::PortalError;
use crate::web::page::{redirect, refused_or_ok, Shell};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/roles", web::get().to(roles_page))
        .route("/roles", web::post().to(create_role))
        .route("/roles/matrix", web::post().to(save_matrix))
        .route("/roles/{id}/delete", web::post().to(delete_role))
        .route("/members", web::get().to(members_page))
        .route("/members", web::post().to(add_member))
        .route("/members/{user_id}/role", web::post().to(change_role))
        .route("/members/{user_id}/remove", web::post().to(remove_member))
        .route("/members/{user_id}/disable", web::post().to(disable_member))
        .route("/members/{user_id}/enable", web::post().to(enable_member));
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

// --- Roles -----------------------------------------------------------------

pub struct PermissionRow {
    name: &'static str,
    description: &'static str,
    /// The group heading, on the first row of each group.
    group_heading: Option<&'static str>,
    /// One cell per role: (form field name, checked, editable).
    cells: Vec<(String, bool, bool)>,
}

#[derive(Template)]
#[template(path = "access/roles.html")]
struct RolesPage {
    shell: Shell,
    roles: Vec<RoleRow>,
    rows: Vec<PermissionRow>,
    notice: Option<String>,
    error: Option<String>,
    pending: Vec<ActionRequest>,
}

/// Owner keeps every permission, so a tenant can never lock itself out.
fn editable(role: &RoleRow) -> bool {
    !(role.is_builtin && role.name == permissions::OWNER)
}

async fn render_roles(
    state: &AppState,
    member: &Member,
    notice: Option<String>,
    error: Option<String>,
) -> Result<String, PortalError> {
    let pending =
        approvals::pending_of(&state.pool, member.tenant_id, &[PermissionsChangeAction::KIND]).await?;
    let roles = store::roles(&state.pool, member.tenant_id).await?;
    let all = Permission::ALL;
    let rows = all
        .iter()
        .enumerate()
        .map(|(i, permission)| PermissionRow {
            name: permission.name(),
            description: permission.label(),
            group_heading: (i == 0 || all[i - 1].group() != permission.group()).then_some(permission.group()),
            cells: roles
                .iter()
                .map(|r| {
                    (
                        format!("{}:{}", r.id, permission.name()),
                        r.permissions.iter().any(|p| p == permission.name()),
                        editable(r),
                    )
                })
                .collect(),
        })
        .collect();
    Ok(RolesPage {
        shell: Shell::new(member, "/roles"),
        roles,
        rows,
        notice,
        error,
        pending,
    }
    .render()?)
}

fn page(status: actix_web::http::StatusCode, body: String) -> HttpResponse {
    HttpResponse::build(status)
        .content_type("text/html; charset=utf-8")
        .body(body)
}

async fn roles_page(state: Data<AppState>, member: Member) -> Result<HttpResponse, PortalError> {
    member.require(Permission::RolesManage)?;
    Ok(page(
        actix_web::http::StatusCode::OK,
        render_roles(&state, &member, None, None).await?,
    ))
}

#[derive(Deserialize)]
pub struct NewRole {
    name: String,
}

async fn create_role(
    state: Data<AppState>,
    member: Member,
    form: Form<NewRole>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::RolesManage)?;
    let name = form.name.trim();
    if name.is_empty() || name.len() > 60 {
        let body = render_roles(
            &state,
            &member,
            None,
            Some("Give the role a name of 1 to 60 characters.".into()),
        )
        .await?;
        return Ok(page(actix_web::http::StatusCode::UNPROCESSABLE_ENTITY, body));
    }
    match store::create_role(&state.pool, member.tenant_id, name).await? {
        Some(id) => {
            audit::store::append(
                &state.pool,
                &[record(&member, Event::RolesCreated, format!("role:{id}"))
                    .with_details(serde_json::json!({"name": name}))],
            )
            .await?;
            Ok(redirect("/roles"))
        }
        None => {
            let body = render_roles(
                &state,
                &member,
                None,
                Some(format!("A role named '{name}' already exists.")),
            )
            .await?;
            Ok(page(actix_web::http::StatusCode::UNPROCESSABLE_ENTITY, body))
        }
    }
}

/// Saves the whole matrix: each checked box is `<role id>:<permission>`.
async fn save_matrix(
    state: Data<AppState>,
    member: Member,
    form: Form<Vec<(String, String)>>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::RolesManage)?;
    let checked: HashSet<(Uuid, String)> = form
        .iter()
        .filter_map(|(k, _)| {
            let (role, perm) = k.split_once(':')?;
            Some((Uuid::parse_str(role).ok()?, perm.to_owned()))
        })
        .filter(|(_, p)| Permission::parse(p).is_some())
        .collect();
    let roles = store::roles(&state.pool, member.tenant_id).await?;
    let mut changes = Vec::new();
    for role in roles.iter().filter(|r| editable(r)) {
        let mut wanted: Vec<String> = Permission::ALL
            .iter()
            .map(|p| p.name().to_owned())
            .filter(|p| checked.contains(&(role.id, p.clone())))
            .collect();
        // Stored permissions come back sorted; compare like with like.
        wanted.sort();
        if wanted != role.permissions {
            changes.push(RoleDiff {
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
            });
        }
    }
    let (notice, error) = if changes.is_empty() {
        (Some("Nothing changed.".to_owned()), None)
    } else {
        let summary = format!(
            "Change the permissions of {}",
            changes
                .iter()
                .map(|c| c.role_name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        let change = PermissionsChange { roles: changes };
        submit_control::<PermissionsChangeAction>(&state, &member, "roles", &summary, change).await?
    };
    let refused = error.is_some();
    Ok(refused_or_ok(
        render_roles(&state, &member, notice, error).await?,
        refused,
    ))
}

async fn delete_role(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
    confirmed: Form<Confirmed>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::RolesManage)?;
    let role = store::role(&state.pool, member.tenant_id, *id)
        .await?
        .ok_or_else(|| PortalError::NotFound("no such role".to_owned()))?;
    if !confirmed.yes() && !role.is_builtin && role.members == 0 {
        let consequences = [format!(
            "The role '{}' and its {} permission(s) are deleted; no member has it.",
            role.name,
            role.permissions.len()
        )];
        return Confirm {
            title: &format!("Delete the role {}", role.name),
            consequences: &consequences,
            action: &format!("/roles/{}/delete", role.id),
            back: "/roles",
            button: "Delete role",
            fields: &[],
        }
        .page(&member);
    }
    if !store::delete_role(&state.pool, member.tenant_id, role.id).await? {
        let reason = if role.is_builtin {
            "Built-in roles can't be deleted."
        } else {
            "Move its members to another role first."
        };
        let body = render_roles(
            &state,
            &member,
            None,
            Some(format!("'{}' was not deleted. {reason}", role.name)),
        )
        .await?;
        return Ok(page(actix_web::http::StatusCode::UNPROCESSABLE_ENTITY, body));
    }
    audit::store::append(
        &state.pool,
        &[record(&member, Event::RolesDeleted, format!("role:{}", role.id))
            .with_details(serde_json::json!({"name": role.name}))],
    )
    .await?;
    Ok(redirect("/roles"))
}

// --- Members ---------------------------------------------------------------

#[derive(Template)]
#[template(path = "access/members.html")]
struct MembersPage {
    shell: Shell,
    members: Vec<MemberRow>,
    roles: Vec<RoleRow>,
    me: Uuid,
    can_disable: bool,
    notice: Option<String>,
    error: Option<String>,
    one_time: Option<(String, String)>,
    pending: Vec<ActionRequest>,
}

async fn render_members(
    state: &AppState,
    member: &Member,
    notice: Option<String>,
    error: Option<String>,
    one_time: Option<(String, String)>,
) -> Result<String, PortalError> {
    Ok(MembersPage {
        shell: Shell::new(member, "/members"),
        members: store::members(&state.pool, member.tenant_id).await?,
        roles: store::roles(&state.pool, member.tenant_id).await?,
        me: member.user.user_id,
        can_disable: member.user.is_platform_admin,
        notice,
        error,
        one_time,
        pending: approvals::pending_of(&state.pool, member.tenant_id, &[RoleChangeAction::KIND]).await?,
    }
    .render()?)
}

async fn members_page(state: Data<AppState>, member: Member) -> Result<HttpResponse, PortalError> {
    member.require(Permission::MembersManage)?;
    Ok(page(
        actix_web::http::StatusCode::OK,
        render_members(&state, &member, None, None, None).await?,
    ))
}

#[derive(Deserialize)]
pub struct NewMember {
    email: String,
    #[serde(default)]
    display_name: String,
    role_id: Uuid,
}

fn valid_email(email: &str) -> bool {
    let Some((local, domain)) = email.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && domain.contains('.')
        && !domain.starts_with('.')
        && !email.contains(char::is_whitespace)
}

/// Adds someone by email with a role. A new account gets a one-time
/// password, shown to the admin once, to hand over.
async fn add_member(
    state: Data<AppState>,
    member: Member,
    form: Form<NewMember>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::MembersManage)?;
    let form = form.into_inner();
    let email = form.email.trim().to_lowercase();
    let refuse = |message: String| async {
        let body = render_members(&state, &member, None, Some(message), None).await?;
        Ok::<_, PortalError>(page(actix_web::http::StatusCode::UNPROCESSABLE_ENTITY, body))
    };
    if !valid_email(&email) {
        return refuse(format!("'{email}' is not an email address.")).await;
    }
    let Some(role) = store::role(&state.pool, member.tenant_id, form.role_id).await? else {
        return refuse("Choose one of this tenant's roles.".to_owned()).await;
    };
    if role.name == permissions::OWNER && member.role_name != permissions::OWNER {
        return refuse("Only an Owner can make someone an Owner.".to_owned()).await;
    }
    if store::members(&state.pool, member.tenant_id)
        .await?
        .iter()
        .any(|m| m.email == email)
    {
        return refuse(format!("{email} is already a member; change their role below.")).await;
    }
    let existing = users::by_email(&state.pool, &email).await?;
    let mut one_time = None;
    let mut tx = state.pool.begin().await?;
    let user_id = match existing {
        Some(user) => user.id,
        None => {
            let secret = password::one_time();
            let hash = password::hash(SecretString::from(secret.clone())).await;
            let name = if form.display_name.trim().is_empty() {
                email.clone()
            } else {
                form.display_name.trim().to_owned()
            };
            let id = users::create(&mut *tx, &email, &name, &hash, false, true).await?;
            audit::store::append_in(
                &mut tx,
                &[record(&member, Event::UsersCreated, format!("user:{id}"))
                    .with_details(serde_json::json!({"email": email}))],
            )
            .await?;
            one_time = Some((email.clone(), secret));
            id
        }
    };
    store::add_member(
        &mut tx,
        member.tenant_id,
        user_id,
        role.id,
        Some(member.user.user_id),
    )
    .await?;
    audit::store::append_in(
        &mut tx,
        &[record(&member, Event::MembersAdded, format!("user:{user_id}"))
            .with_details(serde_json::json!({"email": email, "role": role.name}))],
    )
    .await?;
    tx.commit().await?;
    let notice = format!("{email} is now a member with the {} role.", role.name);
    Ok(page(
        actix_web::http::StatusCode::OK,
        render_members(&state, &member, Some(notice), None, one_time).await?,
    ))
}

#[derive(Deserialize)]
pub struct RoleChoice {
    role_id: Uuid,
}

async fn target_member(state: &AppState, member: &Member, user_id: Uuid) -> Result<MemberRow, PortalError> {
    store::member(&state.pool, member.tenant_id, user_id)
        .await?
        .ok_or_else(|| PortalError::NotFound("no such member".to_owned()))
}

async fn refuse_members(
    state: &AppState,
    member: &Member,
    message: String,
) -> Result<HttpResponse, PortalError> {
    let body = render_members(state, member, None, Some(message), None).await?;
    Ok(page(actix_web::http::StatusCode::UNPROCESSABLE_ENTITY, body))
}

async fn change_role(
    state: Data<AppState>,
    member: Member,
    user_id: Path<Uuid>,
    form: Form<RoleChoice>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::MembersManage)?;
    let target = target_member(&state, &member, *user_id).await?;
    let Some(role) = store::role(&state.pool, member.tenant_id, form.role_id).await? else {
        return refuse_members(&state, &member, "Choose one of this tenant's roles.".to_owned()).await;
    };
    if (target.role_name == permissions::OWNER || role.name == permissions::OWNER)
        && member.role_name != permissions::OWNER
    {
        return refuse_members(
            &state,
            &member,
            "Only an Owner can make someone an Owner or change an Owner's role.".to_owned(),
        )
        .await;
    }
    let change = RoleChange {
        user_id: target.user_id,
        email: target.email.clone(),
        from_role: target.role_name.clone(),
        to_role_id: role.id,
        to_role: role.name.clone(),
    };
    let target_key = format!("member:{}", target.user_id);
    let summary = format!(
        "Change {}'s role from {} to {}",
        target.email, target.role_name, role.name
    );
    let (notice, error) =
        submit_control::<RoleChangeAction>(&state, &member, &target_key, &summary, change).await?;
    if let Some(message) = error {
        return refuse_members(&state, &member, message).await;
    }
    Ok(page(
        actix_web::http::StatusCode::OK,
        render_members(&state, &member, notice, None, None).await?,
    ))
}

async fn remove_member(
    state: Data<AppState>,
    member: Member,
    user_id: Path<Uuid>,
    confirmed: Form<Confirmed>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::MembersManage)?;
    let target = target_member(&state, &member, *user_id).await?;
    if target.role_name == permissions::OWNER && member.role_name != permissions::OWNER {
        return refuse_members(&state, &member, "Only an Owner can remove an Owner.".to_owned()).await;
    }
    let mut tx = state.pool.begin().await?;
    if target.role_name == permissions::OWNER
        && store::other_owners(&mut tx, member.tenant_id, target.user_id).await? == 0
    {
        return refuse_members(
            &state,
            &member,
            format!(
                "{} is the last owner and can't be removed. Make someone else an owner first.",
                target.email
            ),
        )
        .await;
    }
    if !confirmed.yes() {
        let consequences = [
            format!("{} loses access to {} at once.", target.email, member.tenant_name),
            "Their account stays, with their other tenants; the audit log keeps what they did.".to_owned(),
        ];
        return Confirm {
            title: &format!("Remove {}", target.email),
            consequences: &consequences,
            action: &format!("/members/{}/remove", target.user_id),
            back: "/members",
            button: "Remove member",
            fields: &[],
        }
        .page(&member);
    }
    store::remove_member(&mut tx, member.tenant_id, target.user_id).await?;
    audit::store::append_in(
        &mut tx,
        &[
            record(&member, Event::MembersRemoved, format!("user:{}", target.user_id))
                .with_details(serde_json::json!({"email": target.email, "role": target.role_name})),
        ],
    )
    .await?;
    tx.commit().await?;
    Ok(redirect("/members"))
}

/// Platform admins disable an account everywhere; its sessions end at once.
async fn set_disabled(
    state: &AppState,
    member: &Member,
    user_id: Uuid,
    disabled: bool,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::MembersManage)?;
    if !member.user.is_platform_admin {
        return Err(PortalError::Forbidden("platform admin".to_owned()));
    }
    let target = target_member(state, member, user_id).await?;
    if target.user_id == member.user.user_id {
        return refuse_members(state, member, "You can't disable your own account.".to_owned()).await;
    }
    users::set_disabled(&state.pool, target.user_id, disabled).await?;
    let action = if disabled {
        Event::UsersDisabled
    } else {
        Event::UsersEnabled
    };
    audit::store::append(
        &state.pool,
        &[record(member, action, format!("user:{}", target.user_id))
            .with_details(serde_json::json!({"email": target.email}))],
    )
    .await?;
    Ok(redirect("/members"))
}

async fn disable_member(
    state: Data<AppState>,
    member: Member,
    user_id: Path<Uuid>,
) -> Result<HttpResponse, PortalError> {
    set_disabled(&state, &member, *user_id, true).await
}

async fn enable_member(
    state: Data<AppState>,
    member: Member,
    user_id: Path<Uuid>,
) -> Result<HttpResponse, PortalError> {
    set_disabled(&state, &member, *user_id, false).await
}
