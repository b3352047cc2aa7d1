//! The webhook receiver (`POST /hooks/{connection_id}`) and the events
//! page. A delivery is authenticated by its `x-service-signature` over the
//! raw body, stored once by `event_id`, and answered 200 at once.

pub mod receiver;
pub mod routes;
pub mod store;
