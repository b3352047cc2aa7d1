use actix_web::http::StatusCode;
use actix_web::web::Data;
use paydesk_api::models::identity::Identity;

use crate::error::ApiError;
use crate::respond::{envelope, json, Caller, JsonAnswer};
use crate::state::Shared;

/// The identity plus `authenticated: true`, which the provider's official
/// client reads; an addition to what the spec shows (given in `data`, and
/// at the top level of the answer too with the identity's fields, where
/// that client reads them).
#[derive(serde::Serialize)]
struct WhoamiAnswer {
    #[serde(flatten)]
    identity: Identity,
    authenticated: bool,
}

/// `/api/whoami`, any method and payload.
pub async fn whoami(shared: Data<Shared>, caller: Caller) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let store = shared.store();
    let client = store
        .clients
        .get(&caller.client_id)
        .ok_or_else(|| ApiError::Unauthorized("unknown client".to_owned()))?;
    let identity = Identity {
        active: client.active,
        active_company_id: client.company_id,
        auth_method: "hmac".to_owned(),
        client_id: client.id,
        client_name: client.name.clone(),
        environment: client.environment,
        permissions: client.permissions.clone(),
    };
    let answer = envelope(
        StatusCode::OK,
        "Authenticated",
        WhoamiAnswer {
            identity,
            authenticated: true,
        },
        &caller.request_id,
        now,
    );
    let mut body: serde_json::Value = serde_json::from_slice(&answer.body)
        .map_err(|e| ApiError::invalid(format!("the answer could not be written: {e}")))?;
    if let Some(data) = body["data"].as_object().cloned() {
        for (key, value) in data {
            body[key] = value;
        }
    }
    Ok(json(StatusCode::OK, &body))
}
