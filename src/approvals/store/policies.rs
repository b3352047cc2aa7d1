//! A kind's saved policy versions, the tenant's reporting currency, and what
//! policies weigh: running totals and counterparties paid before.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use sqlx::types::Json;
use sqlx::{PgPool, Postgres, Transaction};
use uuid::Uuid;

use crate::approvals::model::{Kind, Policy, Tier};

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
