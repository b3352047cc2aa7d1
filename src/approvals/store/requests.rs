//! The request record: filing it, finding it, listing it (inbox, filters,
//! search) and the counts the metrics read.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use sqlx::types::Json;
use sqlx::{PgConnection, PgExecutor, PgPool, Postgres, Transaction};
use uuid::Uuid;

use crate::audit::store::staged_rows;
use crate::audit::NewRecord;

use super::jobs::{due_payload, CHANNEL};
use crate::approvals::model::{Kind, RequestStatus};

#[derive(Debug, Clone)]
pub struct ActionRequest {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub kind: String,
    pub target: String,
    pub summary: String,
    pub payload: Json<serde_json::Value>,
    pub amount: Decimal,
    pub currency: String,
    /// In the tenant's reporting currency at filing, with the rate used.
    pub value: Option<Decimal>,
    pub value_currency: Option<String>,
    pub value_rate: Option<Decimal>,
    pub rules_fired: Vec<String>,
    /// One approval must come from this role.
    pub required_role: Option<String>,
    pub status: RequestStatus,
    pub requested_by: Uuid,
    pub requester_email: String,
    pub policy_version: i32,
    pub required_approvals: i32,
    pub upstream_reference: String,
    /// What execution has done so far: the kind's typed progress.
    pub progress: Json<serde_json::Value>,
    /// Of what the approvers saw; approvals count only for this digest.
    pub digest: String,
    pub failure_reason: Option<String>,
    pub expires_at: DateTime<Utc>,
    pub reminded_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub approvals: i64,
}

impl ActionRequest {
    /// The run's progress as its kind's own type (the kind's default
    /// before a run saved any), so no page reads it by JSON key.
    pub fn progress_as<P: serde::de::DeserializeOwned + Default>(&self) -> P {
        serde_json::from_value(self.progress.0.clone()).unwrap_or_default()
    }

    pub fn filed(&self) -> crate::approvals::quorum::Filed {
        crate::approvals::quorum::Filed {
            by: self.requested_by,
            at: self.created_at,
        }
    }
}

pub struct NewRequest<'a> {
    pub id: Uuid,
    pub tenant: Uuid,
    pub kind: Kind,
    pub target: &'a str,
    pub summary: &'a str,
    pub payload: serde_json::Value,
    pub amount: Decimal,
    pub currency: &'a str,
    pub value: Decimal,
    pub value_currency: &'a str,
    pub value_rate: Decimal,
    pub counterparties: Vec<String>,
    pub rules_fired: Vec<String>,
    pub required_role: Option<String>,
    pub requested_by: Uuid,
    pub policy_version: i32,
    pub required_approvals: i32,
    pub reference: String,
    pub digest: &'a str,
    pub expires_at: DateTime<Utc>,
}

/// Who hears of a filing as it is written: the timeline's first entry
/// ("requested", `detail`), the approvers told in the app, and the
/// earliest reminder, escalation or expiry announced to the runners.
pub struct Heralds<'a> {
    pub detail: &'a str,
    pub tell: &'a [Uuid],
    pub message: &'a str,
    pub due: Option<DateTime<Utc>>,
    /// The audit records of the filing, staged with it.
    pub audit: &'a [NewRecord],
}

/// Files a request with everything its `heralds` say, in one statement
/// (atomic on its own, so it needs no transaction unless the caller goes
/// on to do more);
/// `Err(Some(id))` when one of this tenant is already pending for the
/// same action and target or has the same reference, `Err(None)` when the
/// reference is another tenant's.
pub async fn insert_request(
    db: &mut PgConnection,
    r: &NewRequest<'_>,
    heralds: Heralds<'_>,
) -> Result<Result<(), Option<Uuid>>, sqlx::Error> {
    // `announced` and `audited` are counted only so that they run: a CTE
    // nothing reads is skipped unless it writes.
    let inserted = sqlx::query!(
        r#"WITH filed AS (INSERT INTO action_requests (id, tenant_id, kind, target, summary, payload, amount, status,
             requested_by, policy_version, required_approvals, upstream_reference, expires_at, digest, currency, value,
             value_currency, value_rate, counterparties, rules_fired, required_role)
           VALUES ($1, $2, $3, $4, $5, $6, $7, 'pending', $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
           ON CONFLICT DO NOTHING RETURNING id),
         noted AS (INSERT INTO request_timeline (request_id, what, detail) SELECT id, 'requested', $21 FROM filed),
         told AS (INSERT INTO notifications (user_id, tenant_id, request_id, message)
                  SELECT u, $2, f.id, $23 FROM filed f CROSS JOIN UNNEST($22::uuid[]) WITH ORDINALITY AS n(u, i)
                  ORDER BY i),
         announced AS (SELECT pg_notify($24, $25) FROM filed WHERE $25::text IS NOT NULL),
         audited AS (SELECT stage_audit($26) FROM filed)
         SELECT (SELECT count(*) FROM filed) AS "filed!", (SELECT count(*) FROM announced) AS "announced!",
                (SELECT count(*) FROM audited) AS "audited!""#,
        r.id,
        r.tenant,
        r.kind.key,
        r.target,
        r.summary,
        r.payload,
        r.amount,
        r.requested_by,
        r.policy_version,
        r.required_approvals,
        r.reference,
        r.expires_at,
        r.digest,
        r.currency,
        r.value,
        r.value_currency,
        r.value_rate,
        &r.counterparties,
        &r.rules_fired,
        r.required_role.as_deref(),
        heralds.detail,
        heralds.tell,
        heralds.message,
        CHANNEL,
        heralds.due.map(due_payload),
        staged_rows(heralds.audit),
    )
    .fetch_one(&mut *db)
    .await?;
    if inserted.filed == 1 {
        return Ok(Ok(()));
    }
    let existing: Option<Uuid> = sqlx::query_scalar!(
        "SELECT id FROM action_requests WHERE tenant_id = $1 \
           AND ((kind = $2 AND target = $3 AND status = 'pending') OR upstream_reference = $4) LIMIT 1",
        r.tenant,
        r.kind.key,
        r.target,
        r.reference,
    )
    .fetch_optional(db)
    .await?;
    Ok(Err(existing))
}

/// The picked requests that exist, each with what was picked alongside.
pub async fn find_each<T: Clone>(
    pool: &PgPool,
    tenant: Uuid,
    picked: &[(Uuid, T)],
) -> Result<Vec<(ActionRequest, T)>, sqlx::Error> {
    let ids: Vec<Uuid> = picked.iter().map(|(id, _)| *id).collect();
    let mut found = find_many(pool, Some(tenant), &ids).await?;
    Ok(picked
        .iter()
        .filter_map(|(id, extra)| Some((found.remove(id)?, extra.clone())))
        .collect())
}

/// The requests of `ids` that exist (in `tenant`, if given), in one
/// statement, by id.
pub async fn find_many<'e>(
    db: impl PgExecutor<'e>,
    tenant: Option<Uuid>,
    ids: &[Uuid],
) -> Result<HashMap<Uuid, ActionRequest>, sqlx::Error> {
    let found = sqlx::query_as!(
        ActionRequest,
        r#"SELECT r.id, r.tenant_id, r.kind, r.target, r.summary, r.payload AS "payload: Json<serde_json::Value>",
                  r.amount, r.currency, r.value, r.value_currency, r.value_rate, r.rules_fired, r.required_role,
                  r.status AS "status: RequestStatus", r.requested_by,
                  (SELECT email FROM users WHERE id = r.requested_by) AS "requester_email!", r.policy_version,
                  r.required_approvals, r.upstream_reference, r.progress AS "progress: Json<serde_json::Value>",
                  r.digest, r.failure_reason, r.expires_at, r.reminded_at, r.created_at, r.updated_at,
                  (SELECT count(*) FROM approval_decisions d WHERE d.request_id = r.id AND d.decision = 'approve'
                     AND d.digest = r.digest) AS "approvals!"
           FROM action_requests r WHERE r.id = ANY($2) AND ($1::uuid IS NULL OR r.tenant_id = $1)"#,
        tenant,
        ids,
    )
    .fetch_all(db)
    .await?;
    Ok(found.into_iter().map(|r| (r.id, r)).collect())
}

pub async fn find<'e>(
    db: impl PgExecutor<'e>,
    tenant: Uuid,
    id: Uuid,
) -> Result<Option<ActionRequest>, sqlx::Error> {
    Ok(find_many(db, Some(tenant), &[id]).await?.remove(&id))
}

/// Locks the request row for the rest of the transaction, so decisions on
/// one request happen one at a time, and reads it as it stands once
/// locked, in one statement. Its `approvals` may miss a decision that
/// committed while the lock was awaited (they are counted as of the
/// statement's start): a decider counts them afresh (`add_decision`).
pub async fn lock(
    tx: &mut Transaction<'_, Postgres>,
    tenant: Uuid,
    id: Uuid,
) -> Result<Option<ActionRequest>, sqlx::Error> {
    sqlx::query_as!(
        ActionRequest,
        r#"SELECT r.id, r.tenant_id, r.kind, r.target, r.summary, r.payload AS "payload: Json<serde_json::Value>",
                  r.amount, r.currency, r.value, r.value_currency, r.value_rate, r.rules_fired, r.required_role,
                  r.status AS "status: RequestStatus", r.requested_by,
                  (SELECT email FROM users WHERE id = r.requested_by) AS "requester_email!", r.policy_version,
                  r.required_approvals, r.upstream_reference, r.progress AS "progress: Json<serde_json::Value>",
                  r.digest, r.failure_reason, r.expires_at, r.reminded_at, r.created_at, r.updated_at,
                  (SELECT count(*) FROM approval_decisions d WHERE d.request_id = r.id AND d.decision = 'approve'
                     AND d.digest = r.digest) AS "approvals!"
           FROM action_requests r WHERE r.id = $2 AND r.tenant_id = $1 FOR UPDATE OF r"#,
        tenant,
        id,
    )
    .fetch_optional(&mut **tx)
    .await
}

/// Requests of these kinds still waiting for approval, oldest first: what
/// an entity's page shows as pending changes.
pub async fn pending_of(
    pool: &PgPool,
    tenant: Uuid,
    kinds: &[Kind],
) -> Result<Vec<ActionRequest>, sqlx::Error> {
    let keys: Vec<String> = kinds.iter().map(|k| k.key.to_owned()).collect();
    sqlx::query_as!(
        ActionRequest,
        r#"SELECT r.id, r.tenant_id, r.kind, r.target, r.summary, r.payload AS "payload: Json<serde_json::Value>",
                  r.amount, r.currency, r.value, r.value_currency, r.value_rate, r.rules_fired, r.required_role,
                  r.status AS "status: RequestStatus", r.requested_by,
                  (SELECT email FROM users WHERE id = r.requested_by) AS "requester_email!", r.policy_version,
                  r.required_approvals, r.upstream_reference, r.progress AS "progress: Json<serde_json::Value>",
                  r.digest, r.failure_reason, r.expires_at, r.reminded_at, r.created_at, r.updated_at,
                  (SELECT count(*) FROM approval_decisions d WHERE d.request_id = r.id AND d.decision = 'approve'
                     AND d.digest = r.digest) AS "approvals!"
           FROM action_requests r WHERE r.tenant_id = $1 AND r.status = 'pending'
             AND r.kind = ANY($2) AND r.expires_at > now() ORDER BY r.created_at"#,
        tenant,
        &keys,
    )
    .fetch_all(pool)
    .await
}

/// The request whose action went to the service under `reference`.
pub async fn filed_as(pool: &PgPool, tenant: Uuid, reference: &str) -> Result<Option<Uuid>, sqlx::Error> {
    sqlx::query_scalar!(
        "SELECT id FROM action_requests WHERE tenant_id = $1 AND upstream_reference = $2 LIMIT 1",
        tenant,
        reference
    )
    .fetch_optional(pool)
    .await
}

/// What the inbox's "All" tab (and the payouts list) narrows to.
#[derive(Default)]
pub struct ListFilter<'a> {
    pub kind: Option<&'a str>,
    pub status: Option<RequestStatus>,
    /// Part of the requester's email.
    pub requester: Option<&'a str>,
    /// Filed within these UTC days.
    pub filed: crate::web::listing::Range,
}

pub async fn list_filtered(
    pool: &PgPool,
    tenant: Uuid,
    f: &ListFilter<'_>,
    limit: i64,
) -> Result<Vec<ActionRequest>, sqlx::Error> {
    sqlx::query_as!(
        ActionRequest,
        r#"SELECT r.id, r.tenant_id, r.kind, r.target, r.summary, r.payload AS "payload: Json<serde_json::Value>",
                  r.amount, r.currency, r.value, r.value_currency, r.value_rate, r.rules_fired, r.required_role,
                  r.status AS "status: RequestStatus", r.requested_by,
                  (SELECT email FROM users WHERE id = r.requested_by) AS "requester_email!", r.policy_version,
                  r.required_approvals, r.upstream_reference, r.progress AS "progress: Json<serde_json::Value>",
                  r.digest, r.failure_reason, r.expires_at, r.reminded_at, r.created_at, r.updated_at,
                  (SELECT count(*) FROM approval_decisions d WHERE d.request_id = r.id AND d.decision = 'approve'
                     AND d.digest = r.digest) AS "approvals!"
           FROM action_requests r WHERE r.tenant_id = $1
             AND ($2::text IS NULL OR r.kind = $2) AND ($3::request_status IS NULL OR r.status = $3)
             AND ($4::text IS NULL OR EXISTS (SELECT 1 FROM users u WHERE u.id = r.requested_by
                  AND strpos(lower(u.email), lower($4)) > 0))
             AND ($6::date IS NULL OR (r.created_at AT TIME ZONE 'UTC')::date >= $6)
             AND ($7::date IS NULL OR (r.created_at AT TIME ZONE 'UTC')::date <= $7)
           ORDER BY r.created_at DESC LIMIT $5"#,
        tenant,
        f.kind,
        f.status as Option<RequestStatus>,
        f.requester,
        limit,
        f.filed.from,
        f.filed.to,
    )
    .fetch_all(pool)
    .await
}

/// Pending requests `user` did not file and has not decided.
pub async fn inbox(pool: &PgPool, tenant: Uuid, user: Uuid) -> Result<Vec<ActionRequest>, sqlx::Error> {
    sqlx::query_as!(
        ActionRequest,
        r#"SELECT r.id, r.tenant_id, r.kind, r.target, r.summary, r.payload AS "payload: Json<serde_json::Value>",
                  r.amount, r.currency, r.value, r.value_currency, r.value_rate, r.rules_fired, r.required_role,
                  r.status AS "status: RequestStatus", r.requested_by,
                  (SELECT email FROM users WHERE id = r.requested_by) AS "requester_email!", r.policy_version,
                  r.required_approvals, r.upstream_reference, r.progress AS "progress: Json<serde_json::Value>",
                  r.digest, r.failure_reason, r.expires_at, r.reminded_at, r.created_at, r.updated_at,
                  (SELECT count(*) FROM approval_decisions d WHERE d.request_id = r.id AND d.decision = 'approve'
                     AND d.digest = r.digest) AS "approvals!"
           FROM action_requests r WHERE r.tenant_id = $1 AND r.status = 'pending'
             AND r.requested_by <> $2 AND r.expires_at > now()
             AND NOT EXISTS (SELECT 1 FROM approval_decisions d WHERE d.request_id = r.id AND d.approver_id = $2)
           ORDER BY r.created_at"#,
        tenant,
        user,
    )
    .fetch_all(pool)
    .await
}

/// The request of `kind` whose run recorded `id` under `key` in its
/// progress (a payout's id): how the service's events find their request.
pub async fn by_progress_id(
    pool: &PgPool,
    tenant: Uuid,
    kind: Kind,
    (key, id): (&str, &str),
) -> Result<Option<Uuid>, sqlx::Error> {
    sqlx::query_scalar!(
        "SELECT id FROM action_requests WHERE tenant_id = $1 AND kind = $2 AND progress->>$3 = $4",
        tenant,
        kind.key,
        key,
        id,
    )
    .fetch_optional(pool)
    .await
}

/// The request of `kind` filed under this upstream reference.
pub async fn by_reference(
    pool: &PgPool,
    tenant: Uuid,
    kind: Kind,
    reference: &str,
) -> Result<Option<Uuid>, sqlx::Error> {
    sqlx::query_scalar!(
        "SELECT id FROM action_requests WHERE tenant_id = $1 AND kind = $2 AND upstream_reference = $3",
        tenant,
        kind.key,
        reference,
    )
    .fetch_optional(pool)
    .await
}

/// A request as the search box finds it.
pub struct Found {
    pub id: Uuid,
    pub summary: String,
    pub status: RequestStatus,
    pub requester_email: String,
}

/// Requests by id, upstream reference or words of the summary, newest
/// first.
pub async fn search(pool: &PgPool, tenant: Uuid, q: &str) -> Result<Vec<Found>, sqlx::Error> {
    sqlx::query_as!(
        Found,
        r#"SELECT r.id, r.summary, r.status AS "status: RequestStatus", requester.email AS requester_email
           FROM action_requests r JOIN users requester ON requester.id = r.requested_by
           WHERE r.tenant_id = $1
             AND (r.id::text = lower($2) OR r.upstream_reference = $2
                  OR strpos(lower(r.summary), lower($2)) > 0)
           ORDER BY r.created_at DESC LIMIT 20"#,
        tenant,
        q
    )
    .fetch_all(pool)
    .await
}

/// How many requests of every tenant are in each status, for the metrics.
pub async fn count_by_status(pool: &PgPool) -> Result<Vec<(RequestStatus, i64)>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT status AS "status!: RequestStatus", count(*) AS "count!" FROM action_requests GROUP BY status"#
    )
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(|r| (r.status, r.count)).collect())
}

/// The jobs due now, and how long the oldest has waited, in seconds.
pub async fn queue_depth(pool: &PgPool) -> Result<(i64, f64), sqlx::Error> {
    let queue = sqlx::query!(
        r#"SELECT count(*) AS "depth!", EXTRACT(EPOCH FROM now() - min(run_at))::float8 AS oldest FROM jobs
           WHERE done_at IS NULL AND run_at <= now()"#
    )
    .fetch_one(pool)
    .await?;
    Ok((queue.depth, queue.oldest.unwrap_or(0.0).max(0.0)))
}
