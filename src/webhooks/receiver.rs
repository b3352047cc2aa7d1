//! Accepting a delivery: the signature checked over the raw body with the
//! connection's webhook secret (or its client secret when it has none: the
//! service signs with that by default), the event stored once by its id, a
//! payout's request told of its outcome, and each outcome audited.

use paydesk_api::models::events::WebhookEvent;
use paydesk_api::webhook::verify_webhook;
use secrecy::ExposeSecret;
use serde_json::json;
use uuid::Uuid;

use super::store;
use crate::audit::{self, outcome, Actor, Event, NewRecord};
use crate::startup::AppState;
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
        let details = json!({ "reason": "bad signature", "bytes": body.len() });
        let rejected = record(
            Event::WebhooksRejected,
            format!("connection:{connection_id}"),
            outcome::FAILURE,
        );
        audit::store::append(&state.pool, &[rejected.with_details(details)]).await?;
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
    if !store::store_once(
        &state.pool,
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
    if let (true, Some(payout_id)) = (event.event.starts_with("payouts."), event.data["id"].as_str()) {
        crate::payouts::action::on_event(&state.pool, tenant, payout_id, &event.event).await?;
    }
    if let (true, Some(reference)) = (
        event.event.starts_with("transfer."),
        event.data["reference"].as_str(),
    ) {
        crate::withdrawals::action::on_event(&state.pool, tenant, reference, &event.event).await?;
    }
    let details = json!({ "event": event.event, "connection": connection_id });
    let received = record(Event::WebhooksReceived, event.event_id.clone(), outcome::SUCCESS);
    audit::store::append(&state.pool, &[received.with_details(details)]).await?;
    Ok(Accepted::New)
}
