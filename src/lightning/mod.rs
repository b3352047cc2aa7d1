//! Lightning: invoices we issue (a BOLT11 request with its QR code, paid
//! live), paying a request someone gives us through the approval gate
//! (the fee capped in what approvers approve, sent once under the
//! request's reference), and the list of both.

pub mod action;
pub mod invoices;
pub mod payments;
pub mod routes;
