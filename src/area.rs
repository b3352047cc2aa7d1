//! What an area of the portal brings, declared once beside its routes (its
//! `routes.rs`, or its `mod.rs` where it has none) as its `AREA`: its
//! routes, its menu entries and the gate kinds it files. Not in the
//! domain's `mod.rs` when that is the face everyone imports
//! (`access::Member`, `audit::Event`): a face that named the pages would tie
//! every importer to them.
//! `startup::AREAS` lists the areas; start-up registers their routes and
//! kinds and installs their menu entries. So a new kind touches only its
//! area's folder, and a new page only its area's folder and its template.
//!
//! Two catalogues stay whole on purpose: permissions (`access::permissions`,
//! each line with the built-in roles that hold it, given to existing
//! tenants at start-up) and audit events (`audit::Event`). Each is one
//! enum, so a misspelt permission or event does not compile, and the roles
//! page and the audit log's verifier read every one from one place.

use actix_web::web::ServiceConfig;

use crate::approvals::Registry;
use crate::web::menu::MenuEntry;

pub struct Area {
    pub routes: fn(&mut ServiceConfig),
    pub menu: &'static [MenuEntry],
    /// Registers the area's kinds of the approval gate.
    pub kinds: fn(Registry) -> Registry,
}

impl Area {
    /// An area of pages only: no menu entries, no kinds.
    pub const fn routes(routes: fn(&mut ServiceConfig)) -> Area {
        Area {
            routes,
            menu: &[],
            kinds: no_kinds,
        }
    }
}

pub fn no_kinds(gate: Registry) -> Registry {
    gate
}

/// For an area that adds kinds but no pages of its own.
pub fn no_routes(_: &mut ServiceConfig) {}
