//! The audit log: one append-only, hash-chained record of every sign-in,
//! every change to users, roles, connections and settings, and every
//! upstream call. This module is the only place that writes it.

pub mod chain;
pub mod routes;
pub mod store;
pub mod writer;

use chrono::{DateTime, Utc};
use serde_json::Value;
use uuid::Uuid;

/// Who did something, from where.
#[derive(Debug, Clone, Default)]
pub struct Actor {
    pub user_id: Option<Uuid>,
    pub email: String,
    pub ip: String,
    pub user_agent: String,
}

/// A record about to be appended.
#[derive(Debug, Clone)]
pub struct NewRecord {
    pub occurred_at: DateTime<Utc>,
    pub tenant_id: Option<Uuid>,
    pub actor: Actor,
    pub action: String,
    pub target: String,
    pub outcome: String,
    pub details: Value,
}

impl NewRecord {
    pub fn new(
        actor: &Actor,
        tenant_id: Option<Uuid>,
        action: &str,
        target: impl Into<String>,
        outcome: &str,
    ) -> Self {
        NewRecord {
            occurred_at: chain::truncate_to_micros(Utc::now()),
            tenant_id,
            actor: actor.clone(),
            action: action.to_owned(),
            target: target.into(),
            outcome: outcome.to_owned(),
            details: Value::Object(Default::default()),
        }
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = details;
        self
    }
}

/// Outcomes of staff actions.
pub mod outcome {
    pub const SUCCESS: &str = "success";
    pub const FAILURE: &str = "failure";
}

/// Records that a member did `action` to `target` in their tenant.
pub async fn member_did(
    pool: &sqlx::PgPool,
    member: &crate::access::Member,
    action: &str,
    target: impl Into<String>,
    details: Value,
) -> Result<(), sqlx::Error> {
    store::append(
        pool,
        &[NewRecord::new(
            &member.actor(),
            Some(member.tenant_id),
            action,
            target,
            outcome::SUCCESS,
        )
        .with_details(details)],
    )
    .await
}
