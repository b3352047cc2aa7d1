//! Typed records of every resource, in the spec's field names.

pub mod addresses;
pub mod balances;
pub mod beneficiaries;
pub mod bulk;
pub mod cards;
pub mod control;
pub mod customers;
pub mod events;
pub mod identity;
pub mod lightning;
pub mod payouts;
pub mod rates;
pub mod trading;
pub mod transactions;
pub mod virtual_accounts;
pub mod withdrawals;
