//! Admins' pages: the roles-by-permissions matrix (custom roles too) and
//! the tenant's members. The rules live in `roles` and `members`.

use actix_web::web::{self, Data, Form, Path, Query};
use actix_web::HttpResponse;
use askama::Template;
use serde::Deserialize;
use uuid::Uuid;

use super::grants;
use super::invitations::{self, Invitation};
use super::members::{self, NewMember};
use super::permissions::Permission;
use super::roles;
use super::store::{self, MemberRow, RoleRow};
use super::Member;
use crate::approvals::Action;
use crate::approvals::{self, ActionRequest};
use crate::area::Area;
use crate::audit;
use crate::controls::members::RoleChangeAction;
use crate::controls::membership::MembershipAction;
use crate::controls::roles::PermissionsChangeAction;
use crate::state::AppState;
use crate::web::confirm::{Confirm, Confirmed};
use crate::web::error::PortalError;
use crate::web::form::{split, FieldErrors, Refusal};
use crate::web::listing::{self, CsvRecord, Dates};
use crate::web::menu::{MenuEntry, MenuGroup, ShownTo};
use crate::web::page::{done, ok, unprocessable, Shell};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/roles", web::get().to(roles_page))
        .route("/roles", web::post().to(create_role))
        .route("/roles/matrix", web::post().to(save_matrix))
        .route("/roles/{id}/delete", web::post().to(delete_role))
        .route("/members", web::get().to(members_page))
        .route("/members/export.csv", web::get().to(export_members))
        .route("/members", web::post().to(invite))
        .route(
            "/members/invitations/{id}/revoke",
            web::post().to(revoke_invitation),
        )
        .route("/members/{user_id}/unlock", web::post().to(unlock_member))
        .route("/members/two-factor", web::post().to(two_factor_policy))
        .route("/members/{user_id}/role", web::post().to(change_role))
        .route("/members/{user_id}/remove", web::post().to(remove_member))
        .route("/members/{user_id}/disable", web::post().to(disable_member))
        .route("/members/{user_id}/enable", web::post().to(enable_member))
        .route("/members/grants/{id}/confirm", web::post().to(confirm_grant));
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
    errors: FieldErrors,
    /// The new role's name as typed, when it was refused.
    draft_name: String,
    pending: Vec<ActionRequest>,
}

fn matrix(roles: &[RoleRow]) -> Vec<PermissionRow> {
    let all = Permission::ALL;
    all.iter()
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
                        roles::editable(r),
                    )
                })
                .collect(),
        })
        .collect()
}

async fn render_roles(
    state: &AppState,
    member: &Member,
    errors: FieldErrors,
    draft_name: String,
) -> Result<String, PortalError> {
    let roles = store::roles(&state.pool, member.tenant_id).await?;
    Ok(RolesPage {
        shell: Shell::new(member, "/roles"),
        rows: matrix(&roles),
        roles,
        errors,
        draft_name,
        pending: approvals::pending_of(&state.pool, member.tenant_id, &[PermissionsChangeAction::KIND])
            .await?,
    }
    .render()?)
}

/// The roles page again with what was refused (422).
async fn refuse_roles(
    state: &AppState,
    member: &Member,
    refusal: Refusal,
    draft_name: String,
) -> Result<HttpResponse, PortalError> {
    Ok(unprocessable(
        render_roles(state, member, refusal.into(), draft_name).await?,
    ))
}

async fn roles_page(state: Data<AppState>, member: Member) -> Result<HttpResponse, PortalError> {
    member.require(Permission::RolesManage)?;
    Ok(ok(render_roles(
        &state,
        &member,
        FieldErrors::default(),
        String::new(),
    )
    .await?))
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
    match split(roles::create(&state, &member, &form.name).await)? {
        Ok(notice) => Ok(done("/roles", notice)),
        Err(refusal) => refuse_roles(&state, &member, refusal, form.into_inner().name).await,
    }
}

/// Saves the whole matrix: each checked box is `<role id>:<permission>`.
async fn save_matrix(
    state: Data<AppState>,
    member: Member,
    form: Form<Vec<(String, String)>>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::RolesManage)?;
    match split(roles::save_matrix(&state, &member, &form).await)? {
        Ok(notice) => Ok(done("/roles", notice)),
        Err(refusal) => refuse_roles(&state, &member, refusal, String::new()).await,
    }
}

async fn delete_role(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
    confirmed: Form<Confirmed>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::RolesManage)?;
    let role = roles::role(&state, &member, *id).await?;
    if let Err(refusal) = roles::deletable(&role) {
        return refuse_roles(&state, &member, refusal, String::new()).await;
    }
    if !confirmed.yes() {
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
    match split(roles::delete(&state, &member, &role).await)? {
        Ok(notice) => Ok(done("/roles", notice)),
        Err(refusal) => refuse_roles(&state, &member, refusal, String::new()).await,
    }
}

// --- Members ---------------------------------------------------------------

#[derive(Template)]
#[template(path = "access/members.html")]
struct MembersPage {
    shell: Shell,
    dates: Dates,
    export_query: String,
    members: Vec<MemberRow>,
    roles: Vec<RoleRow>,
    me: Uuid,
    can_disable: bool,
    errors: FieldErrors,
    /// The invitation form as typed, when it was refused.
    draft: NewMember,
    invitations: Vec<Invitation>,
    pending: Vec<ActionRequest>,
    two_factor_required: bool,
    /// Grants one admin made alone, for a second admin to confirm.
    grants: Vec<store::UnconfirmedGrant>,
}

async fn render_members(
    state: &AppState,
    member: &Member,
    (errors, draft): (FieldErrors, NewMember),
    dates: Dates,
) -> Result<String, PortalError> {
    Ok(MembersPage {
        shell: Shell::new(member, "/members"),
        members: store::members_joined(&state.pool, member.tenant_id, dates.range()).await?,
        export_query: listing::query(&dates, None),
        dates,
        roles: store::roles(&state.pool, member.tenant_id).await?,
        me: member.user.user_id,
        can_disable: member.user.is_platform_admin,
        errors,
        draft,
        invitations: invitations::waiting(state, member.tenant_id).await?,
        two_factor_required: member.user.tenant_requires_two_factor,
        pending: approvals::pending_of(
            &state.pool,
            member.tenant_id,
            &[RoleChangeAction::KIND, MembershipAction::KIND],
        )
        .await?,
        grants: store::unconfirmed_grants(&state.pool, member.tenant_id).await?,
    }
    .render()?)
}

/// The members page again with what was refused (422).
async fn refuse_members(
    state: &AppState,
    member: &Member,
    refusal: Refusal,
    draft: NewMember,
) -> Result<HttpResponse, PortalError> {
    Ok(unprocessable(
        render_members(state, member, (refusal.into(), draft), Dates::default()).await?,
    ))
}

async fn members_page(
    state: Data<AppState>,
    member: Member,
    dates: Query<Dates>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::MembersManage)?;
    let form = (FieldErrors::default(), NewMember::default());
    Ok(ok(
        render_members(&state, &member, form, dates.into_inner()).await?
    ))
}

impl CsvRecord for MemberRow {
    const HEADER: &'static [&'static str] = &["email", "name", "role", "account", "two_factor", "joined_at"];

    fn fields(self) -> Vec<String> {
        let account = match (self.disabled, self.locked) {
            (true, _) => "disabled",
            (false, true) => "locked out",
            (false, false) => "active",
        };
        vec![
            self.email.clone(),
            self.display_name.clone(),
            self.role_name.clone(),
            account.to_owned(),
            self.two_factor.to_string(),
            self.joined_at.to_rfc3339(),
        ]
    }
}

/// The members who joined in the dates chosen, as CSV: an access review
/// (who holds which role, with two-factor or not), on record.
async fn export_members(
    state: Data<AppState>,
    member: Member,
    dates: Query<Dates>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::MembersManage)?;
    let rows = store::members_joined(&state.pool, member.tenant_id, dates.range()).await?;
    audit::exported(&state.pool, &member, "members", &*dates).await?;
    listing::export_rows("members", rows).await
}

/// Invites someone by email with a role; they join by the mailed link.
async fn invite(
    state: Data<AppState>,
    member: Member,
    form: Form<NewMember>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::MembersManage)?;
    match split(invitations::invite(&state, &member, &form).await)? {
        Ok(notice) => Ok(done("/members", notice)),
        Err(refusal) => refuse_members(&state, &member, refusal, form.into_inner()).await,
    }
}

async fn revoke_invitation(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::MembersManage)?;
    match split(invitations::revoke(&state, &member, *id).await)? {
        Ok(notice) => Ok(done("/members", notice)),
        Err(refusal) => refuse_members(&state, &member, refusal, NewMember::default()).await,
    }
}

#[derive(Deserialize)]
pub struct TwoFactorPolicy {
    #[serde(default)]
    required: String,
}

async fn two_factor_policy(
    state: Data<AppState>,
    member: Member,
    form: Form<TwoFactorPolicy>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::MembersManage)?;
    match split(members::require_two_factor(&state, &member, form.required == "yes").await)? {
        Ok(notice) => Ok(done("/members", notice)),
        Err(refusal) => refuse_members(&state, &member, refusal, NewMember::default()).await,
    }
}

async fn unlock_member(
    state: Data<AppState>,
    member: Member,
    user_id: Path<Uuid>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::MembersManage)?;
    let target = members::target(&state, &member, *user_id).await?;
    match split(members::unlock(&state, &member, &target).await)? {
        Ok(notice) => Ok(done("/members", notice)),
        Err(refusal) => refuse_members(&state, &member, refusal, NewMember::default()).await,
    }
}

#[derive(Deserialize)]
pub struct RoleChoice {
    role_id: Uuid,
}

async fn change_role(
    state: Data<AppState>,
    member: Member,
    user_id: Path<Uuid>,
    form: Form<RoleChoice>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::MembersManage)?;
    match split(members::change_role(&state, &member, *user_id, form.role_id).await)? {
        Ok(notice) => Ok(done("/members", notice)),
        Err(refusal) => refuse_members(&state, &member, refusal, NewMember::default()).await,
    }
}

async fn remove_member(
    state: Data<AppState>,
    member: Member,
    user_id: Path<Uuid>,
    confirmed: Form<Confirmed>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::MembersManage)?;
    let target = members::target(&state, &member, *user_id).await?;
    let checked = if confirmed.yes() {
        members::remove(&state, &member, &target).await
    } else {
        members::removal_refused(&state, &member, &target)
            .await
            .map(|()| String::new())
    };
    match split(checked)? {
        Ok(notice) if confirmed.yes() => Ok(done("/members", notice)),
        Ok(_) => {
            let consequences = [
                format!("{} loses access to {} at once.", target.email, member.tenant_name),
                "Their account stays, with their other tenants; the audit log keeps what they did."
                    .to_owned(),
            ];
            Confirm {
                title: &format!("Remove {}", target.email),
                consequences: &consequences,
                action: &format!("/members/{}/remove", target.user_id),
                back: "/members",
                button: "Remove member",
                fields: &[],
            }
            .page(&member)
        }
        Err(refusal) => refuse_members(&state, &member, refusal, NewMember::default()).await,
    }
}

async fn set_disabled(
    state: &AppState,
    member: &Member,
    user_id: Uuid,
    disabled: bool,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::MembersManage)?;
    match split(members::set_disabled(state, member, user_id, disabled).await)? {
        Ok(notice) => Ok(done("/members", notice)),
        Err(refusal) => refuse_members(state, member, refusal, NewMember::default()).await,
    }
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

/// A second admin confirms a grant one admin made alone.
async fn confirm_grant(
    state: Data<AppState>,
    member: Member,
    id: Path<i64>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::MembersManage)?;
    match split(grants::confirm(&state, &member, *id).await)? {
        Ok(notice) => Ok(done("/members", notice)),
        Err(refusal) => refuse_members(&state, &member, refusal, NewMember::default()).await,
    }
}

/// Members, invitations and roles.
pub const AREA: Area = Area {
    routes: |cfg| {
        configure(cfg);
        super::invitation_routes::configure(cfg);
    },
    menu: &[
        MenuEntry::new(
            MenuGroup::Admin,
            "/members",
            "Members",
            ShownTo::Holding(&[Permission::MembersManage]),
        ),
        MenuEntry::new(
            MenuGroup::Admin,
            "/roles",
            "Roles",
            ShownTo::Holding(&[Permission::RolesManage]),
        ),
    ],
    kinds: crate::area::no_kinds,
};
