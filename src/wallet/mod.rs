//! Wallet pages proxied through signed calls: dashboard, balances,
//! transactions, addresses, chains.

pub mod routes;
