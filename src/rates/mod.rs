//! Exchange rates: every pair the service trades with its buy, sell and
//! mid rates, the 24-hour change and how long each rate holds, refreshed
//! while the page is open; and a converter at the mid rate.

pub mod board;
pub mod routes;

use crate::access::permissions::Permission;
use crate::area::Area;
use crate::web::menu::{MenuEntry, MenuGroup, ShownTo};

/// Exchange rates and the converter.
pub const AREA: Area = Area {
    routes: routes::configure,
    menu: &[MenuEntry::new(
        MenuGroup::Money,
        "/rates",
        "Rates",
        ShownTo::Holding(&[Permission::RatesRead]),
    )],
    kinds: crate::area::no_kinds,
};
