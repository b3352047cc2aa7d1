//! What falls due while a request waits: reminders, escalations to the
//! backup role, and expiry.

use super::lifecycle::{gate_actor, kind_of, policy_of, transition, ApprovalError, Change, Notify};
use super::model::RequestStatus;
use super::store::{self, ActionRequest};
use crate::audit::Event;
use crate::state::AppState;
use chrono::Utc;
use serde_json::json;
use sqlx::{PgPool, Postgres, Transaction};
use uuid::Uuid;

pub(super) async fn expire_locked(
    tx: &mut Transaction<'_, Postgres>,
    request: &ActionRequest,
) -> Result<(), ApprovalError> {
    transition(
        tx,
        request,
        Change {
            to: RequestStatus::Expired,
            what: "expired",
            detail: "no decision in time".to_owned(),
            failure: None,
            notify: Notify::Requester(format!(
                "Your request expired without a decision: {}",
                request.summary
            )),
            audit: (gate_actor(), Event::ApprovalsExpired, json!({})),
        },
    )
    .await
}

/// Expires pending requests past their deadline, each under its row lock,
/// so an approval racing the expiry either wins before it or is refused.
pub async fn expire_overdue(pool: &PgPool) -> Result<(), ApprovalError> {
    for (id, tenant) in store::overdue(pool).await? {
        let mut tx = pool.begin().await?;
        if let Some(request) = store::lock(&mut tx, tenant, id).await? {
            if request.status == RequestStatus::Pending && Utc::now() >= request.expires_at {
                expire_locked(&mut tx, &request).await?;
            }
        }
        tx.commit().await?;
    }
    Ok(())
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
            let (action, _) = kind_of(&state.gate, &request)?;
            let policy = policy_of(&state.pool, tenant, action, request.policy_version).await?;
            let members = store::candidates(&state.pool, tenant).await?;
            let (who, message): (Vec<Uuid>, String) = match what {
                store::Nudge::Reminder => (
                    members
                        .eligible(&policy, action.quorum(), &request.filed())
                        .iter()
                        .map(|m| m.user_id)
                        .collect(),
                    format!("Reminder: still waiting for your approval: {}", request.summary),
                ),
                store::Nudge::Escalation => (
                    members
                        .members
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
            store::notify(&mut *tx, &who, tenant, id, &message).await?;
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
