//! One box in the top bar: `/search?q=…` finds transactions (id or
//! reference), deposit addresses, cards (last four digits or holder name),
//! customers (email, reference or id), approval requests (id, reference or
//! words of their summary) and members (email or name), each only where
//! the member may read that area.
//!
//! The service is asked exactly (an id, a reference, an address), never
//! paged through, so a search costs a few calls whatever the volume; an
//! area the service could not answer says so instead of looking empty.

mod find;
mod routes;

pub use routes::AREA;
