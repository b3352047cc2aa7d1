//! Staff sign-in: passwords (argon2id, hashed off the async workers),
//! server-side sessions in Postgres, throttling and lockout, CSRF.

pub mod account;
pub mod csrf;
pub mod password;
pub mod reset;
pub mod routes;
pub mod security;
pub mod session;
pub mod session_cache;
pub mod store;
pub mod throttle;
pub mod two_factor;
