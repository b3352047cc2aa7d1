//! Saved payees (the API's beneficiaries): list, page, create, edit and
//! delete. Saving, changing or deleting one is a control change through
//! the approval gate (four eyes with a second admin), and a payout to a
//! payee saved in the last 24 hours always waits for approval.

pub mod action;
pub mod payees;
pub mod routes;
