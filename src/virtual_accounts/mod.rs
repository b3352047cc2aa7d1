//! NGN virtual accounts: bank account numbers issued against a customer
//! (from the customer's page); a transfer into one credits the company's
//! NGN balance. Issuing one moves no money, so it is not gated; it is
//! audited. On a sandbox, a bank transfer into one can be simulated.

pub mod accounts;
pub mod routes;
