//! Bulk transfers: a CSV of crypto payments checked row by row, filed as
//! one approval request for the whole batch, created and confirmed
//! upstream once approved, then followed item by item; failed items are
//! retried through a request of their own. Recurring batches (bulk
//! schedules) are created, paused, resumed and cancelled through the gate.

pub mod action;
pub mod routes;
pub mod schedule_routes;
pub mod schedules;
pub mod sheet;

use crate::access::permissions::Permission;
use crate::area::Area;
use crate::web::menu::{MenuEntry, MenuGroup, ShownTo};

/// Bulk transfers, their retries and schedules, through the gate.
pub const AREA: Area = Area {
    routes: |cfg| {
        schedule_routes::configure(cfg);
        routes::configure(cfg);
    },
    menu: &[MenuEntry::new(
        MenuGroup::Money,
        "/bulk-transfers",
        "Bulk transfers",
        ShownTo::Holding(&[
            Permission::BulkRead,
            Permission::BulkRequest,
            Permission::BulkApprove,
        ]),
    )],
    kinds: |gate| {
        gate.with(action::BulkTransferAction)
            .with(action::RetryAction)
            .with(schedules::BulkScheduleAction)
            .with(schedules::BulkScheduleChangeAction)
    },
};
