//! Running one claimed request: its kind carries it out with the saved
//! progress, and the step it returns ends it (carried out, failed), reads
//! it back later, or sends it back to the approvers.

use super::action::{self, Concerns, ErasedAction, ErasedStep, ExecError, Registry};
use super::lifecycle::{
    gate_actor, kind_of, policy_of, start_executing, transition, ApprovalError, Change, Notify,
};
use super::model::{Kind, Policy, RequestStatus};
use super::store::{self, ActionRequest, Claimed, Settled, Take};
use crate::audit::Event;
use crate::state::AppState;
use crate::web::error::{describe_upstream, PortalError};
use chrono::{DateTime, Duration, Utc};
use paydesk_api::ApiError;
use serde_json::json;
use sqlx::PgPool;
use std::time::Duration as StdDuration;
use uuid::Uuid;

/// A job whose run failed this many times in a row is given up: its
/// request ends as failed.
const MAX_ATTEMPTS: i32 = 10;

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

/// Takes due jobs and runs them at once, each under its job's row lock,
/// held until all have run; how many it took (0: none is due, or another
/// runner holds them).
pub(super) async fn run_due(state: &AppState, take: Take) -> Result<usize, sqlx::Error> {
    let mut tx = state.pool.begin().await?;
    let jobs = store::claim_jobs(&mut *tx, take).await?;
    if jobs.is_empty() {
        return Ok(0);
    }
    let ids: Vec<Uuid> = jobs.iter().filter_map(|j| j.request_id).collect();
    let mut requests = store::find_many(&mut *tx, None, &ids).await?;
    // Failing, the claim is given up whole (its jobs stay due, untouched)
    // and made again later, as when the claim itself fails.
    start_executing(&state.pool, requests.values_mut()).await?;
    let runs = jobs.iter().map(|job| {
        let request = job.request_id.and_then(|id| requests.remove(&id));
        run_job(state, job, request)
    });
    let settled = futures_util::future::join_all(runs).await;
    store::settle_jobs(&mut *tx, &settled).await?;
    tx.commit().await?;
    Ok(jobs.len())
}

/// Runs one claimed job; how it leaves the job.
async fn run_job(state: &AppState, job: &Claimed, request: Option<ActionRequest>) -> Settled {
    let connection = job.connection_id.zip(job.connection_updated_at);
    let result = match request {
        Some(request) => run(state, request, connection).await,
        None => Ok(Ran::Done),
    };
    let settled = |done, after, attempts, error| Settled {
        job: job.id,
        done,
        after,
        attempts,
        error,
    };
    match result {
        Ok(Ran::Done) => settled(true, None, job.attempts + 1, None),
        // A run that got on counts no failure: `attempts` counts failed
        // runs in a row, so a payout read back many times on the rail is
        // not given up on at its first failed read.
        Ok(Ran::Again(after)) => settled(false, Some(after), 0, None),
        Err(e) if job.attempts + 1 >= MAX_ATTEMPTS => {
            let reason = format!("gave up after {MAX_ATTEMPTS} attempts: {e}");
            if let Some(request_id) = job.request_id {
                if let Err(e) = give_up(state, request_id, &reason).await {
                    tracing::error!(error = %e, %request_id, "marking the request failed failed");
                }
            }
            settled(true, None, job.attempts + 1, Some(reason))
        }
        Err(e) => {
            tracing::warn!(error = %e, request_id = ?job.request_id, "job failed; will retry");
            let backoff = StdDuration::from_secs(60.min(1 << job.attempts.clamp(0, 6)));
            settled(false, Some(backoff), job.attempts + 1, Some(e.to_string()))
        }
    }
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
        if run_due(state, Take::Only(job)).await? == 0 {
            break;
        }
    }
    Ok(())
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
    transition(&mut tx, &request, change).await?;
    tx.commit().await?;
    Ok(())
}

async fn run(
    state: &AppState,
    request: ActionRequest,
    connection: Option<(Uuid, DateTime<Utc>)>,
) -> Result<Ran, RunError> {
    let tenant = request.tenant_id;
    if !matches!(request.status, RequestStatus::Approved | RequestStatus::Executing) {
        return Ok(Ran::Done);
    }
    // Still approved: something else moved it after the claim read it,
    // which nothing but a run should; the next run reads it again.
    if request.status == RequestStatus::Approved {
        return Err(ExecError::Internal(format!(
            "request {} was no longer approved when its run began",
            request.id
        ))
        .into());
    }
    // The kind, the client and the policy are loaded once here and passed
    // on: the step that settles the run reads none of them again.
    let (action, kind) = kind_of(&state.gate, &request)?;
    let client = if !action.needs_upstream() {
        None
    } else {
        let client = match connection {
            Some(connection) => {
                state
                    .upstreams
                    .for_connection(
                        &state.pool,
                        &state.key,
                        &state.audit,
                        tenant,
                        connection,
                        gate_actor(),
                    )
                    .await
            }
            None => Err(PortalError::NoConnection),
        };
        match client {
            Ok(c) => Some(c),
            Err(PortalError::NoConnection) => {
                let reason = "the tenant no longer has an API connection".to_owned();
                finish(state, tenant, request.id, Ended::Failed(reason)).await?;
                return Ok(Ran::Done);
            }
            Err(e) => return Err(e.into()),
        }
    };
    let policy = policy_of(&state.pool, tenant, action, request.policy_version).await?;
    let loaded = Loaded { action, kind, policy };
    let step = match action
        .execute(state, client.as_ref(), &request, &loaded.policy)
        .await
    {
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
        ErasedStep::SendBack { payload, why } => send_back(state, &request, &loaded, payload, why).await?,
    }
    Ok(Ran::Done)
}

/// What a run loaded for its request: its kind and the policy it was
/// filed under.
struct Loaded<'a> {
    action: &'a dyn ErasedAction,
    kind: Kind,
    policy: Policy,
}

/// The approved terms can't be kept: the request goes back for approval
/// with its new payload and digest; the approvals given are void.
async fn send_back(
    state: &AppState,
    request: &ActionRequest,
    loaded: &Loaded<'_>,
    payload: serde_json::Value,
    why: String,
) -> Result<(), ApprovalError> {
    let Loaded { action, kind, policy } = loaded;
    let facts = action
        .describe(&payload)
        .map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
    let digest = action::digest(*kind, &facts, &payload);
    let members = store::candidates(&state.pool, request.tenant_id).await?;
    let approvers: Vec<Uuid> = members
        .eligible(policy, action.quorum(), &request.filed())
        .iter()
        .map(|m| m.user_id)
        .collect();
    let mut tx = state.pool.begin().await?;
    let request = store::lock(&mut tx, request.tenant_id, request.id)
        .await?
        .ok_or(ApprovalError::NotFound)?;
    let expires_at = Utc::now() + Duration::seconds(policy.expires_after_secs as i64);
    store::replace_payload(&mut *tx, request.id, &payload, &digest, expires_at).await?;
    store::announce(&mut *tx, policy.first_due(request.created_at).min(expires_at)).await?;
    store::clear_decisions(&mut *tx, request.id).await?;
    store::notify(
        &mut *tx,
        &[request.requested_by],
        request.tenant_id,
        request.id,
        &format!("{why}; your request needs approval again: {}", request.summary),
    )
    .await?;
    transition(
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

/// A service event, told to the requests it is about: each kind says
/// which of its requests (`Action::concerns`); the event is noted on its
/// timeline and its run woken to read the outcome back. Safe to run again
/// for the same event (a replay).
pub async fn hear(
    pool: &PgPool,
    gate: &Registry,
    tenant: Uuid,
    event: &str,
    data: &serde_json::Value,
) -> Result<(), sqlx::Error> {
    for (kind, concerns) in gate.concerned(event, data) {
        let request = match &concerns {
            Concerns::Progress(key, id) => store::by_progress_id(pool, tenant, kind, (key, id)).await?,
            Concerns::Reference(reference) => store::by_reference(pool, tenant, kind, reference).await?,
        };
        if let Some(id) = request {
            store::note_event(pool, id, event).await?;
        }
    }
    Ok(())
}
