//! The portal's integration tests: the real app on a random port, a fresh
//! database per test, the in-process sandbox as upstream.

mod access;
mod accounts;
mod approvals;
mod audit;
mod auth;
mod browser;
mod bulk;
mod cards;
mod dashboard;
mod gate;
mod health;
mod helpers;
mod isolation;
mod lightning;
mod listing;
mod payouts;
mod quorum;
mod replicas;
mod runner;
mod search;
mod tenants;
mod trading;
mod virtual_accounts;
mod wallet;
mod webhooks;
mod withdrawals;
