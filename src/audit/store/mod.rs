//! The audit log's SQL, one file a concept: append and link (`append`),
//! search (`search`), what verification reads (`ranges`) and signed
//! checkpoints (`checkpoints`). Append and link (serialized per log by an advisory
//! lock so each chain has one order), search with keyset pagination, and
//! verification.
//!
//! Appending is two steps. A record is staged (`audit_staged`) by the
//! transaction of the change it describes, so it commits or rolls back
//! with it, and that transaction takes no lock and waits for no other
//! append. After commit it is linked into its log's chain (`link`) with
//! whatever else was staged for that log: one locked transaction and one
//! WAL flush per batch. A log that took one flush per record was bounded
//! by the disk (about 280 flushes a second here), and a payout appends
//! four. Each process's linker (`writer::Linker`) links a log as soon as a
//! staging commit announces it, and every reader of a log (the page, the
//! export, verify, checkpoints, bundles) links it first, so nobody reads
//! a log without the records committed before they looked.
//!
//! A record is staged by the database function `stage_audit`: through
//! `append_in`, or, for the gate's busiest changes (a filing, a move, a
//! claim's start), inside the very statement that makes the change, so
//! that change needs no transaction of its own around two statements.

mod append;
mod checkpoints;
mod ranges;
mod search;

pub use append::*;
pub use checkpoints::*;
pub use ranges::*;
pub use search::*;
use uuid::Uuid;

/// Which log a record belongs to: a tenant's, or the platform's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Log {
    Tenant(Uuid),
    Platform,
}

impl Log {
    pub fn of(tenant_id: Option<Uuid>) -> Self {
        tenant_id.map_or(Log::Platform, Log::Tenant)
    }

    pub fn tenant_id(self) -> Option<Uuid> {
        match self {
            Log::Tenant(t) => Some(t),
            Log::Platform => None,
        }
    }
}

impl Log {
    /// The log's key within the chain locks: 32 bits of the tenant's id (0
    /// for the platform). Two logs sharing a key only wait for each other.
    fn lock_key(self) -> i32 {
        match self {
            Log::Tenant(t) => t.as_u128() as i32,
            Log::Platform => 0,
        }
    }
}

impl std::fmt::Display for Log {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Log::Tenant(t) => write!(f, "tenant:{t}"),
            Log::Platform => f.write_str("platform"),
        }
    }
}
