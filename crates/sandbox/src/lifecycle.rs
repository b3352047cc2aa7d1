//! What each area's `transition()` answers when a status may not move on
//! an event. Each area's `lifecycle.rs` holds its own moves; callers word
//! a refusal for their clients.

/// A move the status does not allow: where it stood and what happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal<S, E> {
    pub from: S,
    pub event: E,
}
