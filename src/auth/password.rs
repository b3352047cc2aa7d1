//! Password hashing with argon2id. Hashing is slow on purpose, so it runs
//! on the blocking pool, never on an async worker.

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use rand::Rng;
use secrecy::{ExposeSecret, SecretString};
use std::collections::HashSet;
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

/// zxcvbn's score a new password must reach: 3 is "safely unguessable"
/// against an online attack, which is what a sign-in form faces.
const MIN_SCORE: u8 = 3;

/// The most common breached passwords, bundled so the check needs no
/// network.
static COMMON: LazyLock<HashSet<&'static str>> = LazyLock::new(|| {
    include_str!("common-passwords.txt")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .collect()
});

/// The password as a guesser would try it: lower case, common letter
/// swaps undone, trailing digits and symbols dropped ("Passw0rd2026!" is
/// "password").
fn stem(password: &str) -> String {
    let plain: String = password
        .to_lowercase()
        .chars()
        .map(|c| match c {
            '0' => 'o',
            '1' | '!' => 'i',
            '3' => 'e',
            '4' | '@' => 'a',
            '5' | '$' => 's',
            '7' => 't',
            c => c,
        })
        .collect();
    let kept = password
        .trim_end_matches(|c: char| !c.is_alphabetic())
        .chars()
        .count();
    plain.chars().take(kept).collect()
}

/// Why a new password is refused, in words for the form.
pub fn check_new(password: &str, email: &str) -> Result<(), String> {
    if password.chars().count() < MIN_LENGTH {
        return Err(format!("Use at least {MIN_LENGTH} characters."));
    }
    if password.eq_ignore_ascii_case(email) {
        return Err("Don't use your email address as your password.".to_owned());
    }
    let lower = password.to_lowercase();
    if COMMON.contains(lower.as_str()) || COMMON.contains(stem(password).as_str()) {
        return Err(
            "This password (or one a letter or number away) is among the most common in breaches. Choose another, such as a few unrelated words."
                .to_owned(),
        );
    }
    let estimate = zxcvbn::zxcvbn(password, &[email]);
    if u8::from(estimate.score()) < MIN_SCORE {
        let why = estimate
            .feedback()
            .and_then(|f| f.warning())
            .map(|w| format!("{w} "))
            .unwrap_or_default();
        return Err(format!(
            "This password is too easy to guess. {why}Make it longer or less predictable, for example a few unrelated words."
        ));
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
    fn weak_and_breached_passwords_are_refused() {
        assert!(check_new("short", "a@b.c").is_err());
        for weak in [
            "aaaaaaaaaaaa",
            "password1234",
            "Passw0rd2026",
            "qwerty123456",
            "1qaz2wsx3edc",
        ] {
            assert!(check_new(weak, "a@b.c").is_err(), "{weak} is refused");
        }
        assert!(check_new("ada@example.com", "ada@example.com").is_err());
        for fine in [
            "violet kettle harbour",
            "a-long-enough-test-password",
            "viewer-password-123",
            "admin-password-123",
            "puppet-password-123",
            "leaver-password-123",
            "member-password-123",
        ] {
            assert_eq!(check_new(fine, "a@b.c"), Ok(()), "{fine}");
        }
        assert_eq!(one_time().len(), 20);
    }
}
