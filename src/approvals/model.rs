//! The approval rules as plain functions over plain data: the statuses a
//! request moves through, one version of a policy, who is an eligible
//! approver, how many approvals a request needs, and whether a rate moved
//! too far. Nothing here names a kind of action.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::Serialize;
use uuid::Uuid;

use crate::access::permissions::Permission;
use crate::access::store::Grant;
use crate::access::ties::Ties;

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

/// A member who might approve, with the grants that gave them their
/// membership, their role and their role's permissions.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub user_id: Uuid,
    pub email: String,
    pub role_id: Uuid,
    pub role_name: String,
    pub permissions: Vec<String>,
    pub grants: Vec<Grant>,
}

/// Who filed a request, and when.
#[derive(Debug, Clone, Copy)]
pub struct Filed {
    pub by: Uuid,
    pub at: DateTime<Utc>,
}

/// The tenant's active members who might approve, and the ties among them
/// (`access::ties`): read once for a filing or a decision.
#[derive(Debug, Clone, Default)]
pub struct Colleagues {
    pub members: Vec<Candidate>,
    pub ties: Ties,
}

impl Colleagues {
    pub fn find(&self, user: Uuid) -> Option<&Candidate> {
        self.members.iter().find(|m| m.user_id == user)
    }

    /// Whether ties bind this quorum. They always bind one that moves
    /// money. A control binds them only while some other admin who may
    /// approve it is untied to the filer: where every other admin was added
    /// by the filer alone (or added them), four eyes on controls rest on
    /// the admins there are, rather than letting the filer act alone.
    fn ties_bind(&self, kind: Kind, control: bool, filed: &Filed) -> bool {
        !control
            || self.members.iter().any(|m| {
                m.user_id != filed.by
                    && m.permissions.iter().any(|p| p == kind.approve_permission.name())
                    && !self.ties.tied(m.user_id, filed.by)
            })
    }

    pub fn may_approve(
        &self,
        policy: &Policy,
        (kind, control): (Kind, bool),
        who: &Candidate,
        filed: &Filed,
        escalated: bool,
    ) -> Result<(), String> {
        let ties = self.ties_bind(kind, control, filed).then_some(&self.ties);
        may_approve(policy, kind, who, filed, escalated, ties)
    }

    /// Members other than the requester who may approve now.
    pub fn eligible(&self, policy: &Policy, kind: (Kind, bool), filed: &Filed) -> Vec<&Candidate> {
        self.members
            .iter()
            .filter(|m| self.may_approve(policy, kind, m, filed, false).is_ok())
            .collect()
    }

    /// The message when a request can't be filed for want of approvers: who
    /// would qualify but for a tie, and what the member can do about it.
    pub fn missing_approvers_message(
        &self,
        policy: &Policy,
        kind: (Kind, bool),
        filed: &Filed,
        needed: i32,
    ) -> String {
        let found = self.eligible(policy, kind, filed);
        let mut message = format!(
            "This needs {needed} approval(s) by someone independent of you, and {} colleague(s) can give one.",
            found.len()
        );
        let untied = Colleagues {
            members: self.members.clone(),
            ties: Ties::default(),
        };
        let tied: Vec<&str> = untied
            .eligible(policy, kind, filed)
            .into_iter()
            .filter(|m| !found.iter().any(|f| f.user_id == m.user_id))
            .map(|m| m.email.as_str())
            .collect();
        let (control, kind) = (kind.1, kind.0);
        if tied.is_empty() {
            let who = if policy.approver_roles.is_empty() {
                format!(
                    "a role with '{}' (such as {})",
                    kind.approve_permission,
                    crate::access::permissions::example_role(kind.approve_permission)
                )
            } else {
                format!("the {} role", policy.approver_roles.join(" or "))
            };
            message.push_str(&format!(" Ask an admin to give {who} to another member first."));
            return message;
        }
        message.push_str(&format!(
            " {} could, but you added them or they added you (directly or through someone added alone), \
             and no second admin confirmed that, so their approval would not be independent.",
            tied.join(", ")
        ));
        let filers: Vec<&str> = self
            .members
            .iter()
            .filter(|m| {
                m.user_id != filed.by && m.permissions.iter().any(|p| p == kind.request_permission.name())
            })
            .filter(|m| {
                let theirs = Filed {
                    by: m.user_id,
                    ..*filed
                };
                self.eligible(policy, (kind, control), &theirs).len() as i32 >= needed
            })
            .map(|m| m.email.as_str())
            .collect();
        if !filers.is_empty() {
            message.push_str(&format!(
                " {} can file it instead, and it can be approved then.",
                filers.join(", ")
            ));
        }
        message.push_str(
            " Or an admin other than the one who added them confirms those memberships on the Members page.",
        );
        message
    }
}

/// Why someone may not approve, in words for them. An approver must be
/// independent of the maker: not the maker, not tied to them by grants
/// made alone (`ties`, when they bind), and not given their membership,
/// role or approve permission after the request was filed (so nobody can
/// make themselves an approver for a request already waiting).
pub fn may_approve(
    policy: &Policy,
    kind: Kind,
    who: &Candidate,
    filed: &Filed,
    escalated: bool,
    ties: Option<&Ties>,
) -> Result<(), String> {
    if who.user_id == filed.by {
        return Err("You filed this request; someone else must approve it.".to_owned());
    }
    if ties.is_some_and(|t| t.tied(who.user_id, filed.by)) {
        return Err(
            "You and the member who filed this request are linked by a grant one admin made alone (one of you \
             added the other, directly or through someone added alone), so your approval would not be independent. \
             Another approver must decide, or a second admin confirms the grant on the Members page."
                .to_owned(),
        );
    }
    let late = who.grants.iter().any(|g| {
        (g.user_id.is_some() || g.added.iter().any(|p| p == kind.approve_permission.name()))
            && g.granted_at > filed.at
    });
    if late {
        return Err(
            "Your membership, role or approve permission was given after this request was filed, \
             so it counts for later requests only. Another approver must decide."
                .to_owned(),
        );
    }
    let backup = escalated && policy.escalation_role.as_deref() == Some(who.role_name.as_str());
    if backup {
        return Ok(());
    }
    if !who
        .permissions
        .iter()
        .any(|p| p == kind.approve_permission.name())
    {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    const PAYOUT: Kind = Kind {
        key: "payout",
        label: "Payouts",
        read_permission: Permission::PayoutsRead,
        request_permission: Permission::PayoutsRequest,
        approve_permission: Permission::PayoutsApprove,
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
            id: Some(1),
            user_id: added.is_empty().then_some(who.user_id),
            role_id: who.role_id,
            added: added.iter().map(|p| (*p).to_owned()).collect(),
            granted_by: by,
            granted_at: at,
            confirmed_by: None,
        }
    }

    /// The members with the ties their grants make.
    fn colleagues(members: &[Candidate]) -> Colleagues {
        let grants: Vec<Grant> = members.iter().flat_map(|m| m.grants.clone()).collect();
        let roles = members.iter().map(|m| (m.user_id, m.role_id)).collect();
        Colleagues {
            members: members.to_vec(),
            ties: Ties::new(&grants, &roles),
        }
    }

    #[test]
    fn an_approver_the_requester_added_alone_does_not_count() {
        let policy = Policy::standard();
        let admin = member("Admin", &["payouts.approve", "members.manage"]);
        let filed = filed_by(admin.user_id);
        let long_ago = filed.at - chrono::Duration::days(30);
        let mut added_by_maker = member("Approver", &["payouts.approve"]);
        added_by_maker.grants = vec![grant(&added_by_maker, &[], Some(admin.user_id), long_ago)];
        let team = colleagues(&[admin.clone(), added_by_maker.clone()]);
        let err = team
            .may_approve(&policy, (PAYOUT, false), &added_by_maker, &filed, false)
            .unwrap_err();
        assert!(err.contains("not be independent"), "{err}");
        // Nor the other way round: the admin approving their own operator.
        let theirs = filed_by(added_by_maker.user_id);
        assert!(team
            .may_approve(&policy, (PAYOUT, false), &admin, &theirs, false)
            .is_err());

        // Once a second admin confirmed the grant, it ties no one.
        let mut confirmed = added_by_maker.clone();
        confirmed.grants[0].confirmed_by = Some(Uuid::new_v4());
        let team = colleagues(&[admin.clone(), confirmed.clone()]);
        assert!(team
            .may_approve(&policy, (PAYOUT, false), &confirmed, &filed, false)
            .is_ok());

        // The role's approve permission added by the maker alone ties too.
        let mut role_by_maker = member("Custom", &["payouts.approve"]);
        role_by_maker.grants = vec![grant(
            &role_by_maker,
            &["payouts.approve"],
            Some(admin.user_id),
            long_ago,
        )];
        let team = colleagues(&[admin.clone(), role_by_maker.clone()]);
        assert!(team
            .may_approve(&policy, (PAYOUT, false), &role_by_maker, &filed, false)
            .is_err());

        // Someone else's grant made after filing counts for later requests only.
        let mut late = member("Approver", &["payouts.approve"]);
        late.grants = vec![grant(&late, &[], None, filed.at + chrono::Duration::seconds(1))];
        let team = colleagues(&[admin.clone(), late.clone()]);
        let err = team
            .may_approve(&policy, (PAYOUT, false), &late, &filed, false)
            .unwrap_err();
        assert!(err.contains("after this request was filed"), "{err}");
        let later = Filed {
            at: filed.at + chrono::Duration::seconds(5),
            ..filed
        };
        assert!(team
            .may_approve(&policy, (PAYOUT, false), &late, &later, false)
            .is_ok());

        // Even a backup role, once escalated, must be independent.
        let mut policy = policy;
        policy.escalation_role = Some("Approver".into());
        let team = colleagues(&[admin, added_by_maker.clone()]);
        assert!(team
            .may_approve(&policy, (PAYOUT, false), &added_by_maker, &filed, true)
            .is_err());
    }

    #[test]
    fn a_chain_of_grants_made_alone_never_makes_a_quorum_but_colleagues_of_one_admin_do() {
        let policy = Policy::standard();
        let long_ago = Utc::now() - chrono::Duration::days(30);
        let admin = member("Admin", &["payouts.approve", "payouts.request", "members.manage"]);
        let mut invited_admin = member("Admin", &["payouts.approve", "members.manage"]);
        invited_admin.grants = vec![grant(&invited_admin, &[], Some(admin.user_id), long_ago)];
        let mut approver = member("Approver", &["payouts.approve"]);
        approver.grants = vec![grant(&approver, &[], Some(invited_admin.user_id), long_ago)];
        let mut operator = member("Operator", &["payouts.request"]);
        operator.grants = vec![grant(&operator, &[], Some(admin.user_id), long_ago)];
        let team = colleagues(&[
            admin.clone(),
            invited_admin.clone(),
            approver.clone(),
            operator.clone(),
        ]);
        let admins_payout = filed_by(admin.user_id);
        assert!(team.eligible(&policy, (PAYOUT, false), &admins_payout).is_empty());
        let message = team.missing_approvers_message(&policy, (PAYOUT, false), &admins_payout, 1);
        assert!(message.contains(&approver.email), "{message}");
        assert!(
            message.contains(&format!("{} can file it instead", operator.email)),
            "{message}"
        );
        let operators_payout = filed_by(operator.user_id);
        let mut eligible: Vec<Uuid> = team
            .eligible(&policy, (PAYOUT, false), &operators_payout)
            .iter()
            .map(|m| m.user_id)
            .collect();
        eligible.sort();
        let mut cousins = vec![invited_admin.user_id, approver.user_id];
        cousins.sort();
        assert_eq!(
            eligible, cousins,
            "colleagues of one admin, never the admin who added the operator"
        );
    }

    #[test]
    fn a_control_binds_ties_only_while_an_untied_admin_could_approve_it() {
        let policy = Policy::standard();
        let long_ago = Utc::now() - chrono::Duration::days(30);
        const MEMBERS: Kind = Kind {
            key: "membership",
            label: "Membership changes",
            read_permission: Permission::MembersManage,
            request_permission: Permission::MembersManage,
            approve_permission: Permission::MembersManage,
        };
        let owner = member("Owner", &["members.manage"]);
        let mut second = member("Admin", &["members.manage"]);
        second.grants = vec![grant(&second, &[], Some(owner.user_id), long_ago)];
        let team = colleagues(&[owner.clone(), second.clone()]);
        let filed = filed_by(second.user_id);
        assert!(
            team.may_approve(&policy, (MEMBERS, true), &owner, &filed, false)
                .is_ok(),
            "the only other admin decides the control, though the filer was added alone by them"
        );
        let independent = member("Admin", &["members.manage"]);
        let team = colleagues(&[owner.clone(), second, independent.clone()]);
        assert!(team
            .may_approve(&policy, (MEMBERS, true), &owner, &filed, false)
            .is_err());
        assert!(team
            .may_approve(&policy, (MEMBERS, true), &independent, &filed, false)
            .is_ok());
    }

    #[test]
    fn requesters_never_approve_their_own_even_as_owners() {
        let policy = Policy::standard();
        let owner = member("Owner", &["payouts.approve", "payouts.request"]);
        let err = may_approve(&policy, PAYOUT, &owner, &filed_by(owner.user_id), false, None).unwrap_err();
        assert!(err.contains("someone else"));
    }

    #[test]
    fn roles_permissions_and_escalation_decide_eligibility() {
        let mut policy = Policy::standard();
        let requester = filed_by(Uuid::new_v4());
        let approver = member("Approver", &["payouts.approve"]);
        let viewer = member("Viewer", &[]);
        let admin = member("Admin", &["payouts.approve"]);
        let team = colleagues(&[approver.clone(), viewer.clone(), admin.clone()]);
        assert_eq!(team.eligible(&policy, (PAYOUT, false), &requester).len(), 2);
        policy.approver_roles = vec!["Approver".into()];
        assert_eq!(team.eligible(&policy, (PAYOUT, false), &requester).len(), 1);
        policy.escalation_role = Some("Viewer".into());
        assert!(may_approve(&policy, PAYOUT, &viewer, &requester, false, None).is_err());
        assert!(may_approve(&policy, PAYOUT, &viewer, &requester, true, None).is_ok());
    }

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
