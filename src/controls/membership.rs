//! Who is in the tenant, as a control of the approval gate: inviting
//! (the link is mailed only once a second admin approves), revoking an
//! invitation, removing a member, disabling or enabling an account, and
//! the tenant's two-factor requirement. Each decides who can file or
//! approve, so none is one admin's alone while the tenant has two.

use chrono::{Duration, Utc};
use serde::{Deserialize, Serialize};
use serde_json::json;
use sqlx::PgPool;
use uuid::Uuid;

use crate::access::permissions::{Permission, OWNER};
use crate::access::store as access;
use crate::approvals::gate_actor;
use crate::approvals::{Action, ExecError, Fact, Mailing, Run, Step};
use crate::approvals::{Kind, Policy};
use crate::audit::{self, outcome, Event, NewRecord};
use crate::auth::session::{self, token_hash};
use crate::auth::store as users;
use crate::mail::Mail;

/// How long an invitation's link works.
pub const VALID_FOR: Duration = Duration::days(7);

pub struct MembershipAction;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum MembershipChange {
    /// Also a re-invitation: it replaces an open one to the same email.
    Invite {
        email: String,
        role_id: Uuid,
        role: String,
    },
    RevokeInvitation {
        id: Uuid,
        email: String,
    },
    Remove {
        user_id: Uuid,
        email: String,
        role: String,
    },
    /// The account everywhere (platform admins only): sessions end at once.
    Disable {
        user_id: Uuid,
        email: String,
    },
    Enable {
        user_id: Uuid,
        email: String,
    },
    RequireTwoFactor {
        required: bool,
    },
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Applied {}

impl Action for MembershipAction {
    type Payload = MembershipChange;
    type Progress = Applied;

    const KIND: Kind = Kind {
        key: "membership",
        label: "Membership changes",
        read_permission: Permission::MembersManage,
        request_permission: Permission::MembersManage,
        approve_permission: Permission::MembersManage,
    };
    const CONTROL: bool = true;

    fn default_policy(&self) -> Policy {
        Policy::four_eyes()
    }

    fn describe(&self, c: &MembershipChange) -> Vec<Fact> {
        match c {
            MembershipChange::Invite { email, role, .. } => vec![
                Fact::new("Invite", email.clone()),
                Fact::new("Role", role.clone()),
                Fact::new("Link", "mailed once this is approved; it works once, for 7 days"),
            ],
            MembershipChange::RevokeInvitation { email, .. } => {
                vec![Fact::new("Revoke the invitation to", email.clone())]
            }
            MembershipChange::Remove { email, role, .. } => vec![
                Fact::new("Remove", email.clone()),
                Fact::new("Role now", role.clone()),
            ],
            MembershipChange::Disable { email, .. } => vec![Fact::new(
                "Disable the account of",
                format!("{email}: in every tenant, with its sessions ended"),
            )],
            MembershipChange::Enable { email, .. } => {
                vec![Fact::new("Enable the account of", email.clone())]
            }
            MembershipChange::RequireTwoFactor { required } => vec![Fact::new(
                "Two-factor",
                match required {
                    true => "required of every member",
                    false => "required only of members who approve, administer or reveal card details",
                },
            )],
        }
    }

    async fn execute(
        &self,
        run: &mut Run<'_, Applied>,
        c: &MembershipChange,
    ) -> Result<Step<MembershipChange>, ExecError> {
        let request = run.request;
        let tenant = request.tenant_id;
        let record = |event: Event, target: String, details: serde_json::Value| {
            let mut details = details;
            details["requested_by"] = json!(request.requester_email);
            details["request"] = json!(request.id);
            NewRecord::new(&gate_actor(), Some(tenant), event, target, outcome::SUCCESS).with_details(details)
        };
        let pool = run.pool;
        match c {
            MembershipChange::Invite { email, role_id, role } => {
                if access::role(pool, tenant, *role_id).await?.is_none() {
                    return Ok(Step::Failed(format!("The role '{role}' was deleted meanwhile.")));
                }
                let authors = run.grant_authors().await?;
                let issue = Issue {
                    tenant_id: tenant,
                    email,
                    role_id: *role_id,
                    role_name: role,
                    invited_by: request.requested_by,
                    inviter_email: &request.requester_email,
                    confirmed_by: authors.confirmed_by,
                };
                let audit = record(
                    Event::MembersInvited,
                    format!("invitation:{email}"),
                    json!({"email": email, "role": role, "confirmed_by": authors.confirmed_by}),
                );
                Ok(match issue_invitation(pool, run.mail, issue, audit).await? {
                    Ok(()) => Step::Done(format!(
                        "An invitation is on its way to {email}. Its link works once, for 7 days."
                    )),
                    Err(why) => Step::Failed(why),
                })
            }
            MembershipChange::RevokeInvitation { id, email } => {
                let mut tx = pool.begin().await?;
                if !access::revoke_invitation(&mut tx, tenant, *id).await? {
                    return Ok(Step::Failed(format!(
                        "The invitation to {email} was accepted, revoked or replaced meanwhile."
                    )));
                }
                let audit = record(
                    Event::MembersInvitationRevoked,
                    format!("invitation:{id}"),
                    json!({"email": email}),
                );
                audit::store::append_in(&mut tx, &[audit]).await?;
                tx.commit().await?;
                Ok(Step::Done(format!(
                    "The invitation to {email} is revoked; its link no longer works."
                )))
            }
            MembershipChange::Remove { user_id, email, role } => {
                let mut tx = pool.begin().await?;
                let Some(current) = access::member(pool, tenant, *user_id).await? else {
                    return Ok(Step::Failed(format!("{email} is no longer a member.")));
                };
                if current.role_name == OWNER && access::other_owners(&mut tx, tenant, *user_id).await? == 0 {
                    return Ok(Step::Failed(format!(
                        "{email} is the last owner and can't be removed. Make someone else an owner first."
                    )));
                }
                access::remove_member(&mut tx, tenant, *user_id).await?;
                let audit = record(
                    Event::MembersRemoved,
                    format!("user:{user_id}"),
                    json!({"email": email, "role": role}),
                );
                audit::store::append_in(&mut tx, &[audit]).await?;
                tx.commit().await?;
                Ok(Step::Done(format!(
                    "{email} no longer has access to this tenant."
                )))
            }
            MembershipChange::Disable { user_id, email } | MembershipChange::Enable { user_id, email } => {
                let disabled = matches!(c, MembershipChange::Disable { .. });
                let (event, done) = match disabled {
                    true => (Event::UsersDisabled, "disabled; their sessions have ended"),
                    false => (Event::UsersEnabled, "enabled"),
                };
                let mut tx = pool.begin().await?;
                users::set_disabled(&mut tx, *user_id, disabled).await?;
                let audit = record(event, format!("user:{user_id}"), json!({"email": email}));
                audit::store::append_in(&mut tx, &[audit]).await?;
                tx.commit().await?;
                Ok(Step::Done(format!("{email}'s account is {done}.")))
            }
            MembershipChange::RequireTwoFactor { required } => {
                let mut tx = pool.begin().await?;
                access::set_two_factor_required(&mut tx, tenant, *required).await?;
                let audit = record(
                    Event::MembersTwoFactorPolicy,
                    format!("tenant:{tenant}"),
                    json!({"required": required}),
                );
                audit::store::append_in(&mut tx, &[audit]).await?;
                tx.commit().await?;
                Ok(Step::Done(match required {
                    true => "Every member now needs two-factor; those without it set it up at their next page."
                        .to_owned(),
                    false => "Two-factor is now required only of members who can approve, administer or reveal card details."
                        .to_owned(),
                }))
            }
        }
    }
}

/// An approved invitation, as the gate sends it.
struct Issue<'a> {
    tenant_id: Uuid,
    email: &'a str,
    role_id: Uuid,
    role_name: &'a str,
    invited_by: Uuid,
    inviter_email: &'a str,
    confirmed_by: Option<Uuid>,
}

/// Replaces any open invitation of the email with a new one and mails its
/// link, recording `audit` with it; the refusal, in the admin's words,
/// when it can't be sent (then nothing is kept).
async fn issue_invitation(
    pool: &PgPool,
    mailing: Mailing<'_>,
    issue: Issue<'_>,
    audit: NewRecord,
) -> Result<Result<(), String>, sqlx::Error> {
    let members = access::members(pool, issue.tenant_id).await?;
    if members.iter().any(|m| m.email == issue.email) {
        return Ok(Err(format!("{} became a member meanwhile.", issue.email)));
    }
    let token = session::random_token();
    let mut tx = pool.begin().await?;
    // A second invitation to the same person replaces the first.
    sqlx::query!(
        "UPDATE invitations SET revoked_at = now() \
         WHERE tenant_id = $1 AND email = $2 AND accepted_at IS NULL AND revoked_at IS NULL",
        issue.tenant_id,
        issue.email,
    )
    .execute(&mut *tx)
    .await?;
    let tenant_name = sqlx::query_scalar!(
        "INSERT INTO invitations (id, tenant_id, email, role_id, invited_by, confirmed_by, token_hash, expires_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, now() + $8::interval) \
         RETURNING (SELECT name FROM tenants WHERE id = $2) AS \"name!\"",
        Uuid::new_v4(),
        issue.tenant_id,
        issue.email,
        issue.role_id,
        issue.invited_by,
        issue.confirmed_by,
        token_hash(&token),
        crate::db::interval(VALID_FOR),
    )
    .fetch_one(&mut *tx)
    .await?;
    audit::store::append_in(&mut tx, &[audit]).await?;
    let mail = Mail {
        to: issue.email.to_owned(),
        subject: format!("You are invited to {tenant_name} on Paydesk"),
        body: format!(
            "{} invites you to join {tenant_name} on Paydesk as {}.\n\nOpen this link to accept; it works once, until {} UTC:\n{}/invitations/{token}\n\nIf you did not expect this, ignore this mail.\n",
            issue.inviter_email,
            issue.role_name,
            (Utc::now() + VALID_FOR).format("%Y-%m-%d %H:%M"),
            mailing.public_url,
        ),
    };
    // Sent before committing: an invitation nobody could receive is not kept.
    if let Err(e) = mailing.mailer.send(pool, mail).await {
        tracing::warn!(error = %e, "an invitation could not be sent");
        return Ok(Err("The invitation could not be sent by mail. Try again; if it keeps failing, the platform admin should check the mail settings.".to_owned()));
    }
    tx.commit().await?;
    Ok(Ok(()))
}
