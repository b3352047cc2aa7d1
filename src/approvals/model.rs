//! The approval rules as plain functions over plain data: the statuses a
//! request moves through, one version of a policy, who is an eligible
//! approver, how many approvals a request needs, and whether a rate moved
//! too far. Nothing here names a kind of action.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::Serialize;
use uuid::Uuid;

use crate::access::store::Grant;

/// A kind of action the gate knows, declared by its own domain and
/// registered at start-up. `key` is what the database stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind {
    pub key: &'static str,
    /// Plural, for headings: "Payouts".
    pub label: &'static str,
    pub request_permission: &'static str,
    pub approve_permission: &'static str,
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

/// One version of a tenant's policy for a kind of action.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Policy {
    pub version: i32,
    pub required_approvals: i32,
    pub approver_roles: Vec<String>,
    pub threshold: Option<Decimal>,
    /// Approvals needed at or below the threshold; 0 lets the action run
    /// at once (still through the gate).
    pub below_threshold_approvals: i32,
    pub expires_after_secs: i32,
    pub reminder_after_secs: Option<i32>,
    pub escalation_after_secs: Option<i32>,
    pub escalation_role: Option<String>,
    pub rate_tolerance_bps: i32,
    pub reason: String,
    pub created_at: DateTime<Utc>,
}

impl Policy {
    /// Until an admin sets one: one approval by someone other than the
    /// requester, a day to decide, a reminder after an hour, 1% rate
    /// tolerance.
    pub fn standard() -> Policy {
        Policy {
            version: 0,
            required_approvals: 1,
            approver_roles: Vec::new(),
            threshold: None,
            below_threshold_approvals: 1,
            expires_after_secs: 86_400,
            reminder_after_secs: Some(3_600),
            escalation_after_secs: None,
            escalation_role: None,
            rate_tolerance_bps: 100,
            reason: "default policy".to_owned(),
            created_at: DateTime::<Utc>::MIN_UTC,
        }
    }

    /// Approvals a request of `amount` needs: the policy's number above
    /// the threshold, `below_threshold_approvals` at or below it.
    pub fn required_for(&self, amount: Decimal) -> i32 {
        match self.threshold {
            Some(t) if amount <= t => self.below_threshold_approvals,
            _ => self.required_approvals,
        }
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
}

/// A member who might approve, with the grants that gave them their
/// membership, their role and their role's permissions.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Candidate {
    pub user_id: Uuid,
    pub email: String,
    pub role_id: Uuid,
    pub role_name: String,
    pub permissions: Vec<String>,
    #[sqlx(skip)]
    pub grants: Vec<Grant>,
}

/// Who filed a request, and when.
#[derive(Debug, Clone, Copy)]
pub struct Filed {
    pub by: Uuid,
    pub at: DateTime<Utc>,
}

/// Why someone may not approve, in words for them. An approver must be
/// independent of the maker: not the maker, not given their membership,
/// their role or their role's approve permission by the maker, and not
/// given them after the request was filed (so nobody can make themselves
/// an approver for a request already waiting).
pub fn may_approve(
    policy: &Policy,
    kind: Kind,
    who: &Candidate,
    filed: &Filed,
    escalated: bool,
) -> Result<(), String> {
    if who.user_id == filed.by {
        return Err("You filed this request; someone else must approve it.".to_owned());
    }
    let relevant = who
        .grants
        .iter()
        .filter(|g| g.user_id.is_some() || g.added.iter().any(|p| p == kind.approve_permission));
    for grant in relevant {
        if grant.granted_by == Some(filed.by) {
            return Err(
                "The member who filed this request gave you your membership, your role or its approve permission, \
                 so your approval would not be independent. Another approver must decide."
                    .to_owned(),
            );
        }
        if grant.granted_at > filed.at {
            return Err(
                "Your membership, role or approve permission was given after this request was filed, \
                 so it counts for later requests only. Another approver must decide."
                    .to_owned(),
            );
        }
    }
    let backup = escalated && policy.escalation_role.as_deref() == Some(who.role_name.as_str());
    if backup {
        return Ok(());
    }
    if !who.permissions.iter().any(|p| p == kind.approve_permission) {
        return Err(format!(
            "Approving needs the '{}' permission.",
            kind.approve_permission
        ));
    }
    if !policy.approver_roles.is_empty() && !policy.approver_roles.contains(&who.role_name) {
        return Err(format!(
            "The policy lets only {} approve.",
            policy.approver_roles.join(", ")
        ));
    }
    Ok(())
}

/// Members other than the requester who may approve now.
pub fn eligible<'a>(
    policy: &Policy,
    kind: Kind,
    filed: &Filed,
    members: &'a [Candidate],
) -> Vec<&'a Candidate> {
    members
        .iter()
        .filter(|m| may_approve(policy, kind, m, filed, false).is_ok())
        .collect()
}

/// The message when a request can't be filed for want of approvers.
pub fn missing_approvers_message(policy: &Policy, kind: Kind, needed: i32, found: usize) -> String {
    let who = if policy.approver_roles.is_empty() {
        format!("a role with '{}' (such as Approver)", kind.approve_permission)
    } else {
        format!("the {} role", policy.approver_roles.join(" or "))
    };
    format!(
        "This needs {needed} approval(s) by someone other than you, and {found} colleague(s) can give one. \
         Ask an admin to give {who} to another member first (a member you added yourself doesn't count)."
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    const PAYOUT: Kind = Kind {
        key: "payout",
        label: "Payouts",
        request_permission: "payouts.request",
        approve_permission: "payouts.approve",
    };

    fn member(role: &str, perms: &[&str]) -> Candidate {
        Candidate {
            user_id: Uuid::new_v4(),
            email: format!("{role}@example.com"),
            role_id: Uuid::new_v4(),
            role_name: role.to_owned(),
            permissions: perms.iter().map(|p| (*p).to_owned()).collect(),
            grants: Vec::new(),
        }
    }

    fn filed_by(by: Uuid) -> Filed {
        Filed { by, at: Utc::now() }
    }

    fn grant(who: &Candidate, added: &[&str], by: Option<Uuid>, at: DateTime<Utc>) -> Grant {
        Grant {
            user_id: added.is_empty().then_some(who.user_id),
            role_id: who.role_id,
            added: added.iter().map(|p| (*p).to_owned()).collect(),
            granted_by: by,
            granted_at: at,
        }
    }

    #[test]
    fn an_approver_made_by_the_requester_does_not_count() {
        let policy = Policy::standard();
        let admin = Uuid::new_v4();
        let filed = filed_by(admin);
        let long_ago = filed.at - chrono::Duration::days(30);
        let mut added_by_maker = member("Approver", &["payouts.approve"]);
        added_by_maker.grants = vec![grant(&added_by_maker, &[], Some(admin), long_ago)];
        let err = may_approve(&policy, PAYOUT, &added_by_maker, &filed, false).unwrap_err();
        assert!(err.contains("not be independent"), "{err}");

        // The role's approve permission given by the maker taints it too;
        // another permission they added does not.
        let mut role_by_maker = member("Custom", &["payouts.approve"]);
        role_by_maker.grants = vec![grant(&role_by_maker, &["payouts.approve"], Some(admin), long_ago)];
        assert!(may_approve(&policy, PAYOUT, &role_by_maker, &filed, false).is_err());
        role_by_maker.grants = vec![grant(&role_by_maker, &["balances.read"], Some(admin), long_ago)];
        assert!(may_approve(&policy, PAYOUT, &role_by_maker, &filed, false).is_ok());

        // Someone else's grant made after filing counts for later requests only.
        let mut late = member("Approver", &["payouts.approve"]);
        late.grants = vec![grant(
            &late,
            &[],
            Some(Uuid::new_v4()),
            filed.at + chrono::Duration::seconds(1),
        )];
        let err = may_approve(&policy, PAYOUT, &late, &filed, false).unwrap_err();
        assert!(err.contains("after this request was filed"), "{err}");
        let later = Filed {
            at: filed.at + chrono::Duration::seconds(5),
            ..filed
        };
        assert!(may_approve(&policy, PAYOUT, &late, &later, false).is_ok());

        // Even a backup role, once escalated, must be independent.
        let mut policy = policy;
        policy.escalation_role = Some("Approver".into());
        assert!(may_approve(&policy, PAYOUT, &added_by_maker, &filed, true).is_err());
    }

    #[test]
    fn requesters_never_approve_their_own_even_as_owners() {
        let policy = Policy::standard();
        let owner = member("Owner", &["payouts.approve", "payouts.request"]);
        let err = may_approve(&policy, PAYOUT, &owner, &filed_by(owner.user_id), false).unwrap_err();
        assert!(err.contains("someone else"));
    }

    #[test]
    fn roles_permissions_and_escalation_decide_eligibility() {
        let mut policy = Policy::standard();
        let requester = filed_by(Uuid::new_v4());
        let approver = member("Approver", &["payouts.approve"]);
        let viewer = member("Viewer", &[]);
        let admin = member("Admin", &["payouts.approve"]);
        let members = vec![approver.clone(), viewer.clone(), admin.clone()];
        assert_eq!(eligible(&policy, PAYOUT, &requester, &members).len(), 2);
        policy.approver_roles = vec!["Approver".into()];
        assert_eq!(eligible(&policy, PAYOUT, &requester, &members).len(), 1);
        policy.escalation_role = Some("Viewer".into());
        assert!(may_approve(&policy, PAYOUT, &viewer, &requester, false).is_err());
        assert!(may_approve(&policy, PAYOUT, &viewer, &requester, true).is_ok());
    }

    #[test]
    fn thresholds_and_rate_tolerance() {
        let mut policy = Policy::standard();
        policy.required_approvals = 2;
        policy.threshold = Some(Decimal::from(1000));
        assert_eq!(policy.required_for(Decimal::from(1000)), 1);
        assert_eq!(policy.required_for(Decimal::from(1001)), 2);
        policy.below_threshold_approvals = 0;
        assert_eq!(policy.required_for(Decimal::from(5)), 0, "runs at once");
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
