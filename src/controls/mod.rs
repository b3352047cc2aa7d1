//! Four eyes on the tenant's controls: who is in the tenant (invitations,
//! removals, accounts, the two-factor requirement), members' roles, roles'
//! permissions, approval policies, the reporting currency and API
//! connections are kinds of the approval gate. Where the tenant has a
//! second admin who may approve them, they wait for that admin; a tenant's
//! only admin changes them at once (recorded, like every request). Each
//! kind re-checks the world when it runs and writes the change with the
//! requester as its author and the approving admin as its confirmer
//! (`access::ties`: a grant no second admin saw ties the two members).

pub mod connections;
pub mod members;
pub mod membership;
pub mod policies;
pub mod roles;

use crate::approvals::model::Policy;

/// One approval by another admin; there is no amount to weigh and no
/// counterparty.
fn four_eyes() -> Policy {
    Policy {
        first_time_rule: false,
        reason: "default policy: a second admin approves".to_owned(),
        ..Policy::standard()
    }
}
