//! Customers of the tenant's company and their card KYC: list and search,
//! detail with their cards, create, edit, deactivate, and the KYC form
//! with its status updating while the review runs.

pub mod manage;
pub mod routes;

use crate::access::permissions::Permission;
use crate::area::Area;
use crate::web::menu::{MenuEntry, MenuGroup, ShownTo};

/// Customers, who hold cards and virtual accounts.
pub const AREA: Area = Area {
    routes: routes::configure,
    menu: &[MenuEntry::new(
        MenuGroup::Cards,
        "/customers",
        "Customers",
        ShownTo::Holding(&[Permission::CustomersRead]),
    )],
    kinds: crate::area::no_kinds,
};
