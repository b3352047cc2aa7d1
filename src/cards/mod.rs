//! Cards: list and search, issue virtual and lite cards (every rule checked
//! before the call), the card page with live status and transactions,
//! fund and withdraw, freeze, spend limits, revealing the card details
//! once, and termination as an approval request.

mod actions;
pub mod money;
pub mod operations;
pub mod routes;
pub mod rules;
pub mod termination;

use crate::access::permissions::Permission;
use crate::area::Area;
use crate::web::menu::{MenuEntry, MenuGroup, ShownTo};

/// Cards: issuing, funding, freezing, limits and termination, through the gate.
pub const AREA: Area = Area {
    routes: |cfg| {
        routes::configure(cfg);
        actions::configure(cfg);
    },
    menu: &[MenuEntry::new(
        MenuGroup::Cards,
        "/cards",
        "Cards",
        ShownTo::Holding(&[Permission::CardsRead]),
    )],
    kinds: |gate| {
        gate.with(termination::TerminationAction)
            .with(money::IssueAction)
            .with(money::FundingAction)
            .with(money::StatusAction)
    },
};
