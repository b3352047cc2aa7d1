//! Wallet pages proxied through signed calls: dashboard, balances,
//! transactions (filters, "load more", detail, CSV export), addresses
//! (generate, list, detail, validate) and supported chains.

mod addresses;
mod balances;
mod dashboard;
mod transactions;

use actix_web::web;

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
