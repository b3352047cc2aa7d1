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
