//! Snapshots of one company (`GET`/`PUT /sandbox/snapshot`): its whole
//! state (every area's records, ledger, idempotency records, webhook
//! setting, faults) and its pending clock-driven steps, as one JSON
//! document tagged with a version. Restoring replaces the company's state
//! with the document's; a document of another version, or of another
//! company, is refused with a 400 and changes nothing.
//!
//! Decisions where the documents are silent: a snapshot is of the caller's
//! company only (the clock, market prices and other companies are shared
//! and stay as they are); pending steps whose time passed while the
//! snapshot was out run at the next tick or clock advance.

use actix_web::http::StatusCode;
use actix_web::web::Data;
use chrono::{DateTime, Utc};
use paydesk_api::models::control::ResetDone;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::error::ApiError;
use crate::respond::{envelope, Caller, JsonAnswer, JsonBody};
use crate::scheduler::Job;
use crate::state::{Company, Shared, Store};

/// The version of the snapshot format this sandbox writes and reads; it
/// changes whenever the shape of a company's state does.
pub const SNAPSHOT_VERSION: u32 = 1;

/// The document: the version, whose company it is, and its state.
#[derive(Serialize, Deserialize)]
pub struct Snapshot {
    pub snapshot_version: u32,
    pub company_id: Uuid,
    #[serde(with = "paydesk_api::time::millis")]
    pub taken_at: DateTime<Utc>,
    pub company: Company,
    /// Pending clock-driven steps of the company, with their due times.
    pub pending: Vec<(DateTime<Utc>, Job)>,
}

/// A snapshot serialized through a borrowed view, so the company is not
/// cloned (also the data directory's head row, with its books elided).
#[derive(Serialize)]
pub struct View<'a> {
    snapshot_version: u32,
    company_id: Uuid,
    #[serde(with = "paydesk_api::time::millis")]
    taken_at: DateTime<Utc>,
    company: &'a Company,
    pending: Vec<(DateTime<Utc>, Job)>,
}

impl Store {
    pub fn view(&self, company_id: Uuid, now: DateTime<Utc>) -> Result<View<'_>, ApiError> {
        let company = self
            .companies
            .get(&company_id)
            .ok_or_else(|| ApiError::Unauthorized("the client's company no longer exists".to_owned()))?;
        Ok(View {
            snapshot_version: SNAPSHOT_VERSION,
            company_id,
            taken_at: now,
            company,
            pending: self.scheduler.jobs_of(company_id),
        })
    }

    /// The company's state as a snapshot.
    pub fn snapshot(&self, company_id: Uuid, now: DateTime<Utc>) -> Result<serde_json::Value, ApiError> {
        serde_json::to_value(self.view(company_id, now)?)
            .map_err(|e| ApiError::invalid(format!("the company's state could not be written: {e}")))
    }

    /// Replaces a company's state with a snapshot's.
    pub fn restore(&mut self, mut snapshot: Snapshot) {
        let id = snapshot.company_id;
        snapshot.company.reindex();
        self.scheduler.forget_company(id);
        for (at, job) in snapshot.pending {
            self.scheduler.schedule(at, job);
        }
        self.node.forget_company(id);
        self.node.learn_company(id, &snapshot.company.lightning);
        self.companies.insert(id, snapshot.company);
        self.replace(id);
    }
}

/// Reads a document as a snapshot of `company_id` of this version.
pub fn parse(value: serde_json::Value, company_id: Uuid) -> Result<Snapshot, ApiError> {
    let version = value.get("snapshot_version").and_then(|v| v.as_u64());
    match version {
        None => {
            return Err(ApiError::field(
                "snapshot_version",
                "is missing: the body is not a sandbox snapshot (take one with GET /sandbox/snapshot)",
            ))
        }
        Some(v) if v != u64::from(SNAPSHOT_VERSION) => {
            return Err(ApiError::field(
                "snapshot_version",
                format!(
                    "this sandbox reads snapshot version {SNAPSHOT_VERSION}; the document is version {v}"
                ),
            ))
        }
        Some(_) => {}
    }
    let snapshot: Snapshot = serde_json::from_value(value).map_err(|e| {
        ApiError::invalid(format!(
            "the document is not a valid snapshot of version {SNAPSHOT_VERSION}: {e}"
        ))
    })?;
    if snapshot.company_id != company_id || snapshot.company.id != company_id {
        return Err(ApiError::field(
            "company_id",
            "the snapshot is of another company; restore it with that company's client",
        ));
    }
    Ok(snapshot)
}

/// `GET /sandbox/snapshot`.
pub async fn export(shared: Data<Shared>, caller: Caller) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let document = shared.store().snapshot(caller.company_id, now)?;
    Ok(envelope(
        StatusCode::OK,
        "Snapshot taken",
        document,
        &caller.request_id,
        now,
    ))
}

/// `PUT /sandbox/snapshot` with the `data` of a `GET` (or the whole
/// answer of it: a body whose `data` holds the snapshot is read as that).
pub async fn restore(
    shared: Data<Shared>,
    caller: Caller,
    body: JsonBody<serde_json::Value>,
) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let mut document = body.value;
    if document.get("snapshot_version").is_none() && document["data"].get("snapshot_version").is_some() {
        document = document["data"].take();
    }
    let snapshot = parse(document, caller.company_id)?;
    shared.store().restore(snapshot);
    Ok(envelope(
        StatusCode::OK,
        "Snapshot restored",
        ResetDone {
            company_id: caller.company_id,
            reset_at: now,
        },
        &caller.request_id,
        now,
    ))
}
