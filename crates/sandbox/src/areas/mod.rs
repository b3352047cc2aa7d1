//! One module per API area: its rules as plain functions over the
//! company's data (tested without HTTP), and thin handlers.

pub mod addresses;
pub mod balances;
pub mod beneficiaries;
pub mod bulk;
pub mod cards;
pub mod control;
pub mod customers;
pub mod deposits;
pub mod identity;
pub mod jobs;
pub mod lightning;
pub mod market;
pub mod payouts;
pub mod rates;
pub mod trading;
pub mod transactions;
pub mod virtual_accounts;
pub mod withdrawals;
