//! Secrets at rest: API client secrets and webhook secrets are sealed with
//! AES-256-GCM under the master key (a fresh 96-bit nonce per value, stored
//! in front of the ciphertext). The key never leaves this module's types;
//! the notice cookie is signed with a key derived from it.

use aes_gcm::aead::{Aead, KeyInit, OsRng};
use aes_gcm::{AeadCore, Aes256Gcm, Key, Nonce};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use secrecy::{ExposeSecret, SecretBox, SecretString};

const NONCE_LEN: usize = 12;

#[derive(Debug, thiserror::Error)]
pub enum CryptoError {
    #[error("PAYDESK_MASTER_KEY must be 32 bytes encoded as base64 (44 characters); generate one with `openssl rand -base64 32`")]
    BadKey,
    #[error(
        "a stored secret could not be decrypted: it was sealed under another master key or has been altered"
    )]
    Undecryptable,
}

/// The 256-bit key that seals stored secrets.
pub struct MasterKey(SecretBox<[u8; 32]>);

impl MasterKey {
    pub fn from_base64(encoded: &str) -> Result<Self, CryptoError> {
        let bytes = STANDARD.decode(encoded.trim()).map_err(|_| CryptoError::BadKey)?;
        let key: [u8; 32] = bytes.try_into().map_err(|_| CryptoError::BadKey)?;
        Ok(Self(SecretBox::new(Box::new(key))))
    }

    pub fn generate() -> (Self, String) {
        let key = Aes256Gcm::generate_key(OsRng);
        let encoded = STANDARD.encode(key);
        let bytes: [u8; 32] = key.into();
        (Self(SecretBox::new(Box::new(bytes))), encoded)
    }

    fn cipher(&self) -> Aes256Gcm {
        Aes256Gcm::new(Key::<Aes256Gcm>::from_slice(self.0.expose_secret()))
    }

    /// The key that signs the notice cookie, derived (HKDF) so the master
    /// key itself never signs anything a browser holds.
    pub fn derive_cookie_key(&self) -> actix_web::cookie::Key {
        actix_web::cookie::Key::derive_from(self.0.expose_secret())
    }

    /// The audit log's checkpoint signing key, derived (HKDF-SHA256 under a
    /// label of its own) so that every replica signs with the same key and
    /// nothing more has to be configured or kept.
    pub fn derive_audit_signing_key(&self) -> ed25519_dalek::SigningKey {
        let mut seed = [0u8; 32];
        hkdf::Hkdf::<sha2::Sha256>::new(None, self.0.expose_secret())
            .expand(b"paydesk audit checkpoint signing key v1", &mut seed)
            .expect("32 bytes is a valid HKDF-SHA256 output length");
        ed25519_dalek::SigningKey::from_bytes(&seed)
    }

    /// Seals a secret: nonce || ciphertext+tag.
    pub fn seal(&self, plaintext: &SecretString) -> Vec<u8> {
        let nonce = Aes256Gcm::generate_nonce(&mut OsRng);
        let mut out = nonce.to_vec();
        let sealed = self
            .cipher()
            .encrypt(&nonce, plaintext.expose_secret().as_bytes())
            .expect("AES-GCM encryption of an in-memory buffer cannot fail");
        out.extend_from_slice(&sealed);
        out
    }

    pub fn open(&self, sealed: &[u8]) -> Result<SecretString, CryptoError> {
        if sealed.len() < NONCE_LEN {
            return Err(CryptoError::Undecryptable);
        }
        let (nonce, ciphertext) = sealed.split_at(NONCE_LEN);
        let plain = self
            .cipher()
            .decrypt(Nonce::from_slice(nonce), ciphertext)
            .map_err(|_| CryptoError::Undecryptable)?;
        let text = String::from_utf8(plain).map_err(|_| CryptoError::Undecryptable)?;
        Ok(SecretString::from(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seals_and_opens_and_detects_tampering_or_another_key() {
        let (key, encoded) = MasterKey::generate();
        let sealed = key.seal(&SecretString::from("client-secret"));
        assert!(!sealed.windows(13).any(|w| w == b"client-secret"));
        assert_eq!(key.open(&sealed).unwrap().expose_secret(), "client-secret");
        let same = MasterKey::from_base64(&encoded).unwrap();
        assert_eq!(same.open(&sealed).unwrap().expose_secret(), "client-secret");

        let mut tampered = sealed.clone();
        *tampered.last_mut().unwrap() ^= 1;
        assert!(key.open(&tampered).is_err());
        let (other, _) = MasterKey::generate();
        assert!(other.open(&sealed).is_err());
        assert!(MasterKey::from_base64("short").is_err());
    }
}
