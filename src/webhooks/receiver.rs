//! Accepting a delivery: the signature checked over the raw body with the
//! connection's webhook secret (or its client secret when it has none: the
//! service signs with that by default), the event stored once by its id, a
//! payout's request told of its outcome, and each outcome audited
//! (rejections as one record per connection and minute with their count).

use paydesk_api::models::events::WebhookEvent;
use paydesk_api::webhook::verify_webhook;
use secrecy::ExposeSecret;
use serde_json::json;
use uuid::Uuid;

use super::store;
use crate::audit::{self, outcome, Actor, Event, NewRecord};
use crate::state::AppState;
use crate::tenants::store as tenants;
use crate::web::error::PortalError;

/// How a delivery was answered.
#[derive(Debug, PartialEq, Eq)]
pub enum Accepted {
    New,
    AlreadyReceived,
}

#[derive(Debug, thiserror::Error)]
pub enum Rejected {
    #[error("no such connection")]
    UnknownConnection,
    #[error("the x-service-signature does not match the body")]
    BadSignature,
    #[error("the body is not an event")]
    NotAnEvent,
    #[error(transparent)]
    Portal(#[from] PortalError),
}

impl From<sqlx::Error> for Rejected {
    fn from(e: sqlx::Error) -> Self {
        Rejected::Portal(e.into())
    }
}

#[tracing::instrument(skip_all, fields(%connection_id, bytes = body.len()))]
pub async fn accept(
    state: &AppState,
    connection_id: Uuid,
    signature: &str,
    body: &[u8],
    actor: &Actor,
) -> Result<Accepted, Rejected> {
    let connection = tenants::connection_by_id(&state.pool, connection_id)
        .await?
        .ok_or(Rejected::UnknownConnection)?;
    let sealed = connection
        .webhook_secret_enc
        .as_ref()
        .unwrap_or(&connection.client_secret_enc);
    let secret = state.key.open(sealed).map_err(PortalError::from)?;
    let record = |event, target: String, result| {
        NewRecord::new(actor, Some(connection.tenant_id), event, target, result)
    };
    if !verify_webhook(secret.expose_secret(), body, signature) {
        crate::metrics::webhook(false);
        // Counted, not chained one by one: anyone can POST here, and a
        // flood must not flood the log (see `sweep_rejections`).
        let sample = json!({ "reason": "bad signature", "bytes": body.len(), "ip": actor.ip });
        store::count_rejection(&state.pool, connection_id, &sample).await?;
        return Err(Rejected::BadSignature);
    }
    let (Ok(event), Ok(payload)) = (
        serde_json::from_slice::<WebhookEvent>(body),
        serde_json::from_slice::<serde_json::Value>(body),
    ) else {
        crate::metrics::webhook(false);
        return Err(Rejected::NotAnEvent);
    };
    crate::metrics::webhook(true);
    let tenant = connection.tenant_id;
    let mut tx = state.pool.begin().await?;
    if !store::store_once(
        &mut *tx,
        connection_id,
        tenant,
        &event.event_id,
        &event.event,
        &payload,
    )
    .await?
    {
        return Ok(Accepted::AlreadyReceived);
    }
    let details = json!({ "event": event.event, "connection": connection_id });
    let received = record(Event::WebhooksReceived, event.event_id.clone(), outcome::SUCCESS);
    audit::store::append_in(&mut tx, &[received.with_details(details)]).await?;
    tx.commit().await?;
    // Told once stored: a failure here leaves the event for a replay.
    dispatch(state, tenant, &event).await?;
    Ok(Accepted::New)
}

/// Tells the gate's requests an event concerns of it (each kind knows
/// which are its own). Safe to run again for the same event (a replay).
async fn dispatch(state: &AppState, tenant: Uuid, event: &WebhookEvent) -> Result<(), PortalError> {
    crate::approvals::hear(&state.pool, &state.gate, tenant, &event.event, &event.data).await?;
    Ok(())
}

/// Runs a stored event through the receiver again, as if it had just
/// arrived (after a fix, or when a request missed it), and records who did.
pub async fn replay(
    state: &AppState,
    member: &crate::access::Member,
    id: i64,
) -> Result<String, PortalError> {
    let row = store::find(&state.pool, member.tenant_id, id)
        .await?
        .ok_or_else(|| PortalError::NotFound("no such event".to_owned()))?;
    let event: WebhookEvent = serde_json::from_value(row.payload.clone()).map_err(|_| {
        PortalError::BadRequest("This stored event is not one the receiver reads.".to_owned())
    })?;
    dispatch(state, member.tenant_id, &event).await?;
    let details = json!({ "event": row.event, "event_id": row.event_id });
    audit::member_did(
        &state.pool,
        member,
        Event::WebhooksReplayed,
        &row.event_id,
        details,
    )
    .await?;
    Ok(format!(
        "The {} event went through the receiver again.",
        crate::web::show::humanize(&row.event)
    ))
}

/// Turns every finished minute of rejected deliveries into one audit
/// record in the connection's tenant, carrying the count and the first
/// delivery's particulars; minutes from `before` on are left to count.
/// Safe on every replica: each minute is taken once.
pub async fn sweep_rejections(
    pool: &sqlx::PgPool,
    before: chrono::DateTime<chrono::Utc>,
) -> Result<usize, sqlx::Error> {
    let mut tx = pool.begin().await?;
    let finished = store::take_finished_rejections(&mut tx, before).await?;
    let actor = Actor {
        email: "webhook".to_owned(),
        ..Actor::default()
    };
    let records: Vec<NewRecord> = finished
        .iter()
        .map(|m| {
            let details = json!({ "count": m.count, "minute": m.minute, "sample": m.sample });
            NewRecord::new(
                &Actor {
                    ip: m.sample["ip"].as_str().unwrap_or_default().to_owned(),
                    ..actor.clone()
                },
                Some(m.tenant_id),
                Event::WebhooksRejected,
                format!("connection:{}", m.connection_name),
                outcome::FAILURE,
            )
            .with_details(details)
        })
        .collect();
    audit::store::append_in(&mut tx, &records).await?;
    tx.commit().await?;
    Ok(records.len())
}
