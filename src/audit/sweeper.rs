//! The audit log's periodic work, once a minute on every replica (each
//! step takes its rows or its log's lock, so replicas do not repeat one
//! another): rejected webhook deliveries of finished minutes become one
//! record each, and logs whose head moved get a signed checkpoint when
//! their latest is older than the configured interval.

use chrono::{DurationRound, TimeDelta, Utc};
use ed25519_dalek::SigningKey;
use sqlx::PgPool;

use super::checkpoint;

pub fn start(pool: PgPool, key: SigningKey, checkpoint_every: TimeDelta) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(60));
        loop {
            tick.tick().await;
            let now = Utc::now();
            let minute = now.duration_trunc(TimeDelta::minutes(1)).unwrap_or(now);
            if let Err(e) = crate::webhooks::receiver::sweep_rejections(&pool, minute).await {
                tracing::error!(error = %e, "could not record rejected webhook deliveries");
            }
            if let Err(e) = checkpoint::sign_due(&pool, &key, checkpoint_every).await {
                tracing::error!(error = %e, "could not sign audit checkpoints");
            }
        }
    });
}
