//! Paydesk, the back-office portal for the Payments, Trading and Cards
//! Service API v2.

pub mod configuration;
pub mod routes;
pub mod startup;
pub mod telemetry;
