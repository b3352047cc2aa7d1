//! A request's status changes: `transition`, the one function that
//! changes it (with its timeline entry, notices and audit record in the
//! caller's transaction), the gate's errors, and the policy and kind a
//! request was filed under.

use super::action::{self, ErasedAction, Registry};
use super::model::{Kind, Policy, RequestStatus};
use super::store::{self, ActionRequest};
use crate::audit::{outcome, Actor, Event, NewRecord};
use serde_json::Value;
use sqlx::{PgPool, Postgres, Transaction};
use uuid::Uuid;

#[derive(Debug, thiserror::Error)]
pub enum ApprovalError {
    #[error("{0}")]
    NotAllowed(String),
    #[error("{0}")]
    NoEligibleApprovers(String),
    #[error("a request for the same action and target is already waiting for approval")]
    Duplicate(Uuid),
    #[error("this request is {0} and can no longer be decided")]
    NotPending(RequestStatus),
    #[error("you already decided on this request")]
    AlreadyDecided,
    #[error("this request changed since you opened it; review it again before deciding")]
    Changed,
    #[error("no such request")]
    NotFound,
    #[error(transparent)]
    UnknownKind(#[from] action::UnknownKind),
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

/// The actor of what the gate does on its own (runs, expiries).
pub fn gate_actor() -> Actor {
    Actor {
        email: "approval gate".to_owned(),
        ..Actor::default()
    }
}

/// The version a request was filed under, or the kind's default. Saved
/// versions count from 1: version 0 is the default, read without a
/// statement (every run of a job asks).
pub async fn policy_of(
    pool: &PgPool,
    tenant: Uuid,
    action: &dyn ErasedAction,
    version: i32,
) -> Result<Policy, sqlx::Error> {
    if version == 0 {
        return Ok(action.default_policy());
    }
    Ok(store::saved_policy(pool, tenant, action.kind(), version)
        .await?
        .unwrap_or_else(|| action.default_policy()))
}

/// The policy new requests are filed under.
pub async fn policy_in_force(
    pool: &PgPool,
    tenant: Uuid,
    action: &dyn ErasedAction,
) -> Result<Policy, sqlx::Error> {
    Ok(store::latest_policy(pool, tenant, action.kind())
        .await?
        .unwrap_or_else(|| action.default_policy()))
}

/// Who is told of a change.
pub enum Notify {
    Nobody,
    Requester(String),
    /// The requester and everyone who approved: an outcome they all own.
    RequesterAndApprovers(String),
    Users(Vec<Uuid>, String),
}

/// A status change with what is written alongside it.
pub struct Change {
    pub to: RequestStatus,
    /// Timeline entry: what happened, and a detail.
    pub what: &'static str,
    pub detail: String,
    pub failure: Option<String>,
    pub notify: Notify,
    /// The audit record: who, its event, and details.
    pub audit: (Actor, Event, Value),
}

/// Changes a request's status, and writes the timeline entry, the notices
/// and the audit record, all in `tx`. Refused when the move isn't allowed
/// or the request is no longer where the caller saw it.
pub async fn transition(
    tx: &mut Transaction<'_, Postgres>,
    request: &ActionRequest,
    change: Change,
) -> Result<(), ApprovalError> {
    if !request.status.can_move_to(change.to) {
        return Err(ApprovalError::NotPending(request.status));
    }
    // Told with the move where the members are known; the approvers are
    // read in a statement of their own.
    let requester = [request.requested_by];
    let (tell, message): (&[Uuid], &str) = match &change.notify {
        Notify::Nobody | Notify::RequesterAndApprovers(_) => (&[], ""),
        Notify::Requester(m) => (&requester, m),
        Notify::Users(users, m) => (users, m),
    };
    let (actor, action, details) = change.audit;
    let result = if change.to == RequestStatus::Failed {
        outcome::FAILURE
    } else {
        outcome::SUCCESS
    };
    let record = NewRecord::new(
        &actor,
        Some(request.tenant_id),
        action,
        format!("request:{}", request.id),
        result,
    )
    .with_details(details);
    let moved = store::Move {
        from: request.status,
        to: change.to,
        failure: change.failure.as_deref(),
        what: change.what,
        detail: &change.detail,
        tell,
        message,
        // Approved is queued to run in the same statement: nothing can
        // approve a request without its run being owed.
        queue: change.to == RequestStatus::Approved,
        audit: std::slice::from_ref(&record),
    };
    if !store::move_status(&mut **tx, request.id, moved).await? {
        return Err(ApprovalError::Changed);
    }
    if let Notify::RequesterAndApprovers(m) = &change.notify {
        store::notify_requester_and_approvers(&mut **tx, request.id, m).await?;
    }
    Ok(())
}

/// Marks the approved requests among `requests` as being carried out, in
/// one statement for all: the move, its timeline entry and its audit
/// record, as `transition` writes them for one. A runner starts what its
/// claim took together, so a busy gate pays one statement per claim
/// here, not a transaction per request. One no longer approved in the
/// database is left as it is, and still approved here: its run refuses to
/// go on, and the next claim reads it again.
pub async fn start_executing<'r>(
    pool: &PgPool,
    requests: impl Iterator<Item = &'r mut ActionRequest>,
) -> Result<(), sqlx::Error> {
    let approved: Vec<&mut ActionRequest> =
        requests.filter(|r| r.status == RequestStatus::Approved).collect();
    if approved.is_empty() {
        return Ok(());
    }
    let starts: Vec<store::Start> = approved
        .iter()
        .map(|r| store::Start {
            id: r.id,
            detail: format!("reference {}", r.upstream_reference),
            record: NewRecord::new(
                &gate_actor(),
                Some(r.tenant_id),
                Event::ApprovalsExecuting,
                format!("request:{}", r.id),
                outcome::SUCCESS,
            ),
        })
        .collect();
    let moved = store::start_all(pool, &starts).await?;
    for request in approved.into_iter().filter(|r| moved.contains(&r.id)) {
        request.status = RequestStatus::Executing;
    }
    Ok(())
}

/// The kind of a stored request, from the registry.
pub fn kind_of<'r>(
    registry: &'r Registry,
    request: &ActionRequest,
) -> Result<(&'r dyn ErasedAction, Kind), ApprovalError> {
    let action = registry.get(&request.kind)?;
    Ok((action, action.kind()))
}
