//! The approvals engine: versioned policies per kind of action, requests
//! filed by a maker and decided by other members, and the job runner that
//! carries out an approved action exactly once.

pub mod engine;
pub mod executor;
pub mod model;
pub mod routes;
pub mod store;
