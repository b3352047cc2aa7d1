//! Payouts in the portal: a form led by the corridor, filed as an approval
//! request with an indicative quote; the approval gate carries it out
//! through `action`; `filing` checks the payee and files it; `funding`
//! is where its money comes from (the wallet, or an onchain deposit).

pub mod action;
pub mod filing;
pub mod funding;
pub mod routes;
