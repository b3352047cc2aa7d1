//! The client factory: a signed client for a tenant's connection, reporting
//! each call to the audit log. Clients share one connection pool and are
//! cached per connection version, so a page load neither re-decrypts the
//! secret nor opens new connections; a changed connection gets a new entry.

use std::collections::HashMap;
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use paydesk_api::{Client, ClientOptions, Credentials};
use secrecy::ExposeSecret;
use sqlx::PgPool;
use uuid::Uuid;

use super::store;
use crate::access::Member;
use crate::audit::writer::AuditWriter;
use crate::audit::Actor;
use crate::crypto::MasterKey;
use crate::web::error::PortalError;

pub struct Upstreams {
    http: reqwest::Client,
    options: ClientOptions,
    cache: Mutex<HashMap<(Uuid, DateTime<Utc>), Client>>,
}

impl Default for Upstreams {
    fn default() -> Self {
        let options = ClientOptions::default();
        Self {
            http: Client::http_client(&options),
            options,
            cache: Mutex::new(HashMap::new()),
        }
    }
}

impl Upstreams {
    /// A signed client for the member's tenant, auditing as the member.
    pub async fn for_member(
        &self,
        pool: &PgPool,
        key: &MasterKey,
        audit: &AuditWriter,
        member: &Member,
    ) -> Result<Client, PortalError> {
        let connection = member.connection.ok_or(PortalError::NoConnection)?;
        self.for_connection(pool, key, audit, member.tenant_id, connection, member.actor())
            .await
    }

    /// A signed client for a tenant's connection, known by its id and
    /// version (`updated_at`), auditing as `actor`: no statement while the
    /// client of that version is cached. For work no member is doing right
    /// now, too (the approvals engine's jobs, which read the version with
    /// the job).
    pub async fn for_connection(
        &self,
        pool: &PgPool,
        key: &MasterKey,
        audit: &AuditWriter,
        tenant_id: Uuid,
        (id, version): (Uuid, DateTime<Utc>),
        actor: Actor,
    ) -> Result<Client, PortalError> {
        let cached = self.cache().get(&(id, version)).cloned();
        let client = match cached {
            Some(client) => client,
            None => {
                let connection = store::connection(pool, tenant_id, id)
                    .await?
                    .ok_or(PortalError::NoConnection)?;
                self.client(key, &connection)?
            }
        };
        Ok(client.observed(audit.observer(tenant_id, actor)))
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, HashMap<(Uuid, DateTime<Utc>), Client>> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn client(&self, key: &MasterKey, connection: &store::Connection) -> Result<Client, PortalError> {
        let cache_key = (connection.id, connection.updated_at);
        let secret = key.open(&connection.client_secret_enc)?;
        let client = Client::with_http(
            self.http.clone(),
            connection.base_url.clone(),
            Credentials::new(connection.client_id.clone(), secret.expose_secret()),
            self.options.clone(),
        );
        let mut cache = self.cache();
        cache.retain(|(id, _), _| *id != connection.id);
        cache.insert(cache_key, client.clone());
        Ok(client)
    }
}
