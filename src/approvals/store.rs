//! The approvals engine's SQL: policies, requests, decisions, timeline,
//! jobs and notifications.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use sqlx::types::Json;
use sqlx::{PgConnection, PgExecutor, PgPool, Postgres, Transaction};
use uuid::Uuid;

use crate::audit::store::{staged_row, staged_rows};
use crate::audit::NewRecord;

use super::model::{Kind, Policy, RequestStatus, Tier};
use super::quorum::{Candidate, Colleagues};
use crate::access::permissions::Permission;
use crate::access::ties::Ties;

/// The latest saved version, if an admin saved one.
pub async fn latest_policy(pool: &PgPool, tenant: Uuid, kind: Kind) -> Result<Option<Policy>, sqlx::Error> {
    sqlx::query_as!(
        Policy,
        r#"SELECT version, required_approvals, approver_roles, tiers AS "tiers: Json<Vec<Tier>>", period_hours,
                  member_limit, tenant_limit, first_time_rule, expires_after_secs, reminder_after_secs,
                  escalation_after_secs, escalation_role, rate_tolerance_bps, reason, created_at
           FROM approval_policies WHERE tenant_id = $1 AND action_kind = $2
           ORDER BY version DESC LIMIT 1"#,
        tenant,
        kind.key,
    )
    .fetch_optional(pool)
    .await
}

/// A tenant, a kind's key and a version.
type SavedKey = (Uuid, &'static str, i32);

/// A saved version (0, the kind's default, is never saved). Saved
/// versions are written once (an edit saves the next version), so each is
/// read from Postgres once per process: every run of a job asks for its
/// request's version.
pub async fn saved_policy(
    pool: &PgPool,
    tenant: Uuid,
    kind: Kind,
    version: i32,
) -> Result<Option<Policy>, sqlx::Error> {
    static SAVED: LazyLock<Mutex<HashMap<SavedKey, Policy>>> = LazyLock::new(Default::default);
    let key = (tenant, kind.key, version);
    if let Some(policy) = SAVED.lock().expect("the policy memo lock").get(&key) {
        return Ok(Some(policy.clone()));
    }
    let policy = sqlx::query_as!(
        Policy,
        r#"SELECT version, required_approvals, approver_roles, tiers AS "tiers: Json<Vec<Tier>>", period_hours,
                  member_limit, tenant_limit, first_time_rule, expires_after_secs, reminder_after_secs,
                  escalation_after_secs, escalation_role, rate_tolerance_bps, reason, created_at
           FROM approval_policies WHERE tenant_id = $1 AND action_kind = $2 AND version = $3"#,
        tenant,
        kind.key,
        version,
    )
    .fetch_optional(pool)
    .await?;
    if let Some(policy) = &policy {
        let mut saved = SAVED.lock().expect("the policy memo lock");
        // A bound on a long-lived process's memory; reading again is cheap.
        if saved.len() >= 10_000 {
            saved.clear();
        }
        saved.insert(key, policy.clone());
    }
    Ok(policy)
}

pub async fn policy_history(
    pool: &PgPool,
    tenant: Uuid,
    kind: Kind,
) -> Result<Vec<(Policy, String)>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT version, required_approvals, approver_roles, tiers AS "tiers: Json<Vec<Tier>>", period_hours,
                  member_limit, tenant_limit, first_time_rule, expires_after_secs, reminder_after_secs,
                  escalation_after_secs, escalation_role, rate_tolerance_bps, reason, created_at,
                  (SELECT email FROM users WHERE id = created_by) AS author
           FROM approval_policies WHERE tenant_id = $1 AND action_kind = $2 ORDER BY version DESC"#,
        tenant,
        kind.key,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let policy = Policy {
                version: r.version,
                required_approvals: r.required_approvals,
                approver_roles: r.approver_roles,
                tiers: r.tiers,
                period_hours: r.period_hours,
                member_limit: r.member_limit,
                tenant_limit: r.tenant_limit,
                first_time_rule: r.first_time_rule,
                expires_after_secs: r.expires_after_secs,
                reminder_after_secs: r.reminder_after_secs,
                escalation_after_secs: r.escalation_after_secs,
                escalation_role: r.escalation_role,
                rate_tolerance_bps: r.rate_tolerance_bps,
                reason: r.reason,
                created_at: r.created_at,
            };
            (policy, r.author.unwrap_or_default())
        })
        .collect())
}

/// Saves a new version; returns its number.
pub async fn save_policy(
    tx: &mut Transaction<'_, Postgres>,
    tenant: Uuid,
    kind: Kind,
    p: &Policy,
    by: Uuid,
) -> Result<i32, sqlx::Error> {
    sqlx::query_scalar!(
        "INSERT INTO approval_policies (tenant_id, action_kind, version, required_approvals, approver_roles, tiers, \
           expires_after_secs, reminder_after_secs, escalation_after_secs, escalation_role, rate_tolerance_bps, reason, \
           created_by, period_hours, member_limit, tenant_limit, first_time_rule) \
         SELECT $1, $2, COALESCE(max(version), 0) + 1, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16 \
         FROM approval_policies WHERE tenant_id = $1 AND action_kind = $2 RETURNING version",
        tenant,
        kind.key,
        p.required_approvals,
        &p.approver_roles,
        &p.tiers as _,
        p.expires_after_secs,
        p.reminder_after_secs,
        p.escalation_after_secs,
        p.escalation_role.as_deref(),
        p.rate_tolerance_bps,
        p.reason,
        by,
        p.period_hours,
        p.member_limit,
        p.tenant_limit,
        p.first_time_rule,
    )
    .fetch_one(&mut **tx)
    .await
}

/// Active members with their role's permissions and the grants behind
/// their membership and their role, and the ties those grants make.
pub async fn candidates(pool: &PgPool, tenant: Uuid) -> Result<Colleagues, sqlx::Error> {
    let mut members: Vec<Candidate> = sqlx::query!(
        r#"SELECT u.id AS user_id, u.email, r.id AS role_id, r.name AS role_name,
                  COALESCE((SELECT array_agg(permission) FROM role_permissions WHERE role_id = r.id), '{}')
                    AS "permissions!"
           FROM memberships m JOIN users u ON u.id = m.user_id JOIN roles r ON r.id = m.role_id
           WHERE m.tenant_id = $1 AND u.disabled_at IS NULL"#,
        tenant,
    )
    .fetch_all(pool)
    .await?
    .into_iter()
    .map(|r| Candidate {
        user_id: r.user_id,
        email: r.email,
        role_id: r.role_id,
        role_name: r.role_name,
        permissions: r.permissions,
        grants: Vec::new(),
    })
    .collect();
    let grants = crate::access::store::grants(pool, tenant).await?;
    for m in &mut members {
        m.grants = grants
            .iter()
            .filter(|g| match g.user_id {
                Some(user) => user == m.user_id,
                None => g.role_id == m.role_id,
            })
            .cloned()
            .collect();
    }
    let roles = members.iter().map(|m| (m.user_id, m.role_id)).collect();
    Ok(Colleagues {
        ties: Ties::new(&grants, &roles),
        members,
    })
}

/// The members whose approval a request holds, earliest first.
pub async fn approvers<'e>(db: impl PgExecutor<'e>, request: Uuid) -> Result<Vec<Uuid>, sqlx::Error> {
    sqlx::query_scalar!(
        "SELECT approver_id FROM approval_decisions WHERE request_id = $1 AND decision = 'approve' \
         ORDER BY created_at",
        request,
    )
    .fetch_all(db)
    .await
}

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

    pub fn filed(&self) -> super::quorum::Filed {
        super::quorum::Filed {
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

/// What a tenant may weigh its policies in (the service prices a US
/// dollar as USDT).
pub const REPORTING_CURRENCIES: &[&str] = &["USD", "NGN"];

/// Sets the reporting currency; returns the one it replaces.
pub async fn set_reporting_currency(
    tx: &mut Transaction<'_, Postgres>,
    tenant: Uuid,
    currency: &str,
) -> Result<String, sqlx::Error> {
    sqlx::query_scalar!(
        r#"UPDATE tenants t SET reporting_currency = $2 FROM tenants old WHERE t.id = $1 AND old.id = t.id
           RETURNING old.reporting_currency AS "reporting_currency!""#,
        tenant,
        currency,
    )
    .fetch_one(&mut **tx)
    .await
}

/// The tenant's reporting currency (a tenant setting).
pub async fn reporting_currency(pool: &PgPool, tenant: Uuid) -> Result<String, sqlx::Error> {
    sqlx::query_scalar!("SELECT reporting_currency FROM tenants WHERE id = $1", tenant)
        .fetch_one(pool)
        .await
}

/// The value of one member's and of the whole tenant's requests of a
/// kind filed since `since`, leaving out those that ended without moving
/// anything: the whole hours from the per-hour totals a trigger keeps
/// (`request_totals`), the first, partial hour from the requests filed in
/// it, so the sum reads a few rows per member and hour, not every request
/// of the period.
pub async fn running_totals(
    pool: &PgPool,
    tenant: Uuid,
    kind: Kind,
    member: Uuid,
    since: DateTime<Utc>,
) -> Result<(Decimal, Decimal), sqlx::Error> {
    let totals = sqlx::query!(
        r#"SELECT COALESCE(sum(value) FILTER (WHERE requested_by = $3), 0) AS "member!",
                  COALESCE(sum(value), 0) AS "tenant!"
           FROM (SELECT requested_by, value FROM request_totals
                 WHERE tenant_id = $1 AND kind = $2 AND hour >= date_trunc('hour', $4::timestamptz, 'UTC') + interval '1 hour'
                 UNION ALL
                 SELECT requested_by, request_counts(status, value) FROM action_requests
                 WHERE tenant_id = $1 AND kind = $2 AND created_at >= $4
                   AND created_at < date_trunc('hour', $4::timestamptz, 'UTC') + interval '1 hour') counted"#,
        tenant,
        kind.key,
        member,
        since,
    )
    .fetch_one(pool)
    .await?;
    Ok((totals.member, totals.tenant))
}

/// Which of `keys` the tenant has already paid (a request carried out or
/// running): one probe of `paying_counterparties` each, whatever the
/// tenant's history (`LIMIT 1` keeps even a generic plan from reading every
/// payment to an account paid many times).
pub async fn known_counterparties(
    pool: &PgPool,
    tenant: Uuid,
    keys: &[String],
) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT DISTINCT k AS "k!" FROM unnest($2::text[]) AS k
           CROSS JOIN LATERAL (SELECT 1 FROM paying_counterparties p WHERE p.tenant_id = $1 AND p.key = k LIMIT 1) paid"#,
        tenant,
        keys,
    )
    .fetch_all(pool)
    .await
}

/// The current roles of the members whose approvals count.
pub async fn approver_role_names<'e>(
    db: impl PgExecutor<'e>,
    request: Uuid,
) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar!(
        "SELECT ro.name FROM approval_decisions d JOIN action_requests r ON r.id = d.request_id \
         JOIN memberships m ON m.user_id = d.approver_id AND m.tenant_id = r.tenant_id \
         JOIN roles ro ON ro.id = m.role_id \
         WHERE d.request_id = $1 AND d.decision = 'approve' AND d.digest = r.digest",
        request,
    )
    .fetch_all(db)
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

/// A request to mark as being carried out: its id, the detail of its
/// timeline entry and its audit record.
pub struct Start {
    pub id: Uuid,
    pub detail: String,
    pub record: NewRecord,
}

/// Moves each request of `starts` that is still approved to executing,
/// with its timeline entry and its audit record, in one statement; the
/// ids moved.
pub async fn start_all<'e>(db: impl PgExecutor<'e>, starts: &[Start]) -> Result<Vec<Uuid>, sqlx::Error> {
    // `audited` is one row whatever was moved (an aggregate), so joining
    // it makes it run without changing the rows returned.
    sqlx::query_scalar!(
        r#"WITH moved AS (UPDATE action_requests r SET status = 'executing', updated_at = now()
                          FROM UNNEST($1::uuid[], $2::text[]) AS u(id, detail)
                          WHERE r.id = u.id AND r.status = 'approved' RETURNING r.id, u.detail),
                noted AS (INSERT INTO request_timeline (request_id, what, detail)
                          SELECT id, 'executing', detail FROM moved RETURNING request_id),
                audited AS (SELECT stage_audit(jsonb_agg(a.rec ORDER BY a.n)) AS staged
                            FROM moved JOIN UNNEST($1::uuid[], $3::jsonb[]) WITH ORDINALITY AS a(id, rec, n)
                              ON a.id = moved.id)
           SELECT n.request_id AS "request_id!" FROM noted n CROSS JOIN audited"#,
        &starts.iter().map(|s| s.id).collect::<Vec<_>>(),
        &starts.iter().map(|s| s.detail.clone()).collect::<Vec<_>>(),
        &starts.iter().map(|s| staged_row(&s.record)).collect::<Vec<_>>(),
    )
    .fetch_all(db)
    .await
}

pub async fn set_progress<'e>(
    db: impl PgExecutor<'e>,
    id: Uuid,
    progress: &serde_json::Value,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE action_requests SET progress = $2, updated_at = now() WHERE id = $1",
        id,
        progress,
    )
    .execute(db)
    .await?;
    Ok(())
}

/// A run's progress with the timeline entry that says what it did, in one
/// statement (so both or neither are written, without a transaction of
/// their own: a payout's run saves two or three times).
pub async fn save_progress<'e>(
    db: impl PgExecutor<'e>,
    id: Uuid,
    progress: &serde_json::Value,
    what: &str,
    detail: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "WITH saved AS (UPDATE action_requests SET progress = $2, updated_at = now() WHERE id = $1) \
         INSERT INTO request_timeline (request_id, what, detail) VALUES ($1, $3, $4)",
        id,
        progress,
        what,
        detail,
    )
    .execute(db)
    .await?;
    Ok(())
}

/// A changed payload (sent back for approval): new digest, new deadline.
pub async fn replace_payload<'e>(
    db: impl PgExecutor<'e>,
    id: Uuid,
    payload: &serde_json::Value,
    digest: &str,
    expires_at: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE action_requests SET payload = $2, digest = $3, expires_at = $4, progress = '{}'::jsonb, \
           updated_at = now() WHERE id = $1",
        id,
        payload,
        digest,
        expires_at,
    )
    .execute(db)
    .await?;
    Ok(())
}

/// Runs the request's queued job now (an event brought news of it).
async fn wake<'e>(db: impl PgExecutor<'e>, request: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE jobs SET run_at = now() WHERE request_id = $1 AND done_at IS NULL",
        request
    )
    .execute(db)
    .await?;
    Ok(())
}

/// An event from the service about a request's action: its job is woken
/// to read it back, and the event noted on the timeline, in that order. A
/// run in progress holds the job's row lock and goes on to lock the
/// request on another connection; the timeline entry takes a key-share
/// lock on the request (its foreign key), so noting it first would
/// deadlock with such a run where Postgres can't see it.
pub async fn note_event(pool: &PgPool, request: Uuid, event: &str) -> Result<(), sqlx::Error> {
    let mut tx = pool.begin().await?;
    wake(&mut *tx, request).await?;
    add_timeline(&mut *tx, request, "event", event).await?;
    tx.commit().await
}

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

/// The channel the job runners listen on: `job:<epoch seconds>` when a job
/// is queued or rescheduled (a trigger on `jobs`), `due:<epoch seconds>`
/// for a filed request's earliest reminder, escalation or expiry.
pub const CHANNEL: &str = "paydesk_gate";

/// Tells the runners a request has something due at `at` (a reminder,
/// an escalation, its expiry), when the transaction commits.
pub async fn announce<'e>(db: impl PgExecutor<'e>, at: DateTime<Utc>) -> Result<(), sqlx::Error> {
    sqlx::query!("SELECT pg_notify($1, $2)", CHANNEL, due_payload(at))
        .execute(db)
        .await?;
    Ok(())
}

fn due_payload(at: DateTime<Utc>) -> String {
    format!("due:{}", at.timestamp_micros() as f64 / 1e6)
}

/// When the next delayed job falls due; None when none waits. One probe
/// of the due-jobs index.
pub async fn next_job_due(pool: &PgPool) -> Result<Option<DateTime<Utc>>, sqlx::Error> {
    sqlx::query_scalar!(r#"SELECT min(run_at) AS "at" FROM jobs WHERE done_at IS NULL AND run_at > now()"#)
        .fetch_one(pool)
        .await
}

/// How many jobs are due now, counting up to `at_most`: jobs being run
/// count too (a job stays due until its run commits).
pub async fn jobs_due_now(pool: &PgPool, at_most: i64) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT count(*) AS "due!" FROM (SELECT 1 FROM jobs WHERE done_at IS NULL AND run_at <= now() LIMIT $1) d"#,
        at_most,
    )
    .fetch_one(pool)
    .await
}

/// When the next reminder, escalation or expiry of a pending request falls
/// due; None when none waits. It reads every pending request, so the
/// scheduler asks only after chores ran or when it may have missed news.
pub async fn next_chore_due(pool: &PgPool) -> Result<Option<DateTime<Utc>>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT least(
             (SELECT min(expires_at) FROM action_requests WHERE status = 'pending'),
             (SELECT min(r.created_at + make_interval(secs => p.reminder_after_secs))
                FROM action_requests r JOIN approval_policies p
                  ON p.tenant_id = r.tenant_id AND p.action_kind = r.kind AND p.version = r.policy_version
               WHERE r.status = 'pending' AND r.reminded_at IS NULL AND p.reminder_after_secs IS NOT NULL),
             (SELECT min(r.created_at + make_interval(secs => $1::int)) FROM action_requests r
               WHERE r.status = 'pending' AND r.reminded_at IS NULL AND r.policy_version = 0 AND $1::int IS NOT NULL),
             (SELECT min(r.created_at + make_interval(secs => p.escalation_after_secs))
                FROM action_requests r JOIN approval_policies p
                  ON p.tenant_id = r.tenant_id AND p.action_kind = r.kind AND p.version = r.policy_version
               WHERE r.status = 'pending' AND r.escalated_at IS NULL AND p.escalation_after_secs IS NOT NULL)
           ) AS "at""#,
        Policy::standard().reminder_after_secs,
    )
    .fetch_one(pool)
    .await
}

/// A due job, as a runner takes it: with its request's tenant and the
/// tenant's primary connection (SQL `primary_connection_of`), so a run
/// that only reads a payout back costs no statement for either.
pub struct Claimed {
    pub id: i64,
    pub request_id: Option<Uuid>,
    pub attempts: i32,
    pub tenant_id: Option<Uuid>,
    pub connection_id: Option<Uuid>,
    pub connection_updated_at: Option<DateTime<Utc>>,
}

/// Which due jobs a claim takes.
#[derive(Debug, Clone, Copy)]
pub enum Take {
    /// Up to this many, oldest first, skipping those another runner holds.
    Due(i64),
    /// Only this one, waiting for its lock if another runner holds it.
    Only(i64),
}

/// Takes due jobs, locked for the rest of the caller's transaction. The
/// runner skips jobs another runner holds; a caller waiting for one job
/// (`run_now`) waits for its lock instead, and then finds it done. The
/// jobs are found and locked first and joined after (joined before the
/// sort, every due job would be).
pub async fn claim_jobs(e: impl PgExecutor<'_>, take: Take) -> Result<Vec<Claimed>, sqlx::Error> {
    match take {
        Take::Only(only) => {
            sqlx::query_as!(
                Claimed,
                r#"WITH j AS (SELECT id, request_id, attempts FROM jobs
                          WHERE done_at IS NULL AND run_at <= now() AND id = $1 FOR UPDATE)
               SELECT j.id AS "id!", j.request_id, j.attempts AS "attempts!", r.tenant_id AS "tenant_id?",
                      c.id AS "connection_id?", c.updated_at AS "connection_updated_at?"
               FROM j
               LEFT JOIN action_requests r ON r.id = j.request_id
               LEFT JOIN LATERAL primary_connection_of(r.tenant_id) c ON true"#,
                only,
            )
            .fetch_all(e)
            .await
        }
        Take::Due(at_most) => {
            sqlx::query_as!(
                Claimed,
                r#"WITH j AS (SELECT id, request_id, attempts FROM jobs
                          WHERE done_at IS NULL AND run_at <= now()
                          ORDER BY run_at, id LIMIT $1 FOR UPDATE SKIP LOCKED)
               SELECT j.id AS "id!", j.request_id, j.attempts AS "attempts!", r.tenant_id AS "tenant_id?",
                      c.id AS "connection_id?", c.updated_at AS "connection_updated_at?"
               FROM j
               LEFT JOIN action_requests r ON r.id = j.request_id
               LEFT JOIN LATERAL primary_connection_of(r.tenant_id) c ON true"#,
                at_most,
            )
            .fetch_all(e)
            .await
        }
    }
}

/// How a run left its job.
#[derive(Debug)]
pub struct Settled {
    pub job: i64,
    /// Nothing more to run.
    pub done: bool,
    /// Run again this long from now (None: keep the time it has).
    pub after: Option<std::time::Duration>,
    /// Failed runs in a row.
    pub attempts: i32,
    /// Why the last run failed (None on a run that got on, which clears it;
    /// a job done without one keeps the last).
    pub error: Option<String>,
}

/// Writes how each run of a claim left its job, in one statement.
pub async fn settle_jobs(e: impl PgExecutor<'_>, settled: &[Settled]) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE jobs j SET done_at = CASE WHEN u.done THEN now() END, \
           run_at = CASE WHEN u.after_secs IS NULL THEN j.run_at ELSE now() + make_interval(secs => u.after_secs) END, \
           attempts = u.attempts, \
           last_error = CASE WHEN u.done AND u.error IS NULL THEN j.last_error ELSE u.error END \
         FROM UNNEST($1::int8[], $2::bool[], $3::float8[], $4::int4[], $5::text[]) AS u(id, done, after_secs, attempts, error) \
         WHERE j.id = u.id",
        &settled.iter().map(|s| s.job).collect::<Vec<_>>(),
        &settled.iter().map(|s| s.done).collect::<Vec<_>>(),
        // Nullable elements: the macro's type check knows only Vec<f64>.
        &settled.iter().map(|s| s.after.map(|a| a.as_secs_f64())).collect::<Vec<_>>() as _,
        &settled.iter().map(|s| s.attempts).collect::<Vec<_>>(),
        &settled.iter().map(|s| s.error.clone()).collect::<Vec<_>>() as _,
    )
    .execute(e)
    .await?;
    Ok(())
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
