//! A new version of an approval policy as a control of the approval gate:
//! an admin can't loosen the rules that bind them without a second admin.

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::action::{Action, ExecError, Fact, Run, Step};
use super::model::{Kind, Policy};
use super::store as gate;
use crate::access::permissions::Permission;
use crate::audit::Event;
use crate::audit::{self, outcome, NewRecord};

pub struct PolicyChangeAction;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PolicyChange {
    /// The kind of action the policy is for, and its label.
    pub kind: String,
    pub label: String,
    pub policy: Policy,
    pub currency: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Applied {
    pub version: Option<i32>,
}

impl PolicyChange {
    /// The policy in words.
    pub fn summary(&self) -> String {
        let p = &self.policy;
        let cur = &self.currency;
        let mut parts = vec![format!("{} approval(s) for every request", p.required_approvals)];
        if !p.approver_roles.is_empty() {
            parts.push(format!("from {}", p.approver_roles.join(", ")));
        }
        for t in p.tiers.iter() {
            let role = t
                .role
                .as_ref()
                .map(|r| format!(", one from {r}"))
                .unwrap_or_default();
            parts.push(format!("above {} {cur}: {}{role}", t.above, t.approvals));
        }
        if let Some(l) = p.member_limit {
            parts.push(format!("{l} {cur} per member per {} h", p.period_hours));
        }
        if let Some(l) = p.tenant_limit {
            parts.push(format!("{l} {cur} for the tenant per {} h", p.period_hours));
        }
        parts.push(if p.first_time_rule {
            "first payments approved".to_owned()
        } else {
            "no first-payment rule".to_owned()
        });
        parts.join("; ")
    }
}

impl Action for PolicyChangeAction {
    type Payload = PolicyChange;
    type Progress = Applied;

    const KIND: Kind = Kind {
        key: "approval_policy",
        label: "Approval policy changes",
        read_permission: Permission::PoliciesManage,
        request_permission: Permission::PoliciesManage,
        approve_permission: Permission::PoliciesManage,
    };
    const CONTROL: bool = true;

    fn default_policy(&self) -> Policy {
        Policy::four_eyes()
    }

    fn describe(&self, c: &PolicyChange) -> Vec<Fact> {
        let p = &c.policy;
        vec![
            Fact::new("Policy for", c.label.clone()),
            Fact::new("Rules", c.summary()),
            Fact::new(
                "Deadlines",
                format!(
                    "expire after {} h; rate tolerance {}%",
                    p.expires_after_secs / 3600,
                    rust_decimal::Decimal::new(p.rate_tolerance_bps as i64, 2)
                ),
            ),
            Fact::new("Why", p.reason.clone()),
        ]
    }

    async fn execute(
        &self,
        run: &mut Run<'_, Applied>,
        c: &PolicyChange,
    ) -> Result<Step<PolicyChange>, ExecError> {
        let request = run.request;
        let kind = run
            .gate
            .get(&c.kind)
            .map_err(|e| ExecError::Internal(e.to_string()))?
            .kind();
        let mut tx = run.pool.begin().await?;
        let version =
            gate::save_policy(&mut tx, request.tenant_id, kind, &c.policy, request.requested_by).await?;
        run.progress.version = Some(version);
        gate::set_progress(&mut *tx, request.id, &json!({"version": version})).await?;
        audit::store::append_in(
            &mut tx,
            &[NewRecord::new(
                &crate::approvals::gate_actor(),
                Some(request.tenant_id),
                Event::PoliciesChanged,
                format!("policy:{}:{version}", kind.key),
                outcome::SUCCESS,
            )
            .with_details(json!({"kind": kind.key, "version": version, "reason": c.policy.reason,
                                 "rules": c.summary(), "requested_by": request.requester_email, "request": request.id}))],
        )
        .await?;
        tx.commit().await?;
        Ok(Step::Done(format!(
            "{} policy saved as version {version}. Requests already filed keep their version.",
            kind.label
        )))
    }
}

/// The currency every policy weighs requests in: changing it moves every
/// tier and limit at once, so it is a control like the policies.
pub struct ReportingCurrencyAction;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReportingCurrency {
    pub from: String,
    pub to: String,
}

impl Action for ReportingCurrencyAction {
    type Payload = ReportingCurrency;
    type Progress = Applied;

    const KIND: Kind = Kind {
        key: "reporting_currency",
        label: "Reporting currency changes",
        read_permission: Permission::PoliciesManage,
        request_permission: Permission::PoliciesManage,
        approve_permission: Permission::PoliciesManage,
    };
    const CONTROL: bool = true;

    fn default_policy(&self) -> Policy {
        Policy::four_eyes()
    }

    fn describe(&self, c: &ReportingCurrency) -> Vec<Fact> {
        vec![
            Fact::new("Reporting currency", format!("{} to {}", c.from, c.to)),
            Fact::new(
                "Effect",
                format!(
                    "every tier and limit is read in {} from then on; requests already filed keep their value",
                    c.to
                ),
            ),
        ]
    }

    async fn execute(
        &self,
        run: &mut Run<'_, Applied>,
        c: &ReportingCurrency,
    ) -> Result<Step<ReportingCurrency>, ExecError> {
        let request = run.request;
        let mut tx = run.pool.begin().await?;
        let previous = gate::set_reporting_currency(&mut tx, request.tenant_id, &c.to).await?;
        audit::store::append_in(
            &mut tx,
            &[NewRecord::new(
                &crate::approvals::gate_actor(),
                Some(request.tenant_id),
                Event::PoliciesReportingCurrencyChanged,
                format!("tenant:{}", request.tenant_id),
                outcome::SUCCESS,
            )
            .with_details(json!({"from": previous, "to": c.to,
                                 "requested_by": request.requester_email, "request": request.id}))],
        )
        .await?;
        tx.commit().await?;
        Ok(Step::Done(format!(
            "Policies now weigh new requests in {}. Amounts in the tiers and limits are read in {}; review them.",
            c.to, c.to
        )))
    }
}
