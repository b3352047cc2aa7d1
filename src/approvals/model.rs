//! The approval rules as plain functions: which permission files and which
//! approves each kind of action, who is an eligible approver, how many
//! approvals a request needs, and whether a rate moved too far.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use uuid::Uuid;

use crate::access::store::Grant;

/// The kinds of action that wait for approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActionKind {
    Payout,
    CardTermination,
}

impl ActionKind {
    pub const ALL: &'static [ActionKind] = &[ActionKind::Payout, ActionKind::CardTermination];

    pub fn as_str(self) -> &'static str {
        match self {
            ActionKind::Payout => "payout",
            ActionKind::CardTermination => "card_termination",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|k| k.as_str() == s)
    }

    pub fn label(self) -> &'static str {
        match self {
            ActionKind::Payout => "Payouts",
            ActionKind::CardTermination => "Card terminations",
        }
    }

    pub fn request_permission(self) -> &'static str {
        match self {
            ActionKind::Payout => "payouts.request",
            ActionKind::CardTermination => "cards.terminate.request",
        }
    }

    pub fn approve_permission(self) -> &'static str {
        match self {
            ActionKind::Payout => "payouts.approve",
            ActionKind::CardTermination => "cards.terminate.approve",
        }
    }
}

/// One version of a tenant's policy for a kind of action.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Policy {
    pub version: i32,
    pub required_approvals: i32,
    pub approver_roles: Vec<String>,
    pub threshold: Option<Decimal>,
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
    pub fn default_for(_kind: ActionKind) -> Policy {
        Policy {
            version: 0,
            required_approvals: 1,
            approver_roles: Vec::new(),
            threshold: None,
            expires_after_secs: 86_400,
            reminder_after_secs: Some(3_600),
            escalation_after_secs: None,
            escalation_role: None,
            rate_tolerance_bps: 100,
            reason: "default policy".to_owned(),
            created_at: DateTime::<Utc>::MIN_UTC,
        }
    }

    /// Approvals a request of `amount` needs: one at or below the
    /// threshold, the policy's number above it.
    pub fn required_for(&self, amount: Decimal) -> i32 {
        match self.threshold {
            Some(t) if amount <= t => 1,
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
    kind: ActionKind,
    who: &Candidate,
    filed: &Filed,
    escalated: bool,
) -> Result<(), String> {
    if who.user_id == filed.by {
        return Err("You filed this request; someone else must approve it.".to_owned());
    }
    let approving = kind.approve_permission();
    let relevant = who
        .grants
        .iter()
        .filter(|g| g.user_id.is_some() || g.added.iter().any(|p| p == approving));
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
    if !who.permissions.iter().any(|p| p == kind.approve_permission()) {
        return Err(format!(
            "Approving needs the '{}' permission.",
            kind.approve_permission()
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
    kind: ActionKind,
    filed: &Filed,
    members: &'a [Candidate],
) -> Vec<&'a Candidate> {
    members
        .iter()
        .filter(|m| may_approve(policy, kind, m, filed, false).is_ok())
        .collect()
}

/// The message when a request can't be filed for want of approvers.
pub fn missing_approvers_message(policy: &Policy, kind: ActionKind, needed: i32, found: usize) -> String {
    let who = if policy.approver_roles.is_empty() {
        format!("a role with '{}' (such as Approver)", kind.approve_permission())
    } else {
        format!("the {} role", policy.approver_roles.join(" or "))
    };
    format!(
        "This needs {needed} approval(s) by someone other than you, and {found} colleague(s) can give one. \
         Ask an admin to give {who} to another member first."
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

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
        let policy = Policy::default_for(ActionKind::Payout);
        let admin = Uuid::new_v4();
        let filed = filed_by(admin);
        let long_ago = filed.at - chrono::Duration::days(30);
        let mut added_by_maker = member("Approver", &["payouts.approve"]);
        added_by_maker.grants = vec![grant(&added_by_maker, &[], Some(admin), long_ago)];
        let err = may_approve(&policy, ActionKind::Payout, &added_by_maker, &filed, false).unwrap_err();
        assert!(err.contains("not be independent"), "{err}");

        // The role's approve permission given by the maker taints it too;
        // another permission they added does not.
        let mut role_by_maker = member("Custom", &["payouts.approve"]);
        role_by_maker.grants = vec![grant(&role_by_maker, &["payouts.approve"], Some(admin), long_ago)];
        assert!(may_approve(&policy, ActionKind::Payout, &role_by_maker, &filed, false).is_err());
        role_by_maker.grants = vec![grant(&role_by_maker, &["balances.read"], Some(admin), long_ago)];
        assert!(may_approve(&policy, ActionKind::Payout, &role_by_maker, &filed, false).is_ok());

        // Someone else's grant made after filing counts for later requests only.
        let mut late = member("Approver", &["payouts.approve"]);
        late.grants = vec![grant(
            &late,
            &[],
            Some(Uuid::new_v4()),
            filed.at + chrono::Duration::seconds(1),
        )];
        let err = may_approve(&policy, ActionKind::Payout, &late, &filed, false).unwrap_err();
        assert!(err.contains("after this request was filed"), "{err}");
        let later = filed_by(admin);
        let later = Filed {
            at: later.at + chrono::Duration::seconds(5),
            ..later
        };
        assert!(may_approve(&policy, ActionKind::Payout, &late, &later, false).is_ok());

        // Even a backup role, once escalated, must be independent.
        let mut policy = policy;
        policy.escalation_role = Some("Approver".into());
        assert!(may_approve(&policy, ActionKind::Payout, &added_by_maker, &filed, true).is_err());
    }

    #[test]
    fn requesters_never_approve_their_own_even_as_owners() {
        let policy = Policy::default_for(ActionKind::Payout);
        let owner = member("Owner", &["payouts.approve", "payouts.request"]);
        let err = may_approve(
            &policy,
            ActionKind::Payout,
            &owner,
            &filed_by(owner.user_id),
            false,
        )
        .unwrap_err();
        assert!(err.contains("someone else"));
    }

    #[test]
    fn roles_permissions_and_escalation_decide_eligibility() {
        let mut policy = Policy::default_for(ActionKind::Payout);
        let requester = filed_by(Uuid::new_v4());
        let approver = member("Approver", &["payouts.approve"]);
        let viewer = member("Viewer", &[]);
        let admin = member("Admin", &["payouts.approve"]);
        let members = vec![approver.clone(), viewer.clone(), admin.clone()];
        assert_eq!(
            eligible(&policy, ActionKind::Payout, &requester, &members).len(),
            2
        );
        policy.approver_roles = vec!["Approver".into()];
        assert_eq!(
            eligible(&policy, ActionKind::Payout, &requester, &members).len(),
            1
        );
        policy.escalation_role = Some("Viewer".into());
        assert!(may_approve(&policy, ActionKind::Payout, &viewer, &requester, false).is_err());
        assert!(may_approve(&policy, ActionKind::Payout, &viewer, &requester, true).is_ok());
    }

    #[test]
    fn thresholds_and_rate_tolerance() {
        let mut policy = Policy::default_for(ActionKind::Payout);
        policy.required_approvals = 2;
        policy.threshold = Some(Decimal::from(1000));
        assert_eq!(policy.required_for(Decimal::from(1000)), 1);
        assert_eq!(policy.required_for(Decimal::from(1001)), 2);
        let filed = Decimal::from(1500);
        assert!(!policy.rate_moved_too_far(filed, Decimal::from_str("1514.9").unwrap()));
        assert!(policy.rate_moved_too_far(filed, Decimal::from_str("1515.1").unwrap()));
        assert!(policy.rate_moved_too_far(filed, Decimal::from_str("1484.9").unwrap()));
    }
}
