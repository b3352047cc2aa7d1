//! Mutating upstream calls are recorded through a channel drained by one background
//! task that appends in batches, so a page load never waits on the audit
//! log's chain lock. Records are in the log within a moment of the call.

use std::sync::Arc;

use paydesk_api::{CallObserver, CallRecord};
use serde_json::json;
use sqlx::PgPool;
use tokio::sync::mpsc;
use uuid::Uuid;

use super::Event;
use super::{store, Actor, NewRecord};

/// Sends records to the background writer.
#[derive(Clone)]
pub struct AuditWriter {
    tx: mpsc::UnboundedSender<NewRecord>,
}

impl AuditWriter {
    /// Starts the background task on the current runtime.
    pub fn start(pool: PgPool) -> Self {
        let (tx, mut rx) = mpsc::unbounded_channel::<NewRecord>();
        tokio::spawn(async move {
            let mut batch = Vec::new();
            while rx.recv_many(&mut batch, 500).await > 0 {
                if let Err(e) = store::append(&pool, &batch).await {
                    tracing::error!(error = %e, records = batch.len(), "could not write audit records");
                }
                batch.clear();
            }
        });
        Self { tx }
    }

    pub fn send(&self, record: NewRecord) {
        if self.tx.send(record).is_err() {
            tracing::error!("the audit writer has stopped; a record was lost");
        }
    }

    /// An observer that records each upstream call made for `actor` in
    /// `tenant_id`.
    pub fn observer(&self, tenant_id: Uuid, actor: Actor) -> Arc<dyn CallObserver> {
        Arc::new(UpstreamAudit {
            writer: self.clone(),
            tenant_id,
            actor,
        })
    }
}

struct UpstreamAudit {
    writer: AuditWriter,
    tenant_id: Uuid,
    actor: Actor,
}

impl CallObserver for UpstreamAudit {
    /// Every call is counted in the metrics; only calls that change
    /// something upstream are chained into the log, so reading a page
    /// writes nothing.
    fn observe(&self, call: CallRecord) {
        crate::metrics::upstream_call(&call);
        if call.method.eq_ignore_ascii_case("GET") || call.method.eq_ignore_ascii_case("HEAD") {
            return;
        }
        let record = NewRecord::new(
            &self.actor,
            Some(self.tenant_id),
            Event::UpstreamCall,
            format!("{} {}", call.method, call.path),
            call.outcome.as_str(),
        )
        .with_details(json!({
            "method": call.method,
            "path": call.path,
            "status": call.status,
            "request_id": call.request_id,
            "duration_ms": call.duration.as_millis() as u64,
        }));
        self.writer.send(record);
    }
}
