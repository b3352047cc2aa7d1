//! The approval gate: requests, their decisions, versioned policies and the
//! job queue that carries out an approved action exactly once. It names no
//! kind of action: each kind implements `action::Action` in its own domain
//! and is registered at start-up (`startup::registry`).

pub mod action;
pub mod engine;
pub mod executor;
pub mod model;
pub mod routes;
pub mod store;
