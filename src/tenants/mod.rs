//! Tenants (companies) and their API connections, and the one factory that
//! gives a handler a signed client for its tenant.

pub mod connections;
pub mod model;
pub mod platform;
pub mod routes;
pub mod store;
pub mod switching;
pub mod upstream;

use crate::access::permissions::Permission;
use crate::area::Area;
use crate::web::menu::{MenuEntry, MenuGroup, ShownTo};

/// Tenants, their API connections, switching between them, and the platform.
pub const AREA: Area = Area {
    routes: routes::configure,
    menu: &[
        MenuEntry::new(
            MenuGroup::Admin,
            "/platform",
            "Platform",
            ShownTo::When(|m| m.user.is_platform_admin),
        ),
        MenuEntry::new(
            MenuGroup::Developers,
            "/connections",
            "Connections",
            ShownTo::Holding(&[Permission::ConnectionsManage]),
        ),
    ],
    kinds: crate::area::no_kinds,
};
