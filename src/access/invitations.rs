//! Invitations, the only way into a tenant. An admin names an email and a
//! role; the invitee gets a single-use link by mail, valid for a week, and
//! there sets their own password (a new account) or gives the one they
//! have (an existing account). The admin's answer is the same either way,
//! so it says nothing about who has an account, and no one but the
//! invitee ever sees a password.

use chrono::{DateTime, Utc};
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use uuid::Uuid;

use super::members::{chosen_role, NewMember};
use super::store;
use super::Member;
use crate::approvals::submit_control;
use crate::audit::{self, outcome, Actor, Event, NewRecord};
use crate::auth::account::Started;
use crate::auth::session::{self, token_hash};
use crate::auth::{password, store as users, throttle};
use crate::controls::membership::{MembershipAction, MembershipChange};
use crate::state::AppState;
use crate::web::error::PortalError;
use crate::web::form::{self, Failure, Refusal};

/// An invitation as its pages show it.
#[derive(Debug, Clone)]
pub struct Invitation {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub tenant_name: String,
    pub email: String,
    pub role_id: Uuid,
    pub role_name: String,
    pub invited_by: Uuid,
    /// The second admin who approved the invitation, if one did.
    pub confirmed_by: Option<Uuid>,
    pub inviter_email: String,
    pub expires_at: DateTime<Utc>,
    pub created_at: DateTime<Utc>,
}

/// Files an invitation through the gate: with a second admin, the link
/// is sent only once they approve it.
#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id))]
pub async fn invite(state: &AppState, member: &Member, new: &NewMember) -> Result<String, Failure> {
    let email = form::email(&new.email, "email")?;
    let role = chosen_role(state, member, new.role_id).await?;
    already_member(state, member.tenant_id, &email).await?;
    let summary = format!("Invite {email} as {}", role.name);
    let change = MembershipChange::Invite {
        email: email.clone(),
        role_id: role.id,
        role: role.name,
    };
    submit_control::<MembershipAction>(state, member, &format!("invitation:{email}"), &summary, change).await
}

async fn already_member(state: &AppState, tenant_id: Uuid, email: &str) -> Result<(), Failure> {
    if is_member(state, tenant_id, email).await? {
        return Err(Refusal::field(
            "email",
            format!("{email} is already a member; change their role below."),
        )
        .into());
    }
    Ok(())
}

async fn is_member(state: &AppState, tenant_id: Uuid, email: &str) -> Result<bool, sqlx::Error> {
    Ok(store::members(&state.pool, tenant_id)
        .await?
        .iter()
        .any(|m| m.email == email))
}

/// The tenant's invitations still waiting to be accepted.
pub async fn waiting(state: &AppState, tenant_id: Uuid) -> Result<Vec<Invitation>, sqlx::Error> {
    sqlx::query_as!(
        Invitation,
        r#"SELECT i.id, i.tenant_id, t.name AS tenant_name, i.email, i.role_id, r.name AS role_name,
                  i.invited_by, i.confirmed_by, u.email AS inviter_email, i.expires_at, i.created_at
           FROM invitations i JOIN tenants t ON t.id = i.tenant_id JOIN roles r ON r.id = i.role_id
           JOIN users u ON u.id = i.invited_by
           WHERE i.tenant_id = $1 AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > now()
           ORDER BY i.created_at DESC"#,
        tenant_id,
    )
    .fetch_all(&state.pool)
    .await
}

/// Files the revocation of an open invitation through the gate.
#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id))]
pub async fn revoke(state: &AppState, member: &Member, id: Uuid) -> Result<String, Failure> {
    let invitation = waiting(state, member.tenant_id)
        .await?
        .into_iter()
        .find(|i| i.id == id)
        .ok_or_else(|| {
            PortalError::NotFound("no open invitation here: it was accepted, revoked or replaced".to_owned())
        })?;
    let summary = format!("Revoke the invitation to {}", invitation.email);
    let change = MembershipChange::RevokeInvitation {
        id,
        email: invitation.email,
    };
    submit_control::<MembershipAction>(state, member, &format!("invitation:{id}"), &summary, change).await
}

/// The open invitation a link's token names: not accepted, revoked or
/// expired.
pub async fn open(state: &AppState, token: &str) -> Result<Option<Invitation>, sqlx::Error> {
    sqlx::query_as!(
        Invitation,
        r#"SELECT i.id, i.tenant_id, t.name AS tenant_name, i.email, i.role_id, r.name AS role_name,
                  i.invited_by, i.confirmed_by, u.email AS inviter_email, i.expires_at, i.created_at
           FROM invitations i JOIN tenants t ON t.id = i.tenant_id JOIN roles r ON r.id = i.role_id
           JOIN users u ON u.id = i.invited_by
           WHERE i.token_hash = $1 AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > now()"#,
        token_hash(token),
    )
    .fetch_optional(&state.pool)
    .await
}

/// Whether the invited email has an account: the page asks for that
/// account's password, or for a new one. Only the link's holder sees it.
pub async fn has_account(state: &AppState, invitation: &Invitation) -> Result<bool, sqlx::Error> {
    Ok(users::by_email(&state.pool, &invitation.email).await?.is_some())
}

/// The acceptance form: a name and a new password twice for a new
/// account, or the existing account's password.
#[derive(Deserialize)]
pub struct Acceptance {
    #[serde(default)]
    pub display_name: String,
    pub password: SecretString,
    pub confirm_password: Option<SecretString>,
}

/// Who accepts, from where.
pub struct From {
    pub ip: String,
    pub user_agent: String,
    pub previous_session: Option<String>,
}

#[tracing::instrument(skip_all)]
/// Joins the tenant; the session to start, unless the account has
/// two-factor on (then it signs in as usual).
pub async fn accept(
    state: &AppState,
    token: &str,
    form: Acceptance,
    from: From,
) -> Result<Option<Started>, Failure> {
    let gone = || {
        Refusal::form(
            "This invitation has expired, was used, or was revoked. Ask whoever invited you for a new one.",
        )
    };
    let invitation = open(state, token).await?.ok_or_else(gone)?;
    if throttle::address_blocked(&state.pool, &from.ip).await? {
        return Err(Refusal::form(
            "Too many failed attempts from your network. Wait 15 minutes, then try again.",
        )
        .into());
    }
    let existing = users::by_email(&state.pool, &invitation.email).await?;
    let existing_two_factor = existing.as_ref().is_some_and(|u| u.two_factor);
    let user_id = match &existing {
        Some(user) => {
            // A locked or disabled account joins nothing: the invitation
            // must not be a way around the sign-in's rules.
            let locked = user.locked_until.is_some_and(|t| t > chrono::Utc::now());
            if locked || user.disabled_at.is_some() {
                return Err(Refusal::form("This account can't sign in right now (locked after failed attempts, or disabled). Reset the password from the sign-in page, or ask an admin, then open this link again.").into());
            }
            if !password::verify(Some(user.password_hash.clone()), form.password).await {
                throttle::record_failure(&state.pool, &from.ip, Some(user.id)).await?;
                return Err(Refusal::field(
                    "password",
                    "That is not this account's password. Type it again, or reset it from the sign-in page.",
                )
                .into());
            }
            None
        }
        None => Some(new_account(&invitation, form).await?),
    };
    let mut tx = state.pool.begin().await?;
    // Taken under a row lock, so a link used twice at once adds one member.
    let still_open = sqlx::query_scalar!(
        "UPDATE invitations SET accepted_at = now() \
         WHERE id = $1 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > now() RETURNING id",
        invitation.id,
    )
    .fetch_optional(&mut *tx)
    .await?;
    if still_open.is_none() {
        return Err(gone().into());
    }
    let user_id = match (existing, user_id) {
        (Some(user), _) => user.id,
        (None, Some((name, hash))) => {
            users::create(&mut *tx, &invitation.email, &name, &hash, false, false).await?
        }
        (None, None) => unreachable!("a new account always has a name and password"),
    };
    store::add_member(
        &mut tx,
        invitation.tenant_id,
        user_id,
        invitation.role_id,
        store::GrantedBy {
            by: Some(invitation.invited_by),
            confirmed_by: invitation.confirmed_by,
        },
    )
    .await?;
    let actor = Actor {
        user_id: Some(user_id),
        email: invitation.email.clone(),
        ip: from.ip.clone(),
        user_agent: from.user_agent.clone(),
    };
    let record = NewRecord::new(&actor, Some(invitation.tenant_id), Event::MembersAdded, format!("user:{user_id}"), outcome::SUCCESS)
        .with_details(serde_json::json!({"email": invitation.email, "role": invitation.role_name, "invitation": invitation.id}));
    audit::store::append_in(&mut tx, &[record]).await?;
    tx.commit().await?;
    // An account with two-factor signs in with its code, as always.
    if existing_two_factor {
        return Ok(None);
    }
    if let Some(previous) = &from.previous_session {
        session::end(&state.pool, &token_hash(previous)).await?;
    }
    let token = session::start(
        &state.pool,
        user_id,
        Some(invitation.tenant_id),
        (&from.ip, &from.user_agent),
        false,
    )
    .await?;
    Ok(Some(Started {
        token,
        must_change_password: false,
    }))
}

/// A new account's name and password hash, checked.
async fn new_account(invitation: &Invitation, form: Acceptance) -> Result<(String, String), Failure> {
    let name = match form.display_name.trim() {
        "" => return Err(Refusal::field("display_name", "Give your name as colleagues know it.").into()),
        name => form::bounded(name, "display_name", "your name", 80)?,
    };
    password::check_new(form.password.expose_secret(), &invitation.email)
        .map_err(|m| Refusal::field("password", m))?;
    let confirmed = form
        .confirm_password
        .as_ref()
        .is_some_and(|c| c.expose_secret() == form.password.expose_secret());
    if !confirmed {
        return Err(Refusal::field(
            "confirm_password",
            "The two passwords differ. Type the same one twice.",
        )
        .into());
    }
    Ok((name, password::hash(form.password).await))
}
