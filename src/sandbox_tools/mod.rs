//! Tools for a tenant connected to a sandbox: move the sandbox's clock, so
//! that what takes real time upstream (card KYC reviews, provisioning, the
//! 24-hour termination rule, payout rails, quotes expiring) can be seen in
//! minutes; set market prices and make deposits arrive (`controls`); read
//! the journal of calls and the webhook deliveries. Purchases on cards are
//! simulated from the card's page.

pub mod clock;
pub mod controls;
pub mod routes;
