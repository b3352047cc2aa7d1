//! A request's timeline, the notices its people receive, and the reminders,
//! escalations and expiries that fall due.

use chrono::{DateTime, Utc};
use sqlx::{PgExecutor, PgPool};
use uuid::Uuid;

use crate::approvals::model::Policy;

/// Pending requests past their deadline: (request, tenant).
pub async fn overdue(pool: &PgPool) -> Result<Vec<(Uuid, Uuid)>, sqlx::Error> {
    let rows = sqlx::query!(
        "SELECT id, tenant_id FROM action_requests WHERE status = 'pending' AND expires_at <= now() LIMIT 100",
    )
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(|r| (r.id, r.tenant_id)).collect())
}

pub async fn add_timeline<'e>(
    db: impl PgExecutor<'e>,
    id: Uuid,
    what: &str,
    detail: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO request_timeline (request_id, what, detail) VALUES ($1, $2, $3)",
        id,
        what,
        detail,
    )
    .execute(db)
    .await?;
    Ok(())
}

pub async fn timeline(pool: &PgPool, id: Uuid) -> Result<Vec<(DateTime<Utc>, String, String)>, sqlx::Error> {
    let rows = sqlx::query!(
        "SELECT at, what, detail FROM request_timeline WHERE request_id = $1 ORDER BY id",
        id,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(|r| (r.at, r.what, r.detail)).collect())
}

/// Tells each of `users` about a request in the app, in one statement.
pub async fn notify<'e>(
    db: impl PgExecutor<'e>,
    users: &[Uuid],
    tenant: Uuid,
    request: Uuid,
    message: &str,
) -> Result<(), sqlx::Error> {
    if users.is_empty() {
        return Ok(());
    }
    sqlx::query!(
        "INSERT INTO notifications (user_id, tenant_id, request_id, message) \
         SELECT u, $2, $3, $4 FROM UNNEST($1::uuid[]) WITH ORDINALITY AS n(u, i) ORDER BY i",
        users,
        tenant,
        request,
        message,
    )
    .execute(db)
    .await?;
    Ok(())
}

/// Tells a request's requester and everyone whose approval counts for it,
/// in one statement.
pub async fn notify_requester_and_approvers<'e>(
    db: impl PgExecutor<'e>,
    request: Uuid,
    message: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO notifications (user_id, tenant_id, request_id, message) \
         SELECT who, r.tenant_id, r.id, $2 FROM action_requests r \
         CROSS JOIN LATERAL (SELECT r.requested_by AS who, NULL::timestamptz AS at \
                             UNION ALL \
                             SELECT d.approver_id, d.created_at FROM approval_decisions d \
                             WHERE d.request_id = r.id AND d.decision = 'approve' AND d.digest = r.digest) w \
         WHERE r.id = $1 ORDER BY w.at NULLS FIRST",
        request,
        message,
    )
    .execute(db)
    .await?;
    Ok(())
}

#[derive(Debug, Clone)]
pub struct Notice {
    pub id: i64,
    pub request_id: Option<Uuid>,
    pub message: String,
    pub created_at: DateTime<Utc>,
    pub read_at: Option<DateTime<Utc>>,
}

pub async fn notifications(pool: &PgPool, user: Uuid, tenant: Uuid) -> Result<Vec<Notice>, sqlx::Error> {
    sqlx::query_as!(
        Notice,
        "SELECT id, request_id, message, created_at, read_at FROM notifications WHERE user_id = $1 AND tenant_id = $2 \
         ORDER BY id DESC LIMIT 100",
        user,
        tenant,
    )
    .fetch_all(pool)
    .await
}

pub async fn mark_read(pool: &PgPool, user: Uuid, tenant: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE notifications SET read_at = now() WHERE user_id = $1 AND tenant_id = $2 AND read_at IS NULL",
        user,
        tenant,
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// Pending requests past their policy's reminder (or escalation) time that
/// were not yet reminded (or escalated): (request, tenant).
pub async fn due_for(pool: &PgPool, what: Nudge) -> Result<Vec<(Uuid, Uuid)>, sqlx::Error> {
    // Requests filed under the default policy (version 0, never saved) use
    // its reminder time; it has no escalation.
    let rows = match what {
        Nudge::Reminder => sqlx::query!(
            r#"SELECT r.id AS "id!", r.tenant_id AS "tenant_id!" FROM action_requests r
                   JOIN approval_policies p
                     ON p.tenant_id = r.tenant_id AND p.action_kind = r.kind AND p.version = r.policy_version
                   WHERE r.status = 'pending' AND r.expires_at > now() AND r.reminded_at IS NULL
                     AND p.reminder_after_secs IS NOT NULL
                     AND r.created_at + make_interval(secs => p.reminder_after_secs) <= now()
                   UNION
                   SELECT r.id, r.tenant_id FROM action_requests r
                   WHERE r.status = 'pending' AND r.expires_at > now() AND r.reminded_at IS NULL
                     AND r.policy_version = 0
                     AND $1::int IS NOT NULL AND r.created_at + make_interval(secs => $1::int) <= now()
                   LIMIT 100"#,
            Policy::standard().reminder_after_secs,
        )
        .fetch_all(pool)
        .await?
        .into_iter()
        .map(|r| (r.id, r.tenant_id))
        .collect(),
        Nudge::Escalation => sqlx::query!(
            r#"SELECT r.id AS "id!", r.tenant_id AS "tenant_id!" FROM action_requests r
                   JOIN approval_policies p
                     ON p.tenant_id = r.tenant_id AND p.action_kind = r.kind AND p.version = r.policy_version
                   WHERE r.status = 'pending' AND r.expires_at > now() AND r.escalated_at IS NULL
                     AND p.escalation_after_secs IS NOT NULL
                     AND r.created_at + make_interval(secs => p.escalation_after_secs) <= now()
                   LIMIT 100"#,
        )
        .fetch_all(pool)
        .await?
        .into_iter()
        .map(|r| (r.id, r.tenant_id))
        .collect(),
    };
    Ok(rows)
}

/// Which nudge a pending request gets.
#[derive(Debug, Clone, Copy)]
pub enum Nudge {
    Reminder,
    Escalation,
}

/// Claims the nudge of a request; false when another runner (another
/// replica) already sent it, so each is sent once.
pub async fn claim_nudge<'e>(db: impl PgExecutor<'e>, id: Uuid, what: Nudge) -> Result<bool, sqlx::Error> {
    let claimed = match what {
        Nudge::Reminder => {
            sqlx::query!(
                "UPDATE action_requests SET reminded_at = now() WHERE id = $1 AND reminded_at IS NULL",
                id,
            )
            .execute(db)
            .await?
        }
        Nudge::Escalation => {
            sqlx::query!(
                "UPDATE action_requests SET escalated_at = now() WHERE id = $1 AND escalated_at IS NULL",
                id,
            )
            .execute(db)
            .await?
        }
    };
    Ok(claimed.rows_affected() == 1)
}
