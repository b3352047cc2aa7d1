//! Payouts in the portal: a form led by the corridor, filed as an approval
//! request with an indicative quote; the approval gate carries it out
//! through `action`; `filing` checks the payee and files it.

pub mod action;
pub mod filing;
pub mod routes;
