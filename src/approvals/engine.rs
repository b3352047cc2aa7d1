//! Filing, deciding and cancelling action requests. Each decision takes the
//! request's row lock, so however many approvers click at once, the request
//! turns approved once and one job is queued to run it.

use chrono::{Duration, Utc};
use rust_decimal::Decimal;
use serde_json::json;
use sqlx::PgPool;
use uuid::Uuid;

use super::model::{self, ActionKind};
use super::store::{self, NewRequest};
use crate::access::Member;
use crate::audit::{self, outcome, NewRecord};

#[derive(Debug, thiserror::Error)]
pub enum ApprovalError {
    #[error("{0}")]
    NotAllowed(String),
    #[error("{0}")]
    NoEligibleApprovers(String),
    #[error("a request for the same action and target is already waiting for approval")]
    Duplicate(Uuid),
    #[error("this request is {0} and can no longer be decided")]
    NotPending(String),
    #[error("you already decided on this request")]
    AlreadyDecided,
    #[error("no such request")]
    NotFound,
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

/// What a new request carries.
pub struct Filing<'a> {
    pub kind: ActionKind,
    pub target: &'a str,
    pub summary: &'a str,
    pub payload: serde_json::Value,
    pub amount: Decimal,
}

/// Files a request under the policy in force, after checking that the
/// maker may request it and that enough other members could approve it.
pub async fn file(pool: &PgPool, member: &Member, f: Filing<'_>) -> Result<Uuid, ApprovalError> {
    if !member.can(f.kind.request_permission()) {
        let hint = if member.can(f.kind.approve_permission()) {
            " Approvers check requests; they don't file them."
        } else {
            ""
        };
        return Err(ApprovalError::NotAllowed(format!(
            "Filing needs the '{}' permission.{hint}",
            f.kind.request_permission()
        )));
    }
    let policy = store::current_policy(pool, member.tenant_id, f.kind).await?;
    let needed = policy.required_for(f.amount);
    let members = store::candidates(pool, member.tenant_id).await?;
    let eligible = model::eligible(
        &policy,
        f.kind,
        &model::Filed {
            by: member.user.user_id,
            at: Utc::now(),
        },
        &members,
    );
    if (eligible.len() as i32) < needed {
        return Err(ApprovalError::NoEligibleApprovers(
            model::missing_approvers_message(&policy, f.kind, needed, eligible.len()),
        ));
    }
    let id = Uuid::new_v4();
    let mut tx = pool.begin().await?;
    let inserted = store::insert_request(
        &mut tx,
        &NewRequest {
            id,
            tenant: member.tenant_id,
            kind: f.kind,
            target: f.target,
            summary: f.summary,
            payload: f.payload,
            amount: f.amount,
            requested_by: member.user.user_id,
            policy_version: policy.version,
            required_approvals: needed,
            expires_at: Utc::now() + Duration::seconds(policy.expires_after_secs as i64),
        },
    )
    .await?;
    if let Err(existing) = inserted {
        return Err(ApprovalError::Duplicate(existing));
    }
    store::add_timeline(&mut *tx, id, "requested", &format!("by {}", member.user.email)).await?;
    for approver in &eligible {
        store::notify(
            &mut *tx,
            approver.user_id,
            member.tenant_id,
            id,
            &format!("Waiting for your approval: {}", f.summary),
        )
        .await?;
    }
    audit::store::append_in(
        &mut tx,
        &[NewRecord::new(
            &member.actor(),
            Some(member.tenant_id),
            "approvals.requested",
            format!("request:{id}"),
            outcome::SUCCESS,
        )
        .with_details(
            json!({"kind": f.kind.as_str(), "summary": f.summary, "policy_version": policy.version,
                                 "required_approvals": needed}),
        )],
    )
    .await?;
    tx.commit().await?;
    Ok(id)
}

/// What a decision led to.
#[derive(Debug, PartialEq, Eq)]
pub enum Decided {
    /// Recorded; more approvals are needed.
    Recorded,
    /// The last approval: the action is queued to run.
    Approved,
    Rejected,
}

/// Approves or rejects with a comment.
pub async fn decide(
    pool: &PgPool,
    member: &Member,
    request_id: Uuid,
    approve: bool,
    comment: &str,
) -> Result<Decided, ApprovalError> {
    let mut tx = pool.begin().await?;
    let request = store::lock(&mut tx, member.tenant_id, request_id)
        .await?
        .ok_or(ApprovalError::NotFound)?;
    let now = Utc::now();
    if request.status == "pending" && now >= request.expires_at {
        store::set_status(&mut *tx, request.id, "expired", None).await?;
        store::add_timeline(&mut *tx, request.id, "expired", "no decision in time").await?;
        tx.commit().await?;
        return Err(ApprovalError::NotPending("expired".to_owned()));
    }
    if request.status != "pending" {
        return Err(ApprovalError::NotPending(request.status));
    }
    let kind = request.kind();
    let policy = store::policy_version(pool, member.tenant_id, kind, request.policy_version).await?;
    let me = store::candidates(pool, member.tenant_id)
        .await?
        .into_iter()
        .find(|c| c.user_id == member.user.user_id)
        .ok_or_else(|| {
            ApprovalError::NotAllowed("You are not an active member of this tenant.".to_owned())
        })?;
    let escalated = policy
        .escalation_after_secs
        .is_some_and(|secs| now >= request.created_at + Duration::seconds(secs as i64));
    model::may_approve(&policy, kind, &me, &request.filed(), escalated).map_err(ApprovalError::NotAllowed)?;
    let decision = if approve { "approve" } else { "reject" };
    if !store::add_decision(&mut tx, request.id, me.user_id, decision, comment.trim()).await? {
        return Err(ApprovalError::AlreadyDecided);
    }
    let approvals = request.approvals + i64::from(approve);
    let result = if !approve {
        store::set_status(&mut *tx, request.id, "rejected", None).await?;
        Decided::Rejected
    } else if approvals >= i64::from(request.required_approvals) {
        store::set_status(&mut *tx, request.id, "approved", None).await?;
        store::enqueue(&mut *tx, "execute", request.id, now).await?;
        Decided::Approved
    } else {
        Decided::Recorded
    };
    let what = match result {
        Decided::Recorded => "approved by one",
        Decided::Approved => "approved",
        Decided::Rejected => "rejected",
    };
    let detail = if comment.trim().is_empty() {
        format!("by {}", me.email)
    } else {
        format!("by {}: {}", me.email, comment.trim())
    };
    store::add_timeline(&mut *tx, request.id, what, &detail).await?;
    if result != Decided::Recorded {
        store::notify(
            &mut *tx,
            request.requested_by,
            member.tenant_id,
            request.id,
            &format!("Your request was {what}: {}", request.summary),
        )
        .await?;
    }
    audit::store::append_in(
        &mut tx,
        &[NewRecord::new(
            &member.actor(),
            Some(member.tenant_id),
            if approve { "approvals.approved" } else { "approvals.rejected" },
            format!("request:{}", request.id),
            outcome::SUCCESS,
        )
        .with_details(json!({"comment": comment.trim(), "approvals": approvals, "required": request.required_approvals}))],
    )
    .await?;
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
    if request.status != "pending" {
        return Err(ApprovalError::NotPending(request.status));
    }
    store::set_status(&mut *tx, request.id, "cancelled", None).await?;
    store::add_timeline(
        &mut *tx,
        request.id,
        "cancelled",
        &format!("by {}", member.user.email),
    )
    .await?;
    audit::store::append_in(
        &mut tx,
        &[NewRecord::new(
            &member.actor(),
            Some(member.tenant_id),
            "approvals.cancelled",
            format!("request:{}", request.id),
            outcome::SUCCESS,
        )],
    )
    .await?;
    tx.commit().await?;
    Ok(())
}
