//! The webhook receiver (`POST /hooks/{connection_id}`) and the events
//! page. A delivery is authenticated by its `x-service-signature` over the
//! raw body, stored once by `event_id`, and answered 200 at once.

pub mod receiver;
pub mod routes;
pub mod store;

use crate::access::permissions::Permission;
use crate::area::Area;
use crate::web::menu::{MenuEntry, MenuGroup, ShownTo};

/// The events the payments service sent.
pub const AREA: Area = Area {
    routes: routes::configure,
    menu: &[MenuEntry::new(
        MenuGroup::Developers,
        "/events",
        "Events",
        ShownTo::Holding(&[Permission::WebhooksRead, Permission::AuditRead]),
    )],
    kinds: crate::area::no_kinds,
};
