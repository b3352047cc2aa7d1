//! Paydesk, the back-office portal for the Payments, Trading and Cards
//! Service API v2. Folders name domains; each declares its routes, menu
//! entries and gate kinds once beside its routes (`area::Area`), and
//! `startup::AREAS` lists them. The README's "Where things live" names
//! every folder in one line.

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
