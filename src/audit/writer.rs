//! The audit log's background writers. Mutating upstream calls are
//! recorded through a channel drained by one task that stages them in
//! batches, so a page load never waits on the database for them; and the
//! linker links staged records into their logs' chains once their
//! transactions commit, in batches `BATCH_SPACING` apart (see `store` for
//! why appending is two steps).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use paydesk_api::{CallObserver, CallRecord};
use serde_json::json;
use sqlx::postgres::PgListener;
use sqlx::PgPool;
use tokio::sync::mpsc;
use tokio::time::Instant;
use uuid::Uuid;

use super::store::Log;
use super::Event;
use super::{store, Actor, NewRecord};

/// The channel a staged record's transaction announces its log on (see
/// the migration 20261129000100).
const STAGED: &str = "paydesk_audit";

/// After a failure to reach the database, the linker tries again this
/// much later.
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// The writer and the linker each take a new batch at most this often: a
/// busy portal then stages (and links) many records per statement and
/// commit instead of a few, while the first record after a quiet spell
/// goes at once. Readers lose nothing by it: search, export and verify
/// link what is staged before they read.
const BATCH_SPACING: Duration = Duration::from_millis(50);

/// Starts this process's linker: it hears which logs had records staged
/// and links each, taking every announcement already waiting first, so a
/// busy log is linked in batches. On (re)connecting it links whatever was
/// staged while it was not listening. Idle, it sends nothing. Every
/// replica runs one; the log's lock makes them take turns, and whoever
/// comes second finds nothing left.
pub fn start_linker(pool: PgPool) {
    tokio::spawn(async move {
        loop {
            if let Err(e) = link_as_told(&pool).await {
                tracing::warn!(error = %e, "the audit linker stopped; starting again");
                tokio::time::sleep(RETRY_AFTER).await;
            }
        }
    });
}

async fn link_as_told(pool: &PgPool) -> Result<(), sqlx::Error> {
    let mut listener = PgListener::connect_with(pool).await?;
    listener.listen(STAGED).await?;
    store::link_all(pool).await?;
    // None: the connection dropped (announcements meanwhile are lost), so
    // the caller listens again and catches up.
    while let Some(first) = listener.try_recv().await? {
        let started = Instant::now();
        let mut logs = BTreeSet::new();
        let mut heard = Some(first);
        while let Some(n) = heard {
            logs.insert(n.payload().parse::<Uuid>().ok());
            heard = listener.next_buffered();
        }
        for tenant_id in logs {
            store::link(pool, Log::of(tenant_id)).await?;
        }
        tokio::time::sleep_until(started + BATCH_SPACING).await;
    }
    Ok(())
}

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
                let started = Instant::now();
                if let Err(e) = store::append(&pool, &batch).await {
                    tracing::error!(error = %e, records = batch.len(), "could not write audit records");
                }
                batch.clear();
                tokio::time::sleep_until(started + BATCH_SPACING).await;
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
