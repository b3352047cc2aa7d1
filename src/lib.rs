//! Paydesk, the back-office portal for the Payments, Trading and Cards
//! Service API v2. Folders name domains: `auth` (sign-in, sessions),
//! `tenants` (companies and their API connections), `access` (roles and
//! permissions), `audit` (the log), `wallet` (balances, transactions,
//! addresses), `customers` and `virtual_accounts`, `cards`, `payouts` and
//! `beneficiaries` (payees), `withdrawals` (on-chain), `bulk` (bulk
//! transfers), `lightning`, `rates` (exchange rates), `trading` (quotes,
//! orders, schedules, target orders),
//! `approvals` (the gate every money-moving action and every control
//! change goes through), `controls` (four-eyes changes to roles,
//! permissions, policies and connections), `sandbox_tools`; `web` holds
//! what every page shares, `state` what every handler shares, and
//! `startup` builds the application from them.

pub mod access;
pub mod approvals;
pub mod area;
pub mod audit;
pub mod auth;
pub mod beneficiaries;
pub mod bootstrap;
pub mod bulk;
pub mod cards;
pub mod configuration;
pub mod controls;
pub mod crypto;
pub mod customers;
pub mod db;
pub mod lightning;
pub mod mail;
pub mod metrics;
pub mod payouts;
pub mod rates;
pub mod routes;
pub mod sandbox_tools;
pub mod search;
pub mod startup;
pub mod state;
pub mod statements;
pub mod telemetry;
pub mod tenants;
pub mod trading;
pub mod virtual_accounts;
pub mod wallet;
pub mod web;
pub mod webhooks;
pub mod withdrawals;
