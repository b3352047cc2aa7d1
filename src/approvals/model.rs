//! The approval rules as plain functions over plain data: the statuses a
//! request moves through, one version of a policy, how many approvals a
//! request needs, and whether a rate moved too far (who may give them is
//! `quorum`). Nothing here names a kind of action.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::Serialize;

use crate::access::permissions::Permission;

/// A kind of action the gate knows, declared by its own domain and
/// registered at start-up. `key` is what the database stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind {
    pub key: &'static str,
    /// Plural, for headings: "Payouts".
    pub label: &'static str,
    /// Who may read its requests (auditors read every kind).
    pub read_permission: Permission,
    pub request_permission: Permission,
    pub approve_permission: Permission,
}

impl Kind {
    /// May see this kind's requests: readers of its area, auditors (who
    /// read every request and act on none), and those who file or approve it.
    pub fn readable_by(&self, can: impl Fn(Permission) -> bool) -> bool {
        [
            self.read_permission,
            Permission::AuditRead,
            self.request_permission,
            self.approve_permission,
        ]
        .into_iter()
        .any(can)
    }
}

/// Where a request is. Every change goes through `engine::transition`,
/// which allows only the moves `can_move_to` lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, sqlx::Type)]
#[sqlx(type_name = "request_status", rename_all = "snake_case")]
#[serde(rename_all = "snake_case")]
pub enum RequestStatus {
    /// Waiting for approvals.
    Pending,
    /// Approved; queued to run.
    Approved,
    /// Running, or carried out upstream and waiting for the final outcome.
    Executing,
    /// Carried out, with its final outcome.
    Executed,
    /// Ended without being carried out (or failed upstream), with a reason.
    Failed,
    Rejected,
    Cancelled,
    Expired,
}

impl RequestStatus {
    pub const ALL: &'static [RequestStatus] = &[
        RequestStatus::Pending,
        RequestStatus::Approved,
        RequestStatus::Executing,
        RequestStatus::Executed,
        RequestStatus::Failed,
        RequestStatus::Rejected,
        RequestStatus::Cancelled,
        RequestStatus::Expired,
    ];

    pub fn parse(s: &str) -> Option<RequestStatus> {
        Self::ALL.iter().copied().find(|st| st.as_str() == s)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            RequestStatus::Pending => "pending",
            RequestStatus::Approved => "approved",
            RequestStatus::Executing => "executing",
            RequestStatus::Executed => "executed",
            RequestStatus::Failed => "failed",
            RequestStatus::Rejected => "rejected",
            RequestStatus::Cancelled => "cancelled",
            RequestStatus::Expired => "expired",
        }
    }

    /// The moves the gate allows. Executing may go back to pending when
    /// execution finds the approved terms can't be kept (a rate moved).
    pub fn can_move_to(self, to: RequestStatus) -> bool {
        use RequestStatus::*;
        matches!(
            (self, to),
            (Pending, Approved | Rejected | Cancelled | Expired)
                | (Approved, Executing | Failed)
                | (Executing, Executed | Failed | Pending)
        )
    }

    /// Still moving: the page refreshes itself.
    pub fn is_live(self) -> bool {
        matches!(self, RequestStatus::Approved | RequestStatus::Executing)
    }
}

impl std::fmt::Display for RequestStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Above `above` (in the reporting currency) a request needs `approvals`,
/// one of them from `role` when named.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Tier {
    pub above: Decimal,
    pub approvals: i32,
    #[serde(default)]
    pub role: Option<String>,
}

/// One version of a tenant's policy for a kind of action. Amounts are in
/// the tenant's reporting currency.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct Policy {
    pub version: i32,
    /// Approvals every request needs; 0 lets it run at once (still
    /// through the gate) unless a rule below asks for more.
    pub required_approvals: i32,
    pub approver_roles: Vec<String>,
    /// Sorted by `above`.
    pub tiers: sqlx::types::Json<Vec<Tier>>,
    /// The period running totals are kept over.
    pub period_hours: i32,
    /// Above this running total of one member's requests, a request is
    /// weighed as the largest (the strictest tier).
    pub member_limit: Option<Decimal>,
    /// The same for all of the tenant's requests.
    pub tenant_limit: Option<Decimal>,
    /// The first payment to a counterparty (account, address, card,
    /// country) needs at least one approval, whatever its amount.
    pub first_time_rule: bool,
    pub expires_after_secs: i32,
    pub reminder_after_secs: Option<i32>,
    pub escalation_after_secs: Option<i32>,
    pub escalation_role: Option<String>,
    pub rate_tolerance_bps: i32,
    pub reason: String,
    pub created_at: DateTime<Utc>,
}

/// What a request weighs, for the policy.
#[derive(Debug, Clone, Default)]
pub struct Weighed {
    /// In the reporting currency.
    pub value: Decimal,
    pub currency: String,
    /// The member's and the tenant's totals over the policy's period,
    /// before this request.
    pub member_total: Decimal,
    pub tenant_total: Decimal,
    /// Counterparties never paid before, as labels ("account ····6789").
    pub first_time: Vec<String>,
    /// The payee was saved less than 24 hours ago.
    pub new_payee: bool,
}

/// What the policy asks of a request, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    pub approvals: i32,
    /// One of the approvals must come from this role.
    pub role: Option<String>,
    /// The rules that fired, in words for reviewers.
    pub fired: Vec<String>,
}

impl Policy {
    /// Until an admin sets one: one approval by someone other than the
    /// requester, a day to decide, a reminder after an hour, 1% rate
    /// tolerance, first payments to a counterparty always approved.
    pub fn standard() -> Policy {
        Policy {
            version: 0,
            required_approvals: 1,
            approver_roles: Vec::new(),
            tiers: sqlx::types::Json(Vec::new()),
            period_hours: 24,
            member_limit: None,
            tenant_limit: None,
            first_time_rule: true,
            expires_after_secs: 86_400,
            reminder_after_secs: Some(3_600),
            escalation_after_secs: None,
            escalation_role: None,
            rate_tolerance_bps: 100,
            reason: "default policy".to_owned(),
            created_at: DateTime::<Utc>::MIN_UTC,
        }
    }

    /// For the tenant's controls: one approval by another admin; there is
    /// no amount to weigh and no counterparty.
    pub fn four_eyes() -> Policy {
        Policy {
            first_time_rule: false,
            reason: "default policy: a second admin approves".to_owned(),
            ..Policy::standard()
        }
    }

    /// For actions that are routine in small amounts: up to `limit` in the
    /// reporting currency (USD unless the tenant chose another) the action
    /// runs at once; above it, one approval.
    pub fn at_once_up_to(limit: Decimal) -> Policy {
        Policy {
            required_approvals: 0,
            tiers: sqlx::types::Json(vec![Tier {
                above: limit,
                approvals: 1,
                role: None,
            }]),
            reason: format!("default policy: at once up to {limit}"),
            ..Policy::standard()
        }
    }

    /// For changes that release money or stop spending it (cancelling an
    /// order, pausing a schedule): they run at once unless an admin saves a
    /// stricter policy, and pay no one, so no first-time rule.
    pub fn at_once() -> Policy {
        Policy {
            required_approvals: 0,
            first_time_rule: false,
            reason: "default policy: runs at once".to_owned(),
            ..Policy::standard()
        }
    }

    /// The tier a value falls in: the highest one it is above.
    fn tier_for(&self, value: Decimal) -> Option<&Tier> {
        self.tiers
            .iter()
            .filter(|t| value > t.above)
            .max_by_key(|t| t.above)
    }

    /// The strictest the policy gets: its highest tier, or the base.
    fn strictest(&self) -> (i32, Option<String>) {
        match self.tiers.iter().max_by_key(|t| t.above) {
            Some(t) => (t.approvals.max(self.required_approvals).max(1), t.role.clone()),
            None => (self.required_approvals.max(1), None),
        }
    }

    /// How many approvals a request needs, from whom, and which rules said so.
    pub fn require(&self, w: &Weighed) -> Requirement {
        let cur = &w.currency;
        let mut need = Requirement {
            approvals: self.required_approvals,
            role: None,
            fired: Vec::new(),
        };
        let raise = |need: &mut Requirement, approvals: i32, role: Option<String>, why: String| {
            if approvals > need.approvals {
                need.approvals = approvals;
            }
            if role.is_some() {
                need.role = role;
            }
            need.fired.push(why);
        };
        if self.required_approvals > 0 {
            need.fired
                .push(format!("Every request: {} approval(s)", self.required_approvals));
        }
        if let Some(t) = self.tier_for(w.value) {
            let whose = t
                .role
                .as_ref()
                .map(|r| format!(", one from {r}"))
                .unwrap_or_default();
            raise(
                &mut need,
                t.approvals,
                t.role.clone(),
                format!("Above {} {cur}: {} approval(s){whose}", t.above, t.approvals),
            );
        }
        for (limit, total, whose) in [
            (self.member_limit, w.member_total, "Your"),
            (self.tenant_limit, w.tenant_total, "The tenant's"),
        ] {
            if let Some(limit) = limit {
                if total + w.value > limit {
                    let (approvals, role) = self.strictest();
                    raise(
                        &mut need,
                        approvals,
                        role,
                        format!(
                            "{whose} {}-hour total would be {} {cur}, above its limit of {limit} {cur}",
                            self.period_hours,
                            total + w.value
                        ),
                    );
                }
            }
        }
        if self.first_time_rule {
            for label in &w.first_time {
                raise(&mut need, 1, None, format!("First payment to {label}"));
            }
        }
        if w.new_payee {
            raise(
                &mut need,
                1,
                None,
                "The payee was saved less than 24 hours ago".to_owned(),
            );
        }
        need
    }

    /// True when the relative move from `filed` to `now` is beyond the
    /// tolerance.
    pub fn rate_moved_too_far(&self, filed: Decimal, now: Decimal) -> bool {
        if filed.is_zero() {
            return true;
        }
        let moved_bps = ((now - filed).abs() / filed) * Decimal::from(10_000);
        moved_bps > Decimal::from(self.rate_tolerance_bps)
    }

    /// When a request filed at `filed` first needs the gate's attention
    /// while it waits: its reminder, its escalation or its expiry.
    pub fn first_due(&self, filed: DateTime<Utc>) -> DateTime<Utc> {
        [
            Some(self.expires_after_secs),
            self.reminder_after_secs,
            self.escalation_after_secs,
        ]
        .into_iter()
        .flatten()
        .map(|secs| filed + chrono::Duration::seconds(secs as i64))
        .min()
        .unwrap_or(filed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn weighed(value: i64) -> Weighed {
        Weighed {
            value: Decimal::from(value),
            currency: "USD".into(),
            ..Weighed::default()
        }
    }

    #[test]
    fn tiers_decide_by_value_in_the_reporting_currency() {
        let mut policy = Policy::standard();
        policy.required_approvals = 0;
        policy.tiers = sqlx::types::Json(vec![
            Tier {
                above: Decimal::from(500),
                approvals: 2,
                role: None,
            },
            Tier {
                above: Decimal::from(5000),
                approvals: 3,
                role: Some("Owner".into()),
            },
        ]);
        assert_eq!(
            policy.require(&weighed(500)).approvals,
            0,
            "at the bound: below the tier"
        );
        let mid = policy.require(&weighed(501));
        assert_eq!((mid.approvals, mid.role.clone()), (2, None));
        assert!(mid.fired[0].contains("Above 500 USD"), "{:?}", mid.fired);
        let top = policy.require(&weighed(9000));
        assert_eq!((top.approvals, top.role.as_deref()), (3, Some("Owner")));
    }

    #[test]
    fn running_totals_stop_splitting_under_a_tier() {
        let mut policy = Policy::standard();
        policy.required_approvals = 0;
        policy.tiers = sqlx::types::Json(vec![Tier {
            above: Decimal::from(1000),
            approvals: 2,
            role: None,
        }]);
        policy.member_limit = Some(Decimal::from(1000));
        let mut second = weighed(600);
        second.member_total = Decimal::from(600);
        let need = policy.require(&second);
        assert_eq!(need.approvals, 2, "600 + 600 is weighed as the largest");
        assert!(
            need.fired
                .iter()
                .any(|f| f.contains("24-hour total would be 1200")),
            "{:?}",
            need.fired
        );
        policy.tenant_limit = Some(Decimal::from(10_000));
        let mut busy = weighed(10);
        busy.tenant_total = Decimal::from(9_995);
        assert_eq!(policy.require(&busy).approvals, 2);
    }

    #[test]
    fn first_payments_and_new_payees_always_wait() {
        let mut policy = Policy::standard();
        policy.required_approvals = 0;
        let mut first = weighed(5);
        first.first_time = vec!["account ····6789".into()];
        let need = policy.require(&first);
        assert_eq!(need.approvals, 1);
        assert_eq!(need.fired, vec!["First payment to account ····6789".to_owned()]);
        policy.first_time_rule = false;
        assert_eq!(policy.require(&first).approvals, 0);
        let mut new_payee = weighed(5);
        new_payee.new_payee = true;
        assert_eq!(
            policy.require(&new_payee).approvals,
            1,
            "whatever the policy says"
        );
    }

    #[test]
    fn rate_tolerance() {
        let policy = Policy::standard();
        let filed = Decimal::from(1500);
        assert!(!policy.rate_moved_too_far(filed, Decimal::from_str("1514.9").unwrap()));
        assert!(policy.rate_moved_too_far(filed, Decimal::from_str("1515.1").unwrap()));
        assert!(policy.rate_moved_too_far(filed, Decimal::from_str("1484.9").unwrap()));
    }

    #[test]
    fn statuses_move_only_forward_except_a_send_back() {
        use RequestStatus::*;
        assert!(Pending.can_move_to(Approved));
        assert!(Executing.can_move_to(Pending));
        assert!(!Executed.can_move_to(Failed));
        assert!(!Rejected.can_move_to(Approved));
        assert!(!Cancelled.can_move_to(Approved));
        assert!(!Expired.can_move_to(Approved));
        assert!(!Pending.can_move_to(Executing), "nothing runs unapproved");
    }
}
