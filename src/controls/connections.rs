//! Adding, deleting and switching the tenant's API connections as a
//! control of the approval gate. Secrets travel in the payload sealed
//! with the master key (AES-256-GCM), as they are stored; reviewers see
//! that a secret is set, never the secret.

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::json;
use uuid::Uuid;

use crate::access::permissions::Permission;
use crate::approvals::{Action, ExecError, Fact, Run, Step};
use crate::approvals::{Kind, Policy};
use crate::audit::Event;
use crate::audit::{self, outcome, NewRecord};
use crate::tenants::store::{self as tenants, NewConnection};

pub struct ConnectionChangeAction;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum ConnectionChange {
    Add {
        name: String,
        environment: String,
        base_url: String,
        client_id: String,
        /// Base64 of the sealed secret.
        client_secret_sealed: String,
        webhook_secret_sealed: Option<String>,
    },
    Delete {
        id: Uuid,
        name: String,
    },
    MakePrimary {
        id: Uuid,
        name: String,
    },
}

pub fn sealed_text(sealed: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(sealed)
}

fn unsealed_bytes(text: &str) -> Result<Vec<u8>, ExecError> {
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| ExecError::Internal(format!("a sealed secret is unreadable: {e}")))
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Applied {}

impl Action for ConnectionChangeAction {
    type Payload = ConnectionChange;
    type Progress = Applied;

    const KIND: Kind = Kind {
        key: "connection_change",
        label: "API connection changes",
        read_permission: Permission::ConnectionsManage,
        request_permission: Permission::ConnectionsManage,
        approve_permission: Permission::ConnectionsManage,
    };
    const CONTROL: bool = true;

    fn default_policy(&self) -> Policy {
        Policy::four_eyes()
    }

    fn describe(&self, c: &ConnectionChange) -> Vec<Fact> {
        match c {
            ConnectionChange::Add {
                name,
                environment,
                base_url,
                client_id,
                webhook_secret_sealed,
                ..
            } => vec![
                Fact::new("Add connection", name.clone()),
                Fact::new("Environment", environment.clone()),
                Fact::new("Base URL", base_url.clone()),
                Fact::new("Client id", client_id.clone()),
                Fact::new("Client secret", "set (stored encrypted, never shown)"),
                Fact::new(
                    "Webhook secret",
                    if webhook_secret_sealed.is_some() {
                        "set"
                    } else {
                        "none"
                    },
                ),
            ],
            ConnectionChange::Delete { name, .. } => vec![Fact::new("Delete connection", name.clone())],
            ConnectionChange::MakePrimary { name, .. } => {
                vec![Fact::new(
                    "Make primary",
                    format!("{name}: every page and action will use it"),
                )]
            }
        }
    }

    async fn execute(
        &self,
        run: &mut Run<'_, Applied>,
        c: &ConnectionChange,
    ) -> Result<Step<ConnectionChange>, ExecError> {
        let request = run.request;
        let tenant = request.tenant_id;
        let mut tx = run.pool.begin().await?;
        let (action, target, done) = match c {
            ConnectionChange::Add {
                name,
                environment,
                base_url,
                client_id,
                client_secret_sealed,
                webhook_secret_sealed,
            } => {
                if tenants::connection_name_taken(run.pool, tenant, name).await? {
                    return Ok(Step::Failed(format!(
                        "A connection named '{name}' was added meanwhile."
                    )));
                }
                let id = tenants::add_connection(
                    &mut *tx,
                    NewConnection {
                        tenant_id: tenant,
                        name,
                        environment,
                        base_url,
                        client_id,
                        client_secret_enc: unsealed_bytes(client_secret_sealed)?,
                        webhook_secret_enc: webhook_secret_sealed
                            .as_deref()
                            .map(unsealed_bytes)
                            .transpose()?,
                        is_builtin: false,
                    },
                )
                .await?;
                (Event::ConnectionsCreated, id, format!("Connection '{name}' added. Its secrets are stored encrypted and won't be shown again."))
            }
            ConnectionChange::Delete { id, name } => {
                if !tenants::delete_connection_in(&mut tx, tenant, *id).await? {
                    return Ok(Step::Failed(format!(
                        "'{name}' was not deleted: it no longer exists or is the built-in sandbox."
                    )));
                }
                (
                    Event::ConnectionsDeleted,
                    *id,
                    format!("Connection '{name}' deleted."),
                )
            }
            ConnectionChange::MakePrimary { id, name } => {
                tenants::make_primary(&mut tx, tenant, *id).await?;
                (
                    Event::ConnectionsMadePrimary,
                    *id,
                    format!("'{name}' is now the primary connection."),
                )
            }
        };
        audit::store::append_in(
            &mut tx,
            &[NewRecord::new(
                &crate::approvals::gate_actor(),
                Some(tenant),
                action,
                format!("connection:{target}"),
                outcome::SUCCESS,
            )
            .with_details(json!({"requested_by": request.requester_email, "request": request.id}))],
        )
        .await?;
        tx.commit().await?;
        Ok(Step::Done(done))
    }
}
