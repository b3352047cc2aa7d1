//! `paydesk-api`: the one source of truth for the wire of the Payments,
//! Trading and Cards Service API v2 — request and webhook signing, the
//! envelope and problem types, typed models with exact money units, the
//! table of paths, and the typed async client. Both the portal and the
//! sandbox depend on it.

pub mod client;
pub mod models;
pub mod paths;
pub mod signing;
mod status;
pub mod time;
pub mod units;
pub mod webhook;
pub mod wire;

pub use client::{ApiError, CallObserver, CallOutcome, CallRecord, Client, ClientOptions, Credentials};
