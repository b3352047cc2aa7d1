//! Who is tied to whom by grants one admin made alone, the rule that keeps
//! a quorum from being assembled by one person.
//!
//! A grant (a membership, a role change, permissions added to a role) is
//! *confirmed* when a second admin approved it through the gate or
//! confirmed it afterwards on the Members page, or when the platform made
//! it (a tenant's first owner). Any other grant was made alone, and it
//! ties its granter to its grantee (for permissions added to a role: to
//! every member holding that role). Ties run along chains: the members
//! someone granted alone, the ones those granted alone, and so on down;
//! and up, whoever granted them alone, and whoever granted that one. An
//! approval never counts from the filer's chain in either direction.
//! Members two hops apart through a common granter (two colleagues the
//! same admin invited) are not on one chain: one may file and the other
//! approve, which is how a tenant with one admin works at all, and the
//! request says so (`Ties::added_alone`).
//!
//! How this compares: Fineract's maker-checker and django-maker-checker
//! only keep the checker from being the maker; Fireblocks' admin quorum
//! and Mercury's dual admin approval put a second admin on every user and
//! role change but trust whatever admins existed before the quorum did.
//! Paydesk does both and remembers which grants no second admin saw, so
//! those can't make a quorum on their own.

use std::collections::{HashMap, HashSet};

use uuid::Uuid;

use super::store::Grant;

/// The grants one admin made alone, as edges from granter to grantee.
#[derive(Debug, Default, Clone)]
pub struct Ties {
    /// grantee -> the members who granted them something alone.
    granters: HashMap<Uuid, HashSet<Uuid>>,
    /// granter -> the members they granted something alone.
    grantees: HashMap<Uuid, HashSet<Uuid>>,
}

impl Ties {
    /// The ties among the members in `roles` (member -> their role), from
    /// the tenant's grants.
    pub fn new(grants: &[Grant], roles: &HashMap<Uuid, Uuid>) -> Ties {
        let mut ties = Ties::default();
        for grant in grants.iter().filter(|g| g.made_alone()) {
            let Some(by) = grant.granted_by else { continue };
            match grant.user_id {
                Some(user) => ties.tie(by, user),
                None => {
                    for (user, role) in roles {
                        if *role == grant.role_id {
                            ties.tie(by, *user);
                        }
                    }
                }
            }
        }
        ties
    }

    fn tie(&mut self, by: Uuid, to: Uuid) {
        if by == to {
            return;
        }
        self.granters.entry(to).or_default().insert(by);
        self.grantees.entry(by).or_default().insert(to);
    }

    fn reach(edges: &HashMap<Uuid, HashSet<Uuid>>, from: Uuid) -> HashSet<Uuid> {
        let mut seen = HashSet::new();
        let mut stack = vec![from];
        while let Some(at) = stack.pop() {
            for next in edges.get(&at).into_iter().flatten() {
                if seen.insert(*next) {
                    stack.push(*next);
                }
            }
        }
        seen
    }

    /// Whether `a` and `b` are on one chain of grants made alone, in
    /// either direction.
    pub fn tied(&self, a: Uuid, b: Uuid) -> bool {
        Self::reach(&self.grantees, a).contains(&b) || Self::reach(&self.granters, a).contains(&b)
    }

    /// Whoever granted `member` something alone, directly.
    pub fn added_alone_by(&self, member: Uuid) -> Vec<Uuid> {
        self.granters
            .get(&member)
            .map(|g| g.iter().copied().collect())
            .unwrap_or_default()
    }

    /// Whether `member` holds anything no second admin confirmed.
    pub fn added_alone(&self, member: Uuid) -> bool {
        self.granters.get(&member).is_some_and(|g| !g.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;

    fn grant(by: Uuid, to: Uuid, confirmed: bool) -> Grant {
        Grant {
            id: Some(1),
            user_id: Some(to),
            role_id: Uuid::nil(),
            added: Vec::new(),
            granted_by: Some(by),
            granted_at: Utc::now(),
            confirmed_by: confirmed.then(Uuid::new_v4),
        }
    }

    #[test]
    fn grants_made_alone_tie_along_chains_both_ways_but_not_across() {
        let [admin, invited_admin, approver, operator, outsider] = std::array::from_fn(|_| Uuid::new_v4());
        let grants = vec![
            grant(admin, invited_admin, false),
            grant(invited_admin, approver, false),
            grant(admin, operator, false),
            grant(admin, outsider, true),
        ];
        let ties = Ties::new(&grants, &HashMap::new());
        assert!(ties.tied(admin, approver), "down a chain of two");
        assert!(ties.tied(approver, admin), "and up it");
        assert!(ties.tied(operator, admin), "the admin's own operator");
        assert!(
            !ties.tied(operator, approver),
            "colleagues of one admin are not on one chain"
        );
        assert!(!ties.tied(admin, outsider), "a confirmed grant does not tie");
        assert!(ties.added_alone(approver));
        assert!(!ties.added_alone(outsider));
    }

    #[test]
    fn permissions_added_to_a_role_alone_tie_its_holders() {
        let [admin, holder, other] = std::array::from_fn(|_| Uuid::new_v4());
        let role = Uuid::new_v4();
        let grants = vec![Grant {
            id: Some(1),
            user_id: None,
            role_id: role,
            added: vec!["payouts.approve".into()],
            granted_by: Some(admin),
            granted_at: Utc::now(),
            confirmed_by: None,
        }];
        let roles = HashMap::from([(holder, role), (other, Uuid::new_v4())]);
        let ties = Ties::new(&grants, &roles);
        assert!(ties.tied(holder, admin));
        assert!(!ties.tied(other, admin));
    }
}
