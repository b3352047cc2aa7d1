//! Four eyes on the tenant's controls: who is in the tenant (invitations,
//! removals, accounts, the two-factor requirement), members' roles, roles'
//! permissions and API connections are kinds of the approval gate (new
//! policies and the reporting currency are the gate's own kinds, in
//! `approvals::policy_change`). Where the tenant has a second admin who
//! may approve them, they wait for that admin; a tenant's
//! only admin changes them at once (recorded, like every request). Each
//! kind re-checks the world when it runs and writes the change with the
//! requester as its author and the approving admin as its confirmer
//! (`access::ties`: a grant no second admin saw ties the two members).

pub mod connections;
pub mod members;
pub mod membership;
pub mod roles;

use crate::area::Area;

/// Four-eyes changes to the tenant's controls: kinds of the gate, filed from the access and tenants pages.
pub const AREA: Area = Area {
    routes: crate::area::no_routes,
    menu: &[],
    kinds: |gate| {
        gate.with(members::RoleChangeAction)
            .with(roles::PermissionsChangeAction)
            .with(membership::MembershipAction)
            .with(connections::ConnectionChangeAction)
    },
};
