//! NGN virtual accounts: bank account numbers issued against a customer
//! (from the customer's page); a transfer into one credits the company's
//! NGN balance. Issuing one moves no money, so it is not gated; it is
//! audited. On a sandbox, a bank transfer into one can be simulated.

pub mod accounts;
pub mod routes;

use crate::access::permissions::Permission;
use crate::area::Area;
use crate::web::menu::{MenuEntry, MenuGroup, ShownTo};

/// Virtual accounts issued to customers and what they received.
pub const AREA: Area = Area {
    routes: routes::configure,
    menu: &[MenuEntry::new(
        MenuGroup::Money,
        "/virtual-accounts",
        "Virtual accounts",
        ShownTo::Holding(&[Permission::VirtualAccountsRead]),
    )],
    kinds: crate::area::no_kinds,
};
