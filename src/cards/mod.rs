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
