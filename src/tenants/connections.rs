//! A tenant's API connections: adding one (every field checked, the base
//! URL on the platform's allow-list so no tenant can point the server at
//! an internal address), making one primary, deleting one. Each is a
//! change filed through the gate; secrets are sealed before filing and
//! never shown again.

use secrecy::SecretString;
use serde::Deserialize;
use uuid::Uuid;

use super::model::{is_allowed, normalize_base_url};
use super::store::{self, Connection};
use crate::access::Member;
use crate::approvals::submit_control;
use crate::controls::connections::{sealed_text, ConnectionChange, ConnectionChangeAction};
use crate::state::AppState;
use crate::web::error::PortalError;
use crate::web::form::{self, Failure, Refusal};

#[derive(Deserialize)]
pub struct ConnectionForm {
    pub name: String,
    pub environment: String,
    pub base_url: String,
    pub client_id: String,
    pub client_secret: SecretString,
    #[serde(default)]
    pub webhook_secret: Option<SecretString>,
}

/// What the add form keeps when it is shown again; never the secrets.
#[derive(Default)]
pub struct ConnectionDraft {
    pub name: String,
    pub environment: String,
    pub base_url: String,
    pub client_id: String,
}

impl From<&ConnectionForm> for ConnectionDraft {
    fn from(f: &ConnectionForm) -> Self {
        ConnectionDraft {
            name: f.name.trim().to_owned(),
            environment: f.environment.clone(),
            base_url: f.base_url.trim().to_owned(),
            client_id: f.client_id.trim().to_owned(),
        }
    }
}

fn filled(secret: &SecretString) -> bool {
    use secrecy::ExposeSecret;
    !secret.expose_secret().trim().is_empty()
}

fn trimmed(secret: &SecretString) -> SecretString {
    use secrecy::ExposeSecret;
    SecretString::from(secret.expose_secret().trim().to_owned())
}

/// The connection to add, every field checked: (target, summary, change).
async fn addition(
    state: &AppState,
    member: &Member,
    f: &ConnectionForm,
) -> Result<(String, String, ConnectionChange), Failure> {
    let name = form::bounded(&f.name, "name", "the connection a name", 60)?;
    if store::connection_name_taken(&state.pool, member.tenant_id, &name).await? {
        return Err(Refusal::field(
            "name",
            format!("A connection named '{name}' already exists; choose another name."),
        )
        .into());
    }
    if !matches!(f.environment.as_str(), "sandbox" | "live") {
        return Err(Refusal::field("environment", "Choose sandbox or live.").into());
    }
    let base_url = normalize_base_url(&f.base_url).map_err(|m| Refusal::field("base_url", m))?;
    if !is_allowed(&base_url, &store::allowed_base_urls(&state.pool).await?) {
        let message = format!(
            "{base_url} is not on the platform's allow-list. Ask a platform admin to allow it first."
        );
        return Err(Refusal::field("base_url", message).into());
    }
    let client_id = form::bounded(&f.client_id, "client_id", "the client id", 200)?;
    if !filled(&f.client_secret) {
        return Err(Refusal::field("client_secret", "Enter the client secret.").into());
    }
    let webhook_secret = f.webhook_secret.as_ref().filter(|s| filled(s));
    let target = format!("connection:{name}");
    let summary = format!("Add the {} connection '{name}' ({base_url})", f.environment);
    let change = ConnectionChange::Add {
        name,
        environment: f.environment.clone(),
        base_url,
        client_id,
        client_secret_sealed: sealed_text(&state.key.seal(&trimmed(&f.client_secret))),
        webhook_secret_sealed: webhook_secret.map(|s| sealed_text(&state.key.seal(&trimmed(s)))),
    };
    Ok((target, summary, change))
}

#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id))]
pub async fn add(state: &AppState, member: &Member, f: &ConnectionForm) -> Result<String, Failure> {
    let (target, summary, change) = addition(state, member, f).await?;
    submit_control::<ConnectionChangeAction>(state, member, &target, &summary, change).await
}

pub async fn owned(state: &AppState, member: &Member, id: Uuid) -> Result<Connection, PortalError> {
    store::connection(&state.pool, member.tenant_id, id)
        .await?
        .ok_or_else(|| PortalError::NotFound("no such connection".to_owned()))
}

#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id, connection = %connection.id))]
pub async fn make_primary(
    state: &AppState,
    member: &Member,
    connection: &Connection,
) -> Result<String, Failure> {
    let change = ConnectionChange::MakePrimary {
        id: connection.id,
        name: connection.name.clone(),
    };
    let summary = format!("Make '{}' the primary connection", connection.name);
    submit_control::<ConnectionChangeAction>(
        state,
        member,
        &format!("connection:{}", connection.id),
        &summary,
        change,
    )
    .await
}

/// The built-in sandbox connection stays.
pub fn deletable(connection: &Connection) -> Result<(), Refusal> {
    if connection.is_builtin {
        return Err(Refusal::form("The built-in sandbox connection can't be deleted."));
    }
    Ok(())
}

#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id, connection = %connection.id))]
pub async fn delete(state: &AppState, member: &Member, connection: &Connection) -> Result<String, Failure> {
    deletable(connection)?;
    let change = ConnectionChange::Delete {
        id: connection.id,
        name: connection.name.clone(),
    };
    let summary = format!("Delete the connection '{}'", connection.name);
    submit_control::<ConnectionChangeAction>(
        state,
        member,
        &format!("connection:{}", connection.id),
        &summary,
        change,
    )
    .await
}
