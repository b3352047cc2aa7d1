//! The policies page: each kind's policy in force and its versions, a new
//! version filed as a control, and the reporting currency.

use actix_web::web::{Data, Form, Path};
use actix_web::HttpResponse;
use askama::Template;
use chrono::Utc;
use rust_decimal::Decimal;
use serde::Deserialize;

use crate::approvals::action::Action;

use super::require_read;
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::approvals::forms::submit_control;
use crate::approvals::lifecycle::policy_in_force;
use crate::approvals::model::{Kind, Policy, Tier};
use crate::approvals::policy_change::{
    PolicyChange, PolicyChangeAction, ReportingCurrency, ReportingCurrencyAction,
};
use crate::approvals::store::{self, ActionRequest};
use crate::state::AppState;
use crate::web::error::PortalError;
use crate::web::form::split;
use crate::web::page::{done, ok, unprocessable, Shell};

pub struct PolicyView {
    kind: Kind,
    current: Policy,
    history: Vec<(Policy, String)>,
}

#[derive(Template)]
#[template(path = "approvals/policies.html")]
struct PoliciesPage {
    shell: Shell,
    policies: Vec<PolicyView>,
    roles: Vec<String>,
    reporting_currency: String,
    currencies: &'static [&'static str],
    pending: Vec<ActionRequest>,
    can_edit: bool,
    error: Option<String>,
    notice: Option<String>,
    /// Members who may manage members: the tenant's admins.
    admins: usize,
    /// Grants one admin made alone that still tie members.
    alone_grants: usize,
}

async fn render_policies(
    state: &AppState,
    member: &Member,
    error: Option<String>,
    notice: Option<String>,
) -> Result<String, PortalError> {
    let mut policies = Vec::new();
    for kind in state.gate.kinds() {
        let action = state
            .gate
            .get(kind.key)
            .map_err(|e| PortalError::Internal(Box::new(e)))?;
        policies.push(PolicyView {
            kind,
            current: policy_in_force(&state.pool, member.tenant_id, action).await?,
            history: store::policy_history(&state.pool, member.tenant_id, kind).await?,
        });
    }
    Ok(PoliciesPage {
        shell: Shell::new(member, "/policies"),
        policies,
        roles: crate::access::store::roles(&state.pool, member.tenant_id)
            .await?
            .into_iter()
            .map(|r| r.name)
            .collect(),
        reporting_currency: store::reporting_currency(&state.pool, member.tenant_id).await?,
        currencies: store::REPORTING_CURRENCIES,
        pending: store::pending_of(
            &state.pool,
            member.tenant_id,
            &[PolicyChangeAction::KIND, ReportingCurrencyAction::KIND],
        )
        .await?,
        can_edit: member.can(Permission::PoliciesManage),
        error,
        notice,
        admins: store::candidates(&state.pool, member.tenant_id)
            .await?
            .members
            .iter()
            .filter(|m| {
                m.permissions
                    .iter()
                    .any(|p| p == Permission::MembersManage.name())
            })
            .count(),
        alone_grants: crate::access::store::unconfirmed_grants(&state.pool, member.tenant_id)
            .await?
            .len(),
    }
    .render()?)
}

pub(super) async fn policies(state: Data<AppState>, member: Member) -> Result<HttpResponse, PortalError> {
    require_read(&state, &member).or_else(|_| member.require(Permission::PoliciesManage))?;
    let body = render_policies(&state, &member, None, None).await?;
    Ok(ok(body))
}

#[derive(Deserialize)]
pub struct PolicyForm {
    required_approvals: i32,
    #[serde(default)]
    approver_roles: String,
    #[serde(default)]
    tier1_above: String,
    #[serde(default)]
    tier1_approvals: String,
    #[serde(default)]
    tier1_role: String,
    #[serde(default)]
    tier2_above: String,
    #[serde(default)]
    tier2_approvals: String,
    #[serde(default)]
    tier2_role: String,
    #[serde(default)]
    tier3_above: String,
    #[serde(default)]
    tier3_approvals: String,
    #[serde(default)]
    tier3_role: String,
    #[serde(default = "day")]
    period_hours: i32,
    #[serde(default)]
    member_limit: String,
    #[serde(default)]
    tenant_limit: String,
    /// A checkbox: present when ticked.
    #[serde(default)]
    first_time_rule: Option<String>,
    expires_after_hours: i32,
    #[serde(default)]
    reminder_after_minutes: String,
    #[serde(default)]
    escalation_after_hours: String,
    #[serde(default)]
    escalation_role: String,
    rate_tolerance_percent: Decimal,
    reason: String,
}

fn day() -> i32 {
    24
}

fn optional_int(raw: &str, scale: i32, what: &str) -> Result<Option<i32>, String> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(None);
    }
    raw.parse::<i32>()
        .ok()
        .filter(|v| *v > 0)
        .map(|v| Some(v * scale))
        .ok_or_else(|| format!("{what} must be a whole number above zero, or empty."))
}

/// An amount in the reporting currency: digits and at most two decimals.
fn optional_amount(raw: &str, what: &str) -> Result<Option<Decimal>, String> {
    let raw = raw.trim().replace(',', "");
    if raw.is_empty() {
        return Ok(None);
    }
    let plain = raw.chars().all(|c| c.is_ascii_digit() || c == '.') && raw.matches('.').count() <= 1;
    match raw.parse::<Decimal>() {
        Ok(d) if plain && d.scale() <= 2 => Ok(Some(d)),
        _ => Err(format!("{what} must be an amount such as 1000 or 2500.50.")),
    }
}

fn known_role(role: &str, roles: &[String]) -> Result<Option<String>, String> {
    let role = role.trim();
    if role.is_empty() {
        return Ok(None);
    }
    if roles.iter().any(|r| r == role) {
        Ok(Some(role.to_owned()))
    } else {
        Err(format!("'{role}' is not a role of this tenant."))
    }
}

fn parse_tiers(form: &PolicyForm, roles: &[String]) -> Result<Vec<Tier>, String> {
    let rows = [
        (&form.tier1_above, &form.tier1_approvals, &form.tier1_role),
        (&form.tier2_above, &form.tier2_approvals, &form.tier2_role),
        (&form.tier3_above, &form.tier3_approvals, &form.tier3_role),
    ];
    let mut tiers = Vec::new();
    for (n, (above, approvals, role)) in rows.into_iter().enumerate() {
        let what = format!("Tier {}'s amount", n + 1);
        let Some(above) = optional_amount(above, &what)? else {
            continue;
        };
        let approvals = approvals
            .trim()
            .parse::<i32>()
            .ok()
            .filter(|a| (1..=10).contains(a))
            .ok_or_else(|| format!("Tier {} needs 1 to 10 approvals.", n + 1))?;
        tiers.push(Tier {
            above,
            approvals,
            role: known_role(role, roles)?,
        });
    }
    tiers.sort_by_key(|t| t.above);
    if tiers
        .windows(2)
        .any(|w| w[0].above == w[1].above || w[0].approvals > w[1].approvals)
    {
        return Err(
            "Each tier must start at a higher amount than the last and need at least as many approvals."
                .to_owned(),
        );
    }
    Ok(tiers)
}

fn parse_policy(form: &PolicyForm, roles: &[String]) -> Result<Policy, String> {
    if !(0..=10).contains(&form.required_approvals) {
        return Err(
            "Approvals for every request must be 0 (runs at once unless a rule applies) to 10.".to_owned(),
        );
    }
    let approver_roles: Vec<String> = form
        .approver_roles
        .split(',')
        .map(|r| r.trim().to_owned())
        .filter(|r| !r.is_empty())
        .collect();
    if let Some(unknown) = approver_roles.iter().find(|r| !roles.contains(r)) {
        return Err(format!("'{unknown}' is not a role of this tenant."));
    }
    let tiers = parse_tiers(form, roles)?;
    if !(1..=744).contains(&form.period_hours) {
        return Err("Running totals are kept over 1 to 744 hours.".to_owned());
    }
    if !(1..=720).contains(&form.expires_after_hours) {
        return Err("Requests must expire after 1 to 720 hours.".to_owned());
    }
    let escalation_role = known_role(&form.escalation_role, roles)?;
    if form.rate_tolerance_percent < Decimal::ZERO || form.rate_tolerance_percent > Decimal::from(50) {
        return Err("The rate tolerance must be 0 to 50%.".to_owned());
    }
    if form.reason.trim().len() < 3 {
        return Err("Say why the policy changes; the reason is kept with this version.".to_owned());
    }
    let bps = (form.rate_tolerance_percent * Decimal::from(100)).trunc();
    Ok(Policy {
        version: 0,
        required_approvals: form.required_approvals,
        approver_roles,
        tiers: sqlx::types::Json(tiers),
        period_hours: form.period_hours,
        member_limit: optional_amount(&form.member_limit, "The per-member limit")?,
        tenant_limit: optional_amount(&form.tenant_limit, "The tenant limit")?,
        first_time_rule: form.first_time_rule.is_some(),
        expires_after_secs: form.expires_after_hours * 3600,
        reminder_after_secs: optional_int(&form.reminder_after_minutes, 60, "The reminder time")?,
        escalation_after_secs: optional_int(&form.escalation_after_hours, 3600, "The escalation time")?,
        escalation_role,
        rate_tolerance_bps: bps.to_string().parse().unwrap_or(100),
        reason: form.reason.trim().to_owned(),
        created_at: Utc::now(),
    })
}

pub(super) async fn save_policy(
    state: Data<AppState>,
    member: Member,
    kind: Path<String>,
    form: Form<PolicyForm>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::PoliciesManage)?;
    let kind = state
        .gate
        .get(&kind)
        .map_err(|_| PortalError::NotFound("no such kind of action".to_owned()))?
        .kind();
    let roles: Vec<String> = crate::access::store::roles(&state.pool, member.tenant_id)
        .await?
        .into_iter()
        .map(|r| r.name)
        .collect();
    let policy = match parse_policy(&form, &roles) {
        Ok(p) => p,
        Err(message) => {
            let body = render_policies(&state, &member, Some(message), None).await?;
            return Ok(crate::web::page::unprocessable(body));
        }
    };
    let change = PolicyChange {
        kind: kind.key.to_owned(),
        label: kind.label.to_owned(),
        currency: store::reporting_currency(&state.pool, member.tenant_id).await?,
        policy,
    };
    let target = format!("policy:{}", kind.key);
    let summary = format!("New {} policy: {}", kind.label.to_lowercase(), change.summary());
    match split(submit_control::<PolicyChangeAction>(&state, &member, &target, &summary, change).await)? {
        Ok(notice) => Ok(done("/policies", notice)),
        Err(refusal) => Ok(unprocessable(
            render_policies(&state, &member, Some(refusal.message), None).await?,
        )),
    }
}

#[derive(Deserialize)]
pub struct CurrencyForm {
    reporting_currency: String,
}

/// The currency policies weigh requests in. Requests already filed keep
/// the value they were weighed at.
pub(super) async fn set_reporting_currency(
    state: Data<AppState>,
    member: Member,
    form: Form<CurrencyForm>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::PoliciesManage)?;
    let currency = form.reporting_currency.trim().to_uppercase();
    if !store::REPORTING_CURRENCIES.contains(&currency.as_str()) {
        let message = format!("Choose one of {}.", store::REPORTING_CURRENCIES.join(", "));
        return Ok(crate::web::page::unprocessable(
            render_policies(&state, &member, Some(message), None).await?,
        ));
    }
    let from = store::reporting_currency(&state.pool, member.tenant_id).await?;
    let summary = format!("Weigh requests in {currency} instead of {from}");
    let change = ReportingCurrency { from, to: currency };
    match split(
        submit_control::<ReportingCurrencyAction>(&state, &member, "policy:currency", &summary, change).await,
    )? {
        Ok(notice) => Ok(done("/policies", notice)),
        Err(refusal) => Ok(unprocessable(
            render_policies(&state, &member, Some(refusal.message), None).await?,
        )),
    }
}
