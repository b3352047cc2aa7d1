//! What every page shares: the error type and its pages, the middleware
//! (session, CSRF, security headers), the page shell, form refusals and
//! static files.

pub mod amount;
pub mod assets;
pub mod confirm;
pub mod csv;
pub mod error;
pub mod form;
pub mod listing;
pub mod menu;
pub mod middleware;
pub mod notice;
pub mod page;
pub mod qr;
pub mod show;
