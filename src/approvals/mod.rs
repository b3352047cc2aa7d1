//! The approval gate: requests, their decisions, versioned policies and the
//! job queue that carries out an approved action exactly once. It names no
//! kind of action: each kind implements `Action` in its own domain and is
//! registered at start-up (`startup::registry`).
//!
//! Domains see only what this module re-exports (its face): the `Action`
//! trait and its `Run`, `gate` and the form helpers that file and preview,
//! the request's read model (`ActionRequest` and the lookups), and the
//! runner that start-up starts. Its rooms are private; `store` stays
//! public for the integration tests of its SQL, and a unit test below
//! holds the domains to the face.
//!
//! A payment's trip, in the order the request lives:
//! 1. **Filed** (`filing`). A domain's form handler calls `gate` (controls:
//!    `forms::submit_control`): `assess` weighs it against the policy in
//!    force (`model::Policy::require`), `preview` shows it for
//!    confirmation (`forms::confirm_page`), then `file` checks that
//!    enough independent colleagues could approve (`quorum::Colleagues`,
//!    with the ties of `access::ties`), fixes the upstream reference and
//!    the digest, and writes the request (`store::insert_request`), its
//!    audit record and its approvers' notices in one statement. Approved
//!    at once, it is queued there too.
//! 2. **Decided** (`deciding`). The request's page (`pages::request`)
//!    posts to `decide`: under the request's row lock it checks
//!    `Colleagues::may_approve` and the digest, records the decision
//!    (`store::add_decision`, counting only approvals whose approvers
//!    still may give them) and, with the last approval needed, moves it to
//!    approved (`lifecycle::transition`) and queues its run. Meanwhile
//!    `chores` sends reminders, escalates and expires.
//! 3. **Run** (`runner`, `running`). A worker of `runner::Runner` claims
//!    due jobs (SKIP LOCKED), marks the requests executing and `running`
//!    loads each request's kind, client and policy once and calls the
//!    kind's `Action::execute` with its saved progress, once.
//! 4. **Settled** (`running`). The run's `Step` ends it (done, failed),
//!    schedules a read-back (again), or sends it back to the approvers; the
//!    service's events wake it early (`running::hear` asks each kind which
//!    request an event is about: `Action::concerns`).

mod action;
mod chores;
mod deciding;
mod filing;
mod forms;
mod lifecycle;
mod model;
mod pages;
mod policy_change;
mod quorum;
mod runner;
mod running;
pub mod store;

pub use action::{
    digest, read_back_after, Action, AwaitedDeposit, Concerns, Counterparty, ExecError, Fact, Mailing,
    Registry, Run, Step,
};
pub use filing::{file, gate, preview, FiledAs, Filing, Gated};
pub use forms::{answer_gate, confirm_page, submit_control, ConfirmTo, Submission};
pub use lifecycle::{gate_actor, ApprovalError};
pub use model::{Kind, Policy, RequestStatus, Tier, Weighed};
pub use pages::{configure, waiting_for_me};
pub use policy_change::{PolicyChangeAction, ReportingCurrencyAction};
pub use quorum::{Candidate, Colleagues};
pub use runner::{start, Rest, Runner};
pub use running::hear;
pub use store::{
    by_reference, count_by_status, filed_as, find, list_filtered, pending_of, queue_depth,
    reporting_currency, search, ActionRequest, Found, ListFilter, REPORTING_CURRENCIES,
};

use crate::access::permissions::Permission;
use crate::area::Area;
use crate::web::menu::{MenuEntry, MenuGroup, ShownTo};

/// The gate's pages, and its own kinds: new policies and the reporting currency.
pub const AREA: Area = Area {
    routes: configure,
    menu: &[
        MenuEntry::new(
            MenuGroup::Controls,
            "/approvals",
            "Approvals",
            ShownTo::GateReaders,
        ),
        MenuEntry::new(
            MenuGroup::Controls,
            "/policies",
            "Policies",
            ShownTo::Holding(&[Permission::PoliciesManage, Permission::AuditRead]),
        ),
        MenuEntry::new(
            MenuGroup::Controls,
            "/notifications",
            "Notifications",
            ShownTo::Everyone,
        ),
    ],
    kinds: |gate| gate.with(PolicyChangeAction).with(ReportingCurrencyAction),
};

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                rust_files(&path, found);
            } else if path.extension().is_some_and(|e| e == "rs") {
                found.push(path);
            }
        }
    }

    /// Domains reach the gate only through what this module re-exports:
    /// none names one of its rooms (`approvals::store::…`,
    /// `approvals::filing::…`).
    #[test]
    fn domains_use_only_the_gates_face() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        let mut reached_in = Vec::new();
        for file in files.iter().filter(|f| !f.starts_with(src.join("approvals"))) {
            let text = std::fs::read_to_string(file).unwrap();
            for (at, _) in text.match_indices("approvals::") {
                let rest = &text[at + "approvals::".len()..];
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                let after = &rest[name.len()..];
                // A module path goes on with `::name`; a function's turbofish
                // (`approvals::file::<PayoutAction>`) is the face.
                let is_room = name.starts_with(|c: char| c.is_ascii_lowercase())
                    && after.starts_with("::")
                    && !after.starts_with("::<");
                if is_room {
                    reached_in.push(format!("{}: approvals::{name}::", file.display()));
                }
            }
        }
        assert!(
            reached_in.is_empty(),
            "domains reach into the gate's rooms: {reached_in:#?}"
        );
    }
}
