//! The approval gate: requests, their decisions, versioned policies and the
//! job queue that carries out an approved action exactly once. It names no
//! kind of action: each kind implements `action::Action` in its own domain
//! and is registered at start-up (`startup::registry`).
//!
//! A payment's trip, in the order the request lives:
//! 1. **Filed.** A domain's form handler calls `executor::gate` (controls:
//!    `forms::submit_control`): `engine::assess` weighs it against the
//!    policy in force (`model::Policy::require`), `engine::preview` shows
//!    it for confirmation (`forms::confirm_page`), then `engine::file`
//!    checks that enough independent colleagues could approve
//!    (`quorum::Colleagues`, with the ties of `access::ties`), fixes the
//!    upstream reference and the digest, and writes the request
//!    (`store::insert_request`), its audit record and its approvers'
//!    notices in one statement. Approved at once, it is queued there too.
//! 2. **Decided.** The request's page (`routes`) posts to `engine::decide`:
//!    under the request's row lock it checks `Colleagues::may_approve` and
//!    the digest, records the decision (`store::add_decision`, counting only
//!    approvals whose approvers still may give them) and, with the last
//!    approval needed, moves it to approved and queues its run.
//! 3. **Run.** A worker of `executor::Runner` claims due jobs (SKIP LOCKED),
//!    marks the requests executing (`engine::start_executing`) and calls
//!    the kind's `Action::execute` with its saved progress, once.
//! 4. **Settled.** The run's `Step` ends it (done, failed), schedules a
//!    read-back (again), or sends it back to the approvers; the service's
//!    events wake it early (`store::note_event`).

pub mod action;
pub mod engine;
pub mod executor;
pub mod forms;
pub mod model;
pub mod policy_routes;
pub mod quorum;
pub mod routes;
pub mod store;

pub use forms::{answer_gate, confirm_page, submit_control, ConfirmTo, Submission};
pub use routes::waiting_for_me;
