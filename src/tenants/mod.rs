//! Tenants (companies) and their API connections, and the one factory that
//! gives a handler a signed client for its tenant.

pub mod connections;
pub mod model;
pub mod platform;
pub mod routes;
pub mod store;
pub mod switching;
pub mod upstream;
