//! Customers of the tenant's company and their card KYC: list and search,
//! detail with their cards, create, edit, deactivate, and the KYC form
//! with its status updating while the review runs.

mod list;
pub mod manage;
pub mod routes;
