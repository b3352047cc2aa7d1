//! Who may approve a request: the members who could, the ties among them
//! (`access::ties`), and the rules that keep a quorum from being one
//! person's. Plain functions over plain data, as the rest of the model.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::model::{Kind, Policy};
use crate::access::store::Grant;
use crate::access::ties::Ties;

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
        // Who would qualify were it not for a tie.
        let tied: Vec<&str> = self
            .members
            .iter()
            .filter(|m| may_approve(policy, kind.0, m, filed, false, None).is_ok())
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
    use crate::access::permissions::Permission;

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
}
