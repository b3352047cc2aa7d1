//! What every handler shares, in a room of its own below the features:
//! features import it, `startup` builds it and registers the routes.

use std::sync::Arc;

use paydesk_api::Client;
use sqlx::PgPool;

use crate::approvals::Registry;
use crate::audit::writer::AuditWriter;
use crate::auth::session_cache::SessionCache;
use crate::crypto::MasterKey;
use crate::tenants::upstream::Upstreams;

/// What every handler shares. Nothing here is state another replica needs:
/// sessions, jobs and data live in Postgres; the client and session
/// caches are caches.
pub struct AppState {
    pub pool: PgPool,
    pub key: MasterKey,
    pub audit: AuditWriter,
    pub upstreams: Upstreams,
    /// Payout corridors and banks, kept briefly for filings.
    pub corridors: crate::payouts::filing::Corridors,
    pub secure_cookies: bool,
    /// The kinds of action the approval gate runs.
    pub gate: Registry,
    pub metrics_token: Option<secrecy::SecretString>,
    /// Invitations and password resets go out through it.
    pub mailer: crate::mail::Mailer,
    /// Where links in mail point.
    pub public_url: String,
    /// Sessions kept between changes to them (see `auth::session_cache`).
    pub sessions: Arc<SessionCache>,
}

impl AppState {
    /// The member's signed client for their tenant, after checking that
    /// they hold `permission`.
    pub async fn client_for(
        &self,
        member: &crate::access::Member,
        permission: crate::access::permissions::Permission,
    ) -> Result<Client, crate::web::error::PortalError> {
        member.require(permission)?;
        self.upstreams
            .for_member(&self.pool, &self.key, &self.audit, member)
            .await
    }
}
