//! Spot trading: a quote for a pair, side and quantity (30 seconds to act
//! on it), an order placed from it through the approval gate, the orders
//! with their fills, and cancelling one that rests; scheduled orders
//! (DCA) as standing instructions and target orders with their escrow,
//! through the same gate.

pub mod action;
pub mod routes;
pub mod scheduled_routes;
pub mod schedules;
pub mod spot;
pub mod target_routes;
pub mod targets;

use crate::access::permissions::Permission;
use crate::area::Area;
use crate::web::menu::{MenuEntry, MenuGroup, ShownTo};

/// Spot, scheduled and target orders, through the gate.
pub const AREA: Area = Area {
    routes: |cfg| {
        routes::configure(cfg);
        scheduled_routes::configure(cfg);
        target_routes::configure(cfg);
    },
    menu: &[MenuEntry::new(
        MenuGroup::Money,
        "/trading",
        "Trading",
        ShownTo::Holding(&[Permission::TradingRead]),
    )],
    kinds: |gate| {
        gate.with(action::OrderAction)
            .with(action::CancelAction)
            .with(schedules::ScheduleAction)
            .with(schedules::ScheduleChangeAction)
            .with(targets::TargetAction)
            .with(targets::TargetCancelAction)
    },
};
