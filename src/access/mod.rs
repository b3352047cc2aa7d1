//! Roles and permissions: the permission catalogue, built-in and custom
//! roles per tenant, memberships, and the `Member` extractor every tenant
//! page uses.

pub mod member;
pub mod permissions;
pub mod routes;
pub mod store;

pub use member::{Member, PlatformAdmin};
