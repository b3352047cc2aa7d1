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
