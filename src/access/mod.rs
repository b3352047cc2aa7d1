//! Roles and permissions: the permission catalogue, built-in and custom
//! roles per tenant, memberships, and the `Member` extractor every tenant
//! page uses.

pub mod builtin;
pub mod grants;
pub mod invitation_routes;
pub mod invitations;
pub mod member;
pub mod members;
pub mod permissions;
pub mod roles;
pub mod routes;
pub mod store;
pub mod ties;

pub use member::{Member, PlatformAdmin};
