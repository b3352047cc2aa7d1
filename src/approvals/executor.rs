//! Runs approved actions from the job queue, exactly once, whatever their
//! kind. Jobs are taken with `FOR UPDATE SKIP LOCKED`, one per
//! transaction, so any number of replicas can run them. A request's job
//! stays queued until its action reaches a final outcome: a payout on the
//! rail is read back until it settles (an event from the service wakes the
//! job early), so a failure on the rail ends the request as failed.

use std::time::Duration as StdDuration;

use actix_web::web::Data;
use chrono::{Duration, Utc};
use paydesk_api::ApiError;
use serde_json::json;
use uuid::Uuid;

use super::action::{self, Action, ErasedStep, ExecError};
use super::engine::{self, gate_actor, ApprovalError, Change, FiledAs, Filing, Notify};
use super::model::{self, RequestStatus};
use super::store::{self, ActionRequest};
use crate::access::Member;
use crate::audit::Event;
use crate::startup::AppState;
use crate::web::error::{describe_upstream, PortalError};
use crate::web::form::{Failure, Refusal};

/// How long the runner sleeps when there is nothing to do.
const IDLE: StdDuration = StdDuration::from_millis(500);
const MAX_ATTEMPTS: i32 = 10;
/// How often reminders, escalations and expiries are looked for.
const HOUSEKEEPING_EVERY: StdDuration = StdDuration::from_secs(5);

/// What a run of a job came to.
enum Ran {
    Done,
    Again(StdDuration),
}

#[derive(Debug, thiserror::Error)]
enum RunError {
    #[error(transparent)]
    Exec(#[from] ExecError),
    #[error(transparent)]
    Gate(#[from] ApprovalError),
    #[error(transparent)]
    Portal(#[from] PortalError),
}

impl From<sqlx::Error> for RunError {
    fn from(e: sqlx::Error) -> Self {
        RunError::Exec(ExecError::Db(e))
    }
}

/// Starts the runner on the current runtime.
pub fn start(state: Data<AppState>) {
    tokio::spawn(async move {
        let mut last = std::time::Instant::now();
        loop {
            if last.elapsed() >= HOUSEKEEPING_EVERY {
                last = std::time::Instant::now();
                if let Err(e) = engine::expire_overdue(&state.pool).await {
                    tracing::warn!(error = %e, "expiring requests failed");
                }
                if let Err(e) = nudge(&state).await {
                    tracing::warn!(error = %e, "reminding approvers failed");
                }
            }
            match run_next(&state).await {
                Ok(true) => continue,
                Ok(false) => tokio::time::sleep(IDLE).await,
                Err(e) => {
                    tracing::error!(error = %e, "the job runner failed; retrying");
                    tokio::time::sleep(IDLE).await;
                }
            }
        }
    });
}

/// Requests waiting past their policy's reminder time remind their
/// approvers in the app, once; past the escalation time the backup role is
/// told it may now approve.
pub async fn nudge(state: &AppState) -> Result<(), ApprovalError> {
    for what in [store::Nudge::Reminder, store::Nudge::Escalation] {
        for (id, tenant) in store::due_for(&state.pool, what).await? {
            let Some(request) = store::find(&state.pool, tenant, id).await? else {
                continue;
            };
            let (action, kind) = engine::kind_of(&state.gate, &request)?;
            let policy = engine::policy_of(&state.pool, tenant, action, request.policy_version).await?;
            let members = store::candidates(&state.pool, tenant).await?;
            let (who, message): (Vec<Uuid>, String) = match what {
                store::Nudge::Reminder => (
                    model::eligible(&policy, kind, &request.filed(), &members)
                        .iter()
                        .map(|m| m.user_id)
                        .collect(),
                    format!("Reminder: still waiting for your approval: {}", request.summary),
                ),
                store::Nudge::Escalation => (
                    members
                        .iter()
                        .filter(|m| Some(m.role_name.as_str()) == policy.escalation_role.as_deref())
                        .filter(|m| m.user_id != request.requested_by)
                        .map(|m| m.user_id)
                        .collect(),
                    format!("Escalated to you: you may now approve {}", request.summary),
                ),
            };
            let mut tx = state.pool.begin().await?;
            if !store::claim_nudge(&mut *tx, id, what).await? {
                continue;
            }
            for user in who {
                store::notify(&mut *tx, user, tenant, id, &message).await?;
            }
            let label = match what {
                store::Nudge::Reminder => "reminded",
                store::Nudge::Escalation => "escalated",
            };
            store::add_timeline(&mut *tx, id, label, "").await?;
            tx.commit().await?;
        }
    }
    Ok(())
}

/// Takes and runs one due job; false when none is due.
pub async fn run_next(state: &AppState) -> Result<bool, sqlx::Error> {
    run_due(state, None).await
}

/// Takes one due job (`only` this one, if given) and runs it; false when
/// none is due or it is taken by another runner.
async fn run_due(state: &AppState, only: Option<i64>) -> Result<bool, sqlx::Error> {
    let mut tx = state.pool.begin().await?;
    // The runner skips jobs another runner holds; a caller waiting for one
    // job (`run_now`) waits for its lock instead, and then finds it done.
    let job: Option<(i64, Option<Uuid>, i32)> = match only {
        Some(only) => sqlx::query!(
            "SELECT id, request_id, attempts FROM jobs WHERE done_at IS NULL AND run_at <= now() AND id = $1 \
             ORDER BY run_at, id LIMIT 1 FOR UPDATE",
            only,
        )
        .fetch_optional(&mut *tx)
        .await?
        .map(|j| (j.id, j.request_id, j.attempts)),
        None => sqlx::query!(
            "SELECT id, request_id, attempts FROM jobs WHERE done_at IS NULL AND run_at <= now() \
             ORDER BY run_at, id LIMIT 1 FOR UPDATE SKIP LOCKED",
        )
        .fetch_optional(&mut *tx)
        .await?
        .map(|j| (j.id, j.request_id, j.attempts)),
    };
    let Some((job_id, Some(request_id), attempts)) = job else {
        return Ok(false);
    };
    let tenant: Option<Uuid> =
        sqlx::query_scalar!("SELECT tenant_id FROM action_requests WHERE id = $1", request_id)
            .fetch_optional(&mut *tx)
            .await?;
    let result = match tenant {
        Some(tenant) => run(state, tenant, request_id).await,
        None => Ok(Ran::Done),
    };
    match result {
        Ok(Ran::Done) => {
            sqlx::query!(
                "UPDATE jobs SET done_at = now(), attempts = attempts + 1 WHERE id = $1",
                job_id
            )
            .execute(&mut *tx)
            .await?;
        }
        Ok(Ran::Again(after)) => {
            sqlx::query!(
                "UPDATE jobs SET run_at = now() + $2::interval, attempts = attempts + 1 WHERE id = $1",
                job_id,
                crate::db::interval(Duration::milliseconds(after.as_millis() as i64)),
            )
            .execute(&mut *tx)
            .await?;
        }
        Err(e) if attempts + 1 >= MAX_ATTEMPTS => {
            let reason = format!("gave up after {MAX_ATTEMPTS} attempts: {e}");
            if let Err(e) = give_up(state, request_id, &reason).await {
                tracing::error!(error = %e, %request_id, "marking the request failed failed");
            }
            sqlx::query!(
                "UPDATE jobs SET done_at = now(), attempts = attempts + 1, last_error = $2 WHERE id = $1",
                job_id,
                reason,
            )
            .execute(&mut *tx)
            .await?;
        }
        Err(e) => {
            tracing::warn!(error = %e, %request_id, "job failed; will retry");
            sqlx::query!(
                "UPDATE jobs SET attempts = attempts + 1, last_error = $2, \
                 run_at = now() + make_interval(secs => least(60, 2 ^ attempts)) WHERE id = $1",
                job_id,
                e.to_string(),
            )
            .execute(&mut *tx)
            .await?;
        }
    }
    tx.commit().await?;
    Ok(true)
}

/// Runs one approved request now, in the caller's task, instead of
/// waiting for the runner: for actions approved at filing, so the member
/// sees the outcome on the next page. It takes the job as the runner
/// would (the same row lock), so the action still runs exactly once.
pub async fn run_now(state: &AppState, request_id: Uuid) -> Result<(), sqlx::Error> {
    let job: Option<i64> = sqlx::query_scalar!(
        "SELECT id FROM jobs WHERE request_id = $1 AND done_at IS NULL",
        request_id
    )
    .fetch_optional(&state.pool)
    .await?;
    let Some(job) = job else {
        return Ok(());
    };
    // A run that asks to go again at once (a fresh quote) is given a few
    // tries here; anything slower is left to the runner.
    for _ in 0..3 {
        if !run_due(state, Some(job)).await? {
            break;
        }
    }
    Ok(())
}

/// How submitting an action ended.
pub enum Submitted {
    /// Filed; waits for approvals.
    Waiting(Uuid),
    /// Below the policy's threshold: run at once through the same gate;
    /// the request as it stands after the run.
    Ran(Box<ActionRequest>),
}

/// Files an action and, when the policy lets it run at once, runs it.
pub async fn submit<A: Action>(
    state: &AppState,
    member: &Member,
    filing: Filing<'_, A::Payload>,
) -> Result<Submitted, ApprovalError> {
    match engine::file::<A>(state, member, filing).await? {
        FiledAs::Waiting(id) => Ok(Submitted::Waiting(id)),
        FiledAs::Approved(id) => {
            run_now(state, id).await?;
            let request = store::find(&state.pool, member.tenant_id, id)
                .await?
                .ok_or(ApprovalError::NotFound)?;
            Ok(Submitted::Ran(Box::new(request)))
        }
    }
}

/// Where a member's money action stands after they asked for it.
pub enum Gated {
    /// Not confirmed yet: what will happen, for the confirmation page.
    Confirm(engine::Preview),
    /// Waits for approval, or is still being carried out: its request (or
    /// the same one already waiting), whose page shows how it goes.
    Waiting(Uuid),
    /// Ran at once and succeeded: the request as it ended.
    Done(Box<ActionRequest>),
}

/// The one way a member's action enters the gate from a page: previewed
/// until confirmed, then filed, and run at once when the policy lets it.
/// A refusal (or a run that failed) comes back in the user's terms.
pub async fn gate<A: Action>(
    state: &AppState,
    member: &Member,
    filing: Filing<'_, A::Payload>,
    confirmed: bool,
) -> Result<Gated, Failure> {
    let outcome = if confirmed {
        submit::<A>(state, member, filing).await.map(|s| match s {
            Submitted::Waiting(id) => Gated::Waiting(id),
            Submitted::Ran(request) => Gated::Done(request),
        })
    } else {
        engine::preview::<A>(state, member, &filing)
            .await
            .map(Gated::Confirm)
    };
    match outcome {
        Ok(Gated::Done(request)) if request.status == RequestStatus::Failed => Err(Refusal::form(
            request
                .failure_reason
                .unwrap_or_else(|| "The payments service refused it; nothing moved.".to_owned()),
        )
        .into()),
        // Still running (the job runner took it first): its page shows how it goes.
        Ok(Gated::Done(request)) if request.status != RequestStatus::Executed => {
            Ok(Gated::Waiting(request.id))
        }
        Ok(gated) => Ok(gated),
        Err(ApprovalError::Duplicate(existing)) => Ok(Gated::Waiting(existing)),
        Err(ApprovalError::Db(e)) => Err(e.into()),
        Err(e) => Err(Refusal::form(e.to_string()).into()),
    }
}

async fn give_up(state: &AppState, request_id: Uuid, reason: &str) -> Result<(), ApprovalError> {
    let tenant: Option<Uuid> =
        sqlx::query_scalar!("SELECT tenant_id FROM action_requests WHERE id = $1", request_id)
            .fetch_optional(&state.pool)
            .await?;
    let Some(tenant) = tenant else {
        return Ok(());
    };
    finish(state, tenant, request_id, Ended::Failed(reason.to_owned())).await
}

enum Ended {
    Executed(String),
    Failed(String),
}

/// Ends a running request with its final outcome, told to the requester
/// and the approvers.
async fn finish(state: &AppState, tenant: Uuid, request_id: Uuid, ended: Ended) -> Result<(), ApprovalError> {
    let mut tx = state.pool.begin().await?;
    let request = store::lock(&mut tx, tenant, request_id)
        .await?
        .ok_or(ApprovalError::NotFound)?;
    if !matches!(request.status, RequestStatus::Approved | RequestStatus::Executing) {
        return Ok(());
    }
    let change = match ended {
        Ended::Executed(detail) => Change {
            to: RequestStatus::Executed,
            what: "carried out",
            notify: Notify::RequesterAndApprovers(format!("Carried out: {}. {detail}", request.summary)),
            audit: (
                gate_actor(),
                Event::ApprovalsExecuted,
                json!({"detail": detail, "reference": request.upstream_reference}),
            ),
            detail,
            failure: None,
        },
        Ended::Failed(reason) => Change {
            to: RequestStatus::Failed,
            what: "failed",
            notify: Notify::RequesterAndApprovers(format!("Failed: {}. {reason}", request.summary)),
            audit: (
                gate_actor(),
                Event::ApprovalsFailed,
                json!({"reason": reason, "reference": request.upstream_reference}),
            ),
            detail: reason.clone(),
            failure: Some(reason),
        },
    };
    engine::transition(&mut tx, &request, change).await?;
    tx.commit().await?;
    Ok(())
}

async fn run(state: &AppState, tenant: Uuid, request_id: Uuid) -> Result<Ran, RunError> {
    let Some(mut request) = store::find(&state.pool, tenant, request_id).await? else {
        return Ok(Ran::Done);
    };
    if !matches!(request.status, RequestStatus::Approved | RequestStatus::Executing) {
        return Ok(Ran::Done);
    }
    let (action, _) = engine::kind_of(&state.gate, &request)?;
    if request.status == RequestStatus::Approved {
        let mut tx = state.pool.begin().await?;
        engine::transition(
            &mut tx,
            &request,
            Change {
                to: RequestStatus::Executing,
                what: "executing",
                detail: format!("reference {}", request.upstream_reference),
                failure: None,
                notify: Notify::Nobody,
                audit: (gate_actor(), Event::ApprovalsExecuting, json!({})),
            },
        )
        .await?;
        tx.commit().await?;
        request.status = RequestStatus::Executing;
    }
    let client = if !action.needs_upstream() {
        None
    } else {
        match state
            .upstreams
            .for_tenant(&state.pool, &state.key, &state.audit, tenant, gate_actor())
            .await
        {
            Ok(c) => Some(c),
            Err(PortalError::NoConnection) => {
                let reason = "the tenant no longer has an API connection".to_owned();
                finish(state, tenant, request.id, Ended::Failed(reason)).await?;
                return Ok(Ran::Done);
            }
            Err(e) => return Err(e.into()),
        }
    };
    let policy = engine::policy_of(&state.pool, tenant, action, request.policy_version).await?;
    let step = match action.execute(state, client.as_ref(), &request, &policy).await {
        Ok(step) => step,
        // The service refused: nothing moved, and asking again won't help.
        Err(ExecError::Api(
            e @ ApiError::Problem {
                status: 400..=499, ..
            },
        )) => ErasedStep::Failed(describe_upstream(&e).0),
        Err(e) => return Err(e.into()),
    };
    match step {
        ErasedStep::Done(detail) => finish(state, tenant, request.id, Ended::Executed(detail)).await?,
        ErasedStep::Failed(reason) => finish(state, tenant, request.id, Ended::Failed(reason)).await?,
        ErasedStep::Again(after) => return Ok(Ran::Again(after)),
        ErasedStep::SendBack { payload, why } => send_back(state, &request, payload, why).await?,
    }
    Ok(Ran::Done)
}

/// The approved terms can't be kept: the request goes back for approval
/// with its new payload and digest; the approvals given are void.
async fn send_back(
    state: &AppState,
    request: &ActionRequest,
    payload: serde_json::Value,
    why: String,
) -> Result<(), ApprovalError> {
    let (action, kind) = engine::kind_of(&state.gate, request)?;
    let facts = action
        .describe(&payload)
        .map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
    let digest = action::digest(kind, &facts, &payload);
    let policy = engine::policy_of(&state.pool, request.tenant_id, action, request.policy_version).await?;
    let members = store::candidates(&state.pool, request.tenant_id).await?;
    let approvers: Vec<Uuid> = model::eligible(&policy, kind, &request.filed(), &members)
        .iter()
        .map(|m| m.user_id)
        .collect();
    let mut tx = state.pool.begin().await?;
    let request = store::lock(&mut tx, request.tenant_id, request.id)
        .await?
        .ok_or(ApprovalError::NotFound)?;
    let expires_at = Utc::now() + Duration::seconds(policy.expires_after_secs as i64);
    store::replace_payload(&mut *tx, request.id, &payload, &digest, expires_at).await?;
    store::clear_decisions(&mut *tx, request.id).await?;
    store::notify(
        &mut *tx,
        request.requested_by,
        request.tenant_id,
        request.id,
        &format!("{why}; your request needs approval again: {}", request.summary),
    )
    .await?;
    engine::transition(
        &mut tx,
        &request,
        Change {
            to: RequestStatus::Pending,
            what: "back for approval",
            detail: why.clone(),
            failure: None,
            notify: Notify::Users(
                approvers,
                format!("Needs your approval again ({why}): {}", request.summary),
            ),
            audit: (
                gate_actor(),
                Event::ApprovalsSentBack,
                json!({"why": why, "digest": digest}),
            ),
        },
    )
    .await?;
    tx.commit().await?;
    Ok(())
}
