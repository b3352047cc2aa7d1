//! Decisions on a request and the one statement that moves its status.

use chrono::{DateTime, Utc};
use sqlx::{PgExecutor, PgPool, Postgres, Transaction};
use uuid::Uuid;

use crate::audit::store::staged_rows;
use crate::audit::NewRecord;

use super::requests::ActionRequest;
use crate::access::permissions::Permission;
use crate::approvals::model::RequestStatus;

#[derive(Debug, Clone)]
pub struct Decision {
    pub approver_email: String,
    pub decision: String,
    pub comment: String,
    pub created_at: DateTime<Utc>,
}

pub async fn decisions(pool: &PgPool, request: Uuid) -> Result<Vec<Decision>, sqlx::Error> {
    sqlx::query_as!(
        Decision,
        "SELECT u.email AS approver_email, d.decision, d.comment, d.created_at \
         FROM approval_decisions d JOIN users u ON u.id = d.approver_id WHERE d.request_id = $1 ORDER BY d.created_at",
        request,
    )
    .fetch_all(pool)
    .await
}

/// Records a decision on what `digest` describes: the approvals of that
/// digest now, counting this one, or None when this person already
/// decided. Counted in the statement after the request's lock was taken,
/// so a decision that committed while it was awaited is counted.
pub async fn add_decision(
    tx: &mut Transaction<'_, Postgres>,
    request: &ActionRequest,
    approver: Uuid,
    (decision, comment): (&str, &str),
    (permission, backup_role): (Permission, Option<&str>),
) -> Result<Option<i64>, sqlx::Error> {
    // Earlier approvals count only while their approvers still may give
    // them: removed, disabled or demoted, theirs no longer counts.
    let row = sqlx::query!(
        r#"WITH added AS (INSERT INTO approval_decisions (request_id, approver_id, decision, comment, digest)
                          VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING RETURNING decision)
           SELECT (SELECT count(*) FROM added) AS "added!",
                  (SELECT count(*) FROM approval_decisions d
                   JOIN memberships m ON m.user_id = d.approver_id AND m.tenant_id = $6
                   JOIN users u ON u.id = d.approver_id AND u.disabled_at IS NULL
                   JOIN roles r ON r.id = m.role_id
                   WHERE d.request_id = $1 AND d.decision = 'approve' AND d.digest = $5
                     AND (r.name = $8 OR EXISTS (SELECT 1 FROM role_permissions p
                                                 WHERE p.role_id = r.id AND p.permission = $7)))
                  + (SELECT count(*) FROM added WHERE decision = 'approve') AS "approvals!""#,
        request.id,
        approver,
        decision,
        comment,
        request.digest,
        request.tenant_id,
        permission.name(),
        backup_role,
    )
    .fetch_one(&mut **tx)
    .await?;
    Ok((row.added == 1).then_some(row.approvals))
}

/// Forgets the approvals of a request sent back for approval.
pub async fn clear_decisions<'e>(db: impl PgExecutor<'e>, request: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query!("DELETE FROM approval_decisions WHERE request_id = $1", request)
        .execute(db)
        .await?;
    Ok(())
}

/// A request's move from one status to another, with the timeline entry
/// that says so and the members told of it in the app.
pub struct Move<'a> {
    pub from: RequestStatus,
    pub to: RequestStatus,
    pub failure: Option<&'a str>,
    pub what: &'a str,
    pub detail: &'a str,
    pub tell: &'a [Uuid],
    pub message: &'a str,
    /// Queues the request's run (it was approved).
    pub queue: bool,
    /// The audit records of the move, staged with it.
    pub audit: &'a [NewRecord],
}

/// Makes a move in one statement; false (and nothing written) when the
/// request was no longer at `from` (someone else moved it first).
pub async fn move_status<'e>(db: impl PgExecutor<'e>, id: Uuid, m: Move<'_>) -> Result<bool, sqlx::Error> {
    let moved = sqlx::query!(
        r#"WITH moved AS (UPDATE action_requests SET status = $3, failure_reason = COALESCE($4, failure_reason),
                                                updated_at = now()
                          WHERE id = $1 AND status = $2 RETURNING id, tenant_id),
              noted AS (INSERT INTO request_timeline (request_id, what, detail) SELECT id, $5, $6 FROM moved),
              told AS (INSERT INTO notifications (user_id, tenant_id, request_id, message)
                       SELECT u, m.tenant_id, m.id, $8 FROM moved m
                       CROSS JOIN UNNEST($7::uuid[]) WITH ORDINALITY AS n(u, i) ORDER BY i),
              queued AS (INSERT INTO jobs (kind, request_id, run_at) SELECT 'execute', id, now() FROM moved WHERE $9),
              audited AS (SELECT stage_audit($10) FROM moved)
           SELECT (SELECT count(*) FROM moved) AS "moved!", (SELECT count(*) FROM audited) AS "audited!""#,
        id,
        m.from as RequestStatus,
        m.to as RequestStatus,
        m.failure,
        m.what,
        m.detail,
        m.tell,
        m.message,
        m.queue,
        staged_rows(m.audit),
    )
    .fetch_one(db)
    .await?;
    Ok(moved.moved == 1)
}
