//! Payouts in the portal: a form led by the corridor, filed as an approval
//! request with an indicative quote; the approval gate carries it out
//! through `action`; `filing` checks the payee and files it.

pub mod action;
pub mod filing;
pub mod routes;

use crate::access::permissions::Permission;
use crate::area::Area;
use crate::web::menu::{MenuEntry, MenuGroup, ShownTo};

/// Payouts to bank accounts and mobile money, through the gate.
pub const AREA: Area = Area {
    routes: routes::configure,
    menu: &[MenuEntry::new(
        MenuGroup::Money,
        "/payouts",
        "Payouts",
        ShownTo::Holding(&[Permission::PayoutsRead]),
    )],
    kinds: |gate| gate.with(action::PayoutAction),
};
