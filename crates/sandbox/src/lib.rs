//! `paydesk-sandbox`: a stateful sandbox of the Payments, Trading and Cards
//! Service API v2. It keeps each company's state in memory, moves money
//! only through its ledger, runs time-driven steps on its own clock, signs
//! and retries webhooks, and follows `shared/spec/sandbox-rules.md` where
//! the specification is silent.

pub mod areas;
pub mod book;
pub mod chains;
pub mod clock;
pub mod disk;
pub mod error;
pub mod faults;
pub mod fixture;
pub mod gatekeeper;
pub mod idempotency;
pub mod journal;
pub mod ledger;
pub mod lifecycle;
pub mod official;
pub mod openapi;
pub mod pagination;
pub mod recurrence;
pub mod respond;
pub mod scheduler;
pub mod server;
pub mod snapshot;
pub mod state;
pub mod webhooks;

pub use fixture::Fixture;
pub use server::RunningSandbox;
