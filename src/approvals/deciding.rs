//! Deciding: approve, reject or cancel a request (one at a time or many
//! at once). Each decision takes the request's row lock, so however many
//! approvers click at once (or an approval races a cancel or the expiry),
//! exactly one change wins and at most one job is queued.

use super::action::Registry;
use super::chores::expire_locked;
use super::lifecycle::{policy_of, transition, ApprovalError, Change, Notify};
use super::model::RequestStatus;
use super::quorum::Colleagues;
use super::store;
use crate::access::Member;
use crate::audit::{self, outcome, Event, NewRecord};
use chrono::{Duration, Utc};
use serde_json::json;
use sqlx::PgPool;
use uuid::Uuid;

/// What a decision led to.
#[derive(Debug, PartialEq, Eq)]
pub enum Decided {
    /// Recorded; more approvals are needed.
    Recorded,
    /// The last approval: the action is queued to run.
    Approved,
    Rejected,
}

/// Approves each picked request (id, the digest its row showed) on its
/// own: how many were approved, and why each other one was not.
pub async fn approve_each(
    pool: &PgPool,
    registry: &Registry,
    member: &Member,
    picked: &[(Uuid, String)],
) -> Result<(usize, Vec<String>), sqlx::Error> {
    let mut approved = 0;
    let mut refusals = Vec::new();
    // Who may decide is read once for the whole set: it is the same member.
    let colleagues = store::candidates(pool, member.tenant_id).await?;
    for (id, digest) in picked {
        let verdict = Verdict {
            approve: true,
            comment: "",
            digest,
        };
        match decide_as(pool, registry, member, &colleagues, *id, verdict).await {
            Ok(_) => approved += 1,
            Err(ApprovalError::Db(e)) => return Err(e),
            Err(e) => {
                let summary = store::find(pool, member.tenant_id, *id)
                    .await?
                    .map_or_else(|| id.to_string(), |r| r.summary);
                let reason = crate::web::show::sentence_case(&e.to_string());
                refusals.push(format!("{summary}: {reason}"));
            }
        }
    }
    Ok((approved, refusals))
}

/// Approves or rejects what `digest` describes, with a comment.
pub async fn decide(
    pool: &PgPool,
    registry: &Registry,
    member: &Member,
    request_id: Uuid,
    approve: bool,
    comment: &str,
    digest: &str,
) -> Result<Decided, ApprovalError> {
    let colleagues = store::candidates(pool, member.tenant_id).await?;
    let verdict = Verdict {
        approve,
        comment,
        digest,
    };
    decide_as(pool, registry, member, &colleagues, request_id, verdict).await
}

/// One decision: approve or reject, the comment, and the digest of what
/// the decider saw.
struct Verdict<'a> {
    approve: bool,
    comment: &'a str,
    digest: &'a str,
}

async fn decide_as(
    pool: &PgPool,
    registry: &Registry,
    member: &Member,
    colleagues: &Colleagues,
    request_id: Uuid,
    Verdict {
        approve,
        comment,
        digest,
    }: Verdict<'_>,
) -> Result<Decided, ApprovalError> {
    let mut tx = pool.begin().await?;
    let request = store::lock(&mut tx, member.tenant_id, request_id)
        .await?
        .ok_or(ApprovalError::NotFound)?;
    let now = Utc::now();
    if request.status == RequestStatus::Pending && now >= request.expires_at {
        expire_locked(&mut tx, &request).await?;
        tx.commit().await?;
        return Err(ApprovalError::NotPending(RequestStatus::Expired));
    }
    if request.status != RequestStatus::Pending {
        return Err(ApprovalError::NotPending(request.status));
    }
    let action = registry.get(&request.kind)?;
    let kind = action.kind();
    let policy = policy_of(pool, member.tenant_id, action, request.policy_version).await?;
    let escalated = policy
        .escalation_after_secs
        .is_some_and(|secs| now >= request.created_at + Duration::seconds(secs as i64));
    let me = colleagues.find(member.user.user_id).ok_or_else(|| {
        ApprovalError::NotAllowed("You are not an active member of this tenant.".to_owned())
    })?;
    colleagues
        .may_approve(&policy, action.quorum(), me, &request.filed(), escalated)
        .map_err(ApprovalError::NotAllowed)?;
    if digest != request.digest {
        return Err(ApprovalError::Changed);
    }
    if !approve && comment.trim().is_empty() {
        return Err(ApprovalError::NotAllowed(
            "Say why you reject it: the requester reads the reason.".to_owned(),
        ));
    }
    let comment = comment.trim();
    let decision = if approve { "approve" } else { "reject" };
    let Some(approvals) = store::add_decision(
        &mut tx,
        &request,
        me.user_id,
        (decision, comment),
        (
            kind.approve_permission,
            policy.escalation_role.as_deref().filter(|_| escalated),
        ),
    )
    .await?
    else {
        return Err(ApprovalError::AlreadyDecided);
    };
    let role_met = match &request.required_role {
        None => true,
        Some(role) => store::approver_role_names(&mut *tx, request.id)
            .await?
            .contains(role),
    };
    let detail = if comment.is_empty() {
        format!("by {}", me.email)
    } else {
        format!("by {}: {comment}", me.email)
    };
    let details = json!({"comment": comment, "approvals": approvals, "required": request.required_approvals,
                         "digest": request.digest});
    let result = if !approve {
        transition(
            &mut tx,
            &request,
            Change {
                to: RequestStatus::Rejected,
                what: "rejected",
                detail,
                failure: None,
                notify: Notify::Requester(format!("Your request was rejected: {}", request.summary)),
                audit: (member.actor(), Event::ApprovalsRejected, details),
            },
        )
        .await?;
        Decided::Rejected
    } else if approvals >= i64::from(request.required_approvals) && role_met {
        transition(
            &mut tx,
            &request,
            Change {
                to: RequestStatus::Approved,
                what: "approved",
                detail,
                failure: None,
                notify: Notify::Requester(format!("Your request was approved: {}", request.summary)),
                audit: (member.actor(), Event::ApprovalsApproved, details),
            },
        )
        .await?;
        Decided::Approved
    } else {
        store::add_timeline(&mut *tx, request.id, "approved by one", &detail).await?;
        audit::store::append_in(
            &mut tx,
            &[NewRecord::new(
                &member.actor(),
                Some(member.tenant_id),
                Event::ApprovalsApproved,
                format!("request:{}", request.id),
                outcome::SUCCESS,
            )
            .with_details(details)],
        )
        .await?;
        Decided::Recorded
    };
    tx.commit().await?;
    Ok(result)
}

/// The maker withdraws a pending request.
pub async fn cancel(pool: &PgPool, member: &Member, request_id: Uuid) -> Result<(), ApprovalError> {
    let mut tx = pool.begin().await?;
    let request = store::lock(&mut tx, member.tenant_id, request_id)
        .await?
        .ok_or(ApprovalError::NotFound)?;
    if request.requested_by != member.user.user_id {
        return Err(ApprovalError::NotAllowed(
            "Only the member who filed a request can cancel it.".to_owned(),
        ));
    }
    if request.status != RequestStatus::Pending {
        return Err(ApprovalError::NotPending(request.status));
    }
    transition(
        &mut tx,
        &request,
        Change {
            to: RequestStatus::Cancelled,
            what: "cancelled",
            detail: format!("by {}", member.user.email),
            failure: None,
            notify: Notify::Nobody,
            audit: (member.actor(), Event::ApprovalsCancelled, json!({})),
        },
    )
    .await?;
    tx.commit().await?;
    Ok(())
}
