//! Wallet pages proxied through signed calls: dashboard, balances,
//! transactions (filters, "load more", detail, CSV export), addresses
//! (generate, list, detail, validate) and supported chains.

mod addresses;
mod balances;
mod dashboard;
mod transactions;

use actix_web::web;

use crate::access::permissions::Permission;
use crate::area::Area;
use crate::web::menu::{MenuEntry, MenuGroup, ShownTo};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/", web::get().to(dashboard::show))
        .route("/balances", web::get().to(balances::list))
        .route("/balances/{currency}", web::get().to(balances::one))
        .route("/transactions", web::get().to(transactions::list))
        .route("/transactions/export.csv", web::get().to(transactions::export))
        .route("/transactions/{id}", web::get().to(transactions::one))
        .route("/addresses", web::get().to(addresses::list))
        .route("/addresses", web::post().to(addresses::generate))
        .route("/addresses/export.csv", web::get().to(addresses::export))
        .route("/addresses/validate", web::post().to(addresses::validate))
        .route("/addresses/{id}", web::get().to(addresses::one))
        .route("/chains", web::get().to(addresses::chains));
}

/// The wallet: the dashboard, balances, transactions, deposit addresses and chains.
pub const AREA: Area = Area {
    routes: configure,
    menu: &[
        MenuEntry::new(MenuGroup::Home, "/", "Dashboard", ShownTo::Everyone),
        MenuEntry::new(
            MenuGroup::Money,
            "/balances",
            "Balances",
            ShownTo::Holding(&[Permission::BalancesRead]),
        ),
        MenuEntry::new(
            MenuGroup::Money,
            "/transactions",
            "Transactions",
            ShownTo::Holding(&[Permission::TransactionsRead]),
        ),
        MenuEntry::new(
            MenuGroup::Money,
            "/addresses",
            "Addresses",
            ShownTo::Holding(&[Permission::AddressesRead]),
        ),
        MenuEntry::new(
            MenuGroup::Money,
            "/chains",
            "Chains",
            ShownTo::Holding(&[Permission::AddressesRead]),
        ),
    ],
    kinds: crate::area::no_kinds,
};
