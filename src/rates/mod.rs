//! Exchange rates: every pair the service trades with its buy, sell and
//! mid rates, the 24-hour change and how long each rate holds, refreshed
//! while the page is open; and a converter at the mid rate.

pub mod board;
pub mod routes;
