//! Roles and permissions: the permission catalogue, built-in and custom
//! roles per tenant, memberships, and the `Member` extractor every tenant
//! page uses.

pub mod builtin;
pub mod grants;
pub mod invitation_routes;
pub mod invitations;
pub mod member;
pub mod members;
pub mod permissions;
pub mod roles;
pub mod routes;
pub mod store;
pub mod ties;

pub use member::{Member, PlatformAdmin};

use crate::access::permissions::Permission;
use crate::area::Area;
use crate::web::menu::{MenuEntry, MenuGroup, ShownTo};

/// Members, invitations and roles.
pub const AREA: Area = Area {
    routes: |cfg| {
        routes::configure(cfg);
        invitation_routes::configure(cfg);
    },
    menu: &[
        MenuEntry::new(
            MenuGroup::Admin,
            "/members",
            "Members",
            ShownTo::Holding(&[Permission::MembersManage]),
        ),
        MenuEntry::new(
            MenuGroup::Admin,
            "/roles",
            "Roles",
            ShownTo::Holding(&[Permission::RolesManage]),
        ),
    ],
    kinds: crate::area::no_kinds,
};
