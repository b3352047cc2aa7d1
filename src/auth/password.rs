//! Password hashing with argon2id. Hashing is slow on purpose, so it runs
//! on the blocking pool, never on an async worker.

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use rand::Rng;
use secrecy::{ExposeSecret, SecretString};
use std::sync::LazyLock;

/// Shortest password accepted.
pub const MIN_LENGTH: usize = 12;

/// A hash to verify against when the account does not exist, so an unknown
/// email takes as long as a wrong password.
static DUMMY_HASH: LazyLock<String> = LazyLock::new(|| hash_now(&SecretString::from(one_time())));

fn hash_now(password: &SecretString) -> String {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.expose_secret().as_bytes(), &salt)
        .expect("argon2 hashes any password with default parameters")
        .to_string()
}

pub async fn hash(password: SecretString) -> String {
    tokio::task::spawn_blocking(move || hash_now(&password))
        .await
        .expect("the hashing task completes")
}

/// True when `password` matches `stored`; with no stored hash, spends the
/// same time and answers false.
pub async fn verify(stored: Option<String>, password: SecretString) -> bool {
    tokio::task::spawn_blocking(move || {
        let known = stored.is_some();
        let text = stored.unwrap_or_else(|| DUMMY_HASH.clone());
        let Ok(parsed) = PasswordHash::new(&text) else {
            return false;
        };
        let ok = Argon2::default()
            .verify_password(password.expose_secret().as_bytes(), &parsed)
            .is_ok();
        known && ok
    })
    .await
    .unwrap_or(false)
}

/// Why a new password is refused, in words for the form.
pub fn check_new(password: &str, email: &str) -> Result<(), String> {
    if password.chars().count() < MIN_LENGTH {
        return Err(format!("Use at least {MIN_LENGTH} characters."));
    }
    if password.eq_ignore_ascii_case(email) {
        return Err("Don't use your email address as your password.".to_owned());
    }
    Ok(())
}

/// A one-time password for a new account: 20 characters without look-alikes.
pub fn one_time() -> String {
    const ALPHABET: &[u8] = b"abcdefghjkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    let mut rng = rand::thread_rng();
    (0..20)
        .map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())] as char)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn hashes_verify_and_unknown_accounts_fail() {
        let h = hash(SecretString::from("correct horse battery")).await;
        assert!(h.starts_with("$argon2id$"));
        assert!(verify(Some(h.clone()), SecretString::from("correct horse battery")).await);
        assert!(!verify(Some(h), SecretString::from("wrong")).await);
        assert!(!verify(None, SecretString::from("anything")).await);
    }

    #[test]
    fn new_passwords_are_checked() {
        assert!(check_new("short", "a@b.c").is_err());
        assert!(check_new("long enough password", "a@b.c").is_ok());
        assert_eq!(one_time().len(), 20);
    }
}
