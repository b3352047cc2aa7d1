//! Payouts in the portal: a form led by the corridor, filed as an approval
//! request with an indicative quote; the approvals engine carries it out.

pub mod routes;
