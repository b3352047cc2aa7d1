//! Signed checkpoints: the portal's Ed25519 signature over one log's length
//! and head hash at a moment, each linked to the log's previous checkpoint.
//! Given an export and the public key, anyone can check offline that the
//! records are the ones the portal had signed, and that none were cut off.

use chrono::{DateTime, Utc};
use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use sqlx::PgPool;
use uuid::Uuid;

use super::chain::GENESIS;
use super::store::{self, Log};

/// One checkpoint as stored, listed and exported (hashes and keys in hex).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Checkpoint {
    pub id: i64,
    pub tenant_id: Option<Uuid>,
    /// How many records of the log it covers (the head is record `length`).
    pub length: i64,
    pub head_hash: String,
    pub signed_at: DateTime<Utc>,
    pub prev_hash: String,
    pub hash: String,
    pub signature: String,
}

/// The exact bytes signed: a labelled line per field, so that no two
/// checkpoints share a message.
pub fn message(
    tenant_id: Option<Uuid>,
    length: i64,
    head_hash: &str,
    signed_at: DateTime<Utc>,
    prev_hash: &str,
) -> String {
    let log = tenant_id.map_or_else(|| "platform".to_owned(), |t| format!("tenant:{t}"));
    format!(
        "paydesk-audit-checkpoint/1\nlog={log}\nlength={length}\nhead={head_hash}\nsigned_at={}\nprev={prev_hash}\n",
        signed_at.timestamp_micros()
    )
}

impl Checkpoint {
    fn message(&self) -> String {
        message(
            self.tenant_id,
            self.length,
            &self.head_hash,
            self.signed_at,
            &self.prev_hash,
        )
    }

    /// Why this checkpoint is not what `key` signed, if it is not.
    pub fn check(&self, key: &VerifyingKey) -> Result<(), &'static str> {
        if hex::encode(Sha256::digest(self.message())) != self.hash {
            return Err("its hash does not match its fields (the checkpoint was altered)");
        }
        let signature = hex::decode(&self.signature)
            .ok()
            .and_then(|b| Signature::from_slice(&b).ok())
            .ok_or("its signature is not an Ed25519 signature")?;
        key.verify(self.message().as_bytes(), &signature)
            .map_err(|_| "its signature does not verify with the public key")
    }
}

/// Signs the log's head now, unless the latest checkpoint already covers
/// it or (with `min_age`) is younger than that; the new checkpoint, if one
/// was made.
pub async fn sign(
    pool: &PgPool,
    key: &SigningKey,
    log: Log,
    min_age: Option<chrono::Duration>,
) -> Result<Option<Checkpoint>, sqlx::Error> {
    store::link(pool, log).await?;
    let mut tx = pool.begin().await?;
    // Under the log's lock its head cannot move, and two replicas cannot
    // sign the same head twice.
    store::lock_logs(&mut tx, &[log]).await?;
    let Some((length, head)) = store::head(&mut tx, log).await? else {
        return Ok(None);
    };
    let latest = store::latest_checkpoint(&mut tx, log).await?;
    let now = super::chain::truncate_to_micros(Utc::now());
    if let Some(latest) = &latest {
        let recent = min_age.is_some_and(|age| latest.signed_at > now - age);
        if latest.length >= length || recent {
            return Ok(None);
        }
    }
    let prev_hash = latest.map_or_else(|| hex::encode(GENESIS), |c| c.hash);
    let head_hash = hex::encode(head);
    let text = message(log.tenant_id(), length, &head_hash, now, &prev_hash);
    let signature = key.sign(text.as_bytes());
    let mut checkpoint = Checkpoint {
        id: 0,
        tenant_id: log.tenant_id(),
        length,
        head_hash,
        signed_at: now,
        prev_hash,
        hash: hex::encode(Sha256::digest(&text)),
        signature: hex::encode(signature.to_bytes()),
    };
    checkpoint.id = store::insert_checkpoint(&mut tx, &checkpoint, key.verifying_key().as_bytes()).await?;
    tx.commit().await?;
    Ok(Some(checkpoint))
}

/// Signs every log whose head moved and whose latest checkpoint is at
/// least `every` old: the periodic job, safe to run on every replica.
pub async fn sign_due(
    pool: &PgPool,
    key: &SigningKey,
    every: chrono::Duration,
) -> Result<usize, sqlx::Error> {
    let mut signed = 0;
    for log in store::logs(pool).await? {
        signed += sign(pool, key, log, Some(every)).await?.is_some() as usize;
    }
    Ok(signed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_verifies_and_any_change_is_caught() {
        let key = SigningKey::from_bytes(&[7; 32]);
        let at = super::super::chain::truncate_to_micros(Utc::now());
        let text = message(None, 3, "ab", at, "cd");
        let good = Checkpoint {
            id: 1,
            tenant_id: None,
            length: 3,
            head_hash: "ab".into(),
            signed_at: at,
            prev_hash: "cd".into(),
            hash: hex::encode(Sha256::digest(&text)),
            signature: hex::encode(key.sign(text.as_bytes()).to_bytes()),
        };
        assert_eq!(good.check(&key.verifying_key()), Ok(()));
        let longer = Checkpoint {
            length: 4,
            ..good.clone()
        };
        assert!(longer.check(&key.verifying_key()).is_err());
        let other = SigningKey::from_bytes(&[8; 32]).verifying_key();
        assert!(good.check(&other).is_err());
    }
}
