//! Payouts in the portal: a form led by the corridor, filed as an approval
//! request with an indicative quote; the approval gate carries it out
//! through `action`.

pub mod action;
pub mod routes;
