//! Request signing as the spec's Authentication section and `open-paths.md`
//! fix it: HMAC-SHA256 over `client_id:timestamp:nonce:body`, lowercase hex,
//! Unix-seconds timestamps, hex nonces, 300 s of skew either way.
//!
//! One function signs ([`signature`]) and one verifies ([`verify_signature`]);
//! the client and the sandbox both use them, so they cannot drift apart.

use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

pub const CLIENT_HEADER: &str = "x-auth-client";
pub const TIMESTAMP_HEADER: &str = "x-auth-timestamp";
pub const NONCE_HEADER: &str = "x-auth-nonce";
pub const SIGNATURE_HEADER: &str = "x-auth-signature";

/// How far a request's timestamp may be from the server's wall clock.
pub const MAX_CLOCK_SKEW_SECS: i64 = 300;

type HmacSha256 = Hmac<Sha256>;

/// Why a signed request was refused. The messages are safe to show to the
/// caller: they never contain the secret or the expected signature.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("the {0} header is missing")]
    MissingHeader(&'static str),
    #[error("X-Auth-Timestamp must be Unix seconds as a decimal string")]
    MalformedTimestamp,
    #[error("X-Auth-Timestamp is {skew_secs} s away from the server clock; at most {MAX_CLOCK_SKEW_SECS} s is allowed")]
    ClockSkew { skew_secs: i64 },
    #[error("X-Auth-Nonce must be 16 to 128 characters of A-Z, a-z, 0-9, '_' or '-'")]
    MalformedNonce,
    #[error("X-Auth-Nonce was already used; send a fresh nonce with every request")]
    ReplayedNonce,
    #[error("X-Auth-Signature must be lowercase hex HMAC-SHA256")]
    MalformedSignature,
    #[error("the signature does not match the request; sign client_id:timestamp:nonce:body with the client secret")]
    Mismatch,
}

/// The headers that authenticate one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedHeaders {
    pub client_id: String,
    pub timestamp: String,
    pub nonce: String,
    pub signature: String,
}

impl SignedHeaders {
    /// Header name/value pairs, in the lowercase form the official CLI sends.
    pub fn pairs(&self) -> [(&'static str, &str); 4] {
        [
            (CLIENT_HEADER, &self.client_id),
            (TIMESTAMP_HEADER, &self.timestamp),
            (NONCE_HEADER, &self.nonce),
            (SIGNATURE_HEADER, &self.signature),
        ]
    }
}

fn mac(secret: &str, client_id: &str, timestamp: &str, nonce: &str, body: &[u8]) -> HmacSha256 {
    // HMAC accepts keys of any length, so this cannot fail.
    let mut mac = HmacSha256::new_from_slice(secret.as_bytes()).expect("HMAC takes any key length");
    mac.update(client_id.as_bytes());
    mac.update(b":");
    mac.update(timestamp.as_bytes());
    mac.update(b":");
    mac.update(nonce.as_bytes());
    mac.update(b":");
    mac.update(body);
    mac
}

/// Lowercase hex HMAC-SHA256 of `client_id:timestamp:nonce:body`.
pub fn signature(secret: &str, client_id: &str, timestamp: &str, nonce: &str, body: &[u8]) -> String {
    hex::encode(
        mac(secret, client_id, timestamp, nonce, body)
            .finalize()
            .into_bytes(),
    )
}

/// Checks a presented signature in constant time.
pub fn verify_signature(
    secret: &str,
    client_id: &str,
    timestamp: &str,
    nonce: &str,
    body: &[u8],
    presented: &str,
) -> Result<(), SignatureError> {
    if presented.len() != 64
        || !presented
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return Err(SignatureError::MalformedSignature);
    }
    let bytes = hex::decode(presented).map_err(|_| SignatureError::MalformedSignature)?;
    mac(secret, client_id, timestamp, nonce, body)
        .verify_slice(&bytes)
        .map_err(|_| SignatureError::Mismatch)
}

/// A fresh nonce: 16 random bytes as 32 hex characters.
pub fn new_nonce() -> String {
    let mut bytes = [0u8; 16];
    rand::thread_rng().fill_bytes(&mut bytes);
    hex::encode(bytes)
}

/// Signs a request body at `now_unix` with a fresh nonce.
pub fn sign_request(client_id: &str, secret: &str, body: &[u8], now_unix: i64) -> SignedHeaders {
    let timestamp = now_unix.to_string();
    let nonce = new_nonce();
    let signature = signature(secret, client_id, &timestamp, &nonce, body);
    SignedHeaders {
        client_id: client_id.to_owned(),
        timestamp,
        nonce,
        signature,
    }
}

/// Parses a timestamp header and checks it against the server's wall clock.
pub fn check_timestamp(timestamp: &str, now_unix: i64) -> Result<i64, SignatureError> {
    if timestamp.is_empty() || timestamp.len() > 12 || !timestamp.bytes().all(|b| b.is_ascii_digit()) {
        return Err(SignatureError::MalformedTimestamp);
    }
    let ts: i64 = timestamp
        .parse()
        .map_err(|_| SignatureError::MalformedTimestamp)?;
    let skew_secs = ts - now_unix;
    if skew_secs.abs() > MAX_CLOCK_SKEW_SECS {
        return Err(SignatureError::ClockSkew { skew_secs });
    }
    Ok(ts)
}

/// The server accepts 16-128 characters of `[A-Za-z0-9_-]`.
pub fn check_nonce_format(nonce: &str) -> Result<(), SignatureError> {
    let ok = (16..=128).contains(&nonce.len())
        && nonce
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(SignatureError::MalformedNonce)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // Expected values computed independently with Python's standard library:
    //   hmac.new(secret.encode(), f"{cid}:{ts}:{nonce}:{body}".encode(), hashlib.sha256).hexdigest()
    // See the known_answers table for the exact inputs.
    const KNOWN_ANSWERS: &[(&str, &str, &str, &str, &str, &str)] = &[
        (
            "s3cr3t-key",
            "0d9c3c8e-6a39-4a5b-9d0b-5d3c1f4b8a21",
            "1767225600",
            "00112233445566778899aabbccddeeff",
            "",
            "fb81eb1db3ee61ed137bc1fe6c068183c807b4a729d4d1df86ed656276ee8449",
        ),
        (
            "s3cr3t-key",
            "0d9c3c8e-6a39-4a5b-9d0b-5d3c1f4b8a21",
            "1767225600",
            "00112233445566778899aabbccddeeff",
            r#"{"chain":"ethereum","label":"ops"}"#,
            "63831c8f082a1468bb7cf9817b1ef4262201f49e3c480b7373a95c595205751f",
        ),
    ];

    #[test]
    fn known_answers_match_an_independent_implementation() {
        for (secret, cid, ts, nonce, body, expected) in KNOWN_ANSWERS {
            assert_eq!(
                &signature(secret, cid, ts, nonce, body.as_bytes()),
                expected,
                "body {body:?}"
            );
        }
    }

    #[test]
    fn a_signed_request_verifies() {
        let headers = sign_request("client", "secret", b"{}", 1_700_000_000);
        assert_eq!(headers.nonce.len(), 32);
        verify_signature(
            "secret",
            "client",
            &headers.timestamp,
            &headers.nonce,
            b"{}",
            &headers.signature,
        )
        .unwrap();
    }

    #[test]
    fn uppercase_or_short_signatures_are_malformed() {
        let sig = signature("k", "c", "1", "n", b"");
        assert_eq!(
            verify_signature("k", "c", "1", "n", b"", &sig.to_uppercase()),
            Err(SignatureError::MalformedSignature)
        );
        assert_eq!(
            verify_signature("k", "c", "1", "n", b"", &sig[..63]),
            Err(SignatureError::MalformedSignature)
        );
    }

    #[test]
    fn timestamps_outside_the_window_are_refused() {
        assert_eq!(check_timestamp("1000", 1000), Ok(1000));
        assert_eq!(check_timestamp("1300", 1000), Ok(1300));
        assert_eq!(
            check_timestamp("1301", 1000),
            Err(SignatureError::ClockSkew { skew_secs: 301 })
        );
        assert_eq!(
            check_timestamp("699", 1000),
            Err(SignatureError::ClockSkew { skew_secs: -301 })
        );
        assert_eq!(
            check_timestamp("1000.5", 1000),
            Err(SignatureError::MalformedTimestamp)
        );
        assert_eq!(
            check_timestamp("2026-01-01T00:00:00Z", 1000),
            Err(SignatureError::MalformedTimestamp)
        );
        assert_eq!(check_timestamp("", 1000), Err(SignatureError::MalformedTimestamp));
    }

    #[test]
    fn nonce_format_is_checked() {
        assert!(check_nonce_format(&new_nonce()).is_ok());
        assert!(check_nonce_format("short").is_err());
        assert!(check_nonce_format(&"a".repeat(129)).is_err());
        assert!(check_nonce_format("has spaces in it!!").is_err());
        assert!(check_nonce_format("Valid_nonce-0123456789").is_ok());
    }

    proptest! {
        #[test]
        fn any_change_breaks_the_signature(
            secret in "[ -~]{1,40}",
            cid in "[a-f0-9-]{1,36}",
            ts in 0i64..4_000_000_000,
            nonce in "[A-Za-z0-9_-]{16,64}",
            body in proptest::collection::vec(any::<u8>(), 0..200),
            flip in any::<proptest::sample::Index>(),
        ) {
            let ts = ts.to_string();
            let sig = signature(&secret, &cid, &ts, &nonce, &body);
            prop_assert!(verify_signature(&secret, &cid, &ts, &nonce, &body, &sig).is_ok());

            let mut other_body = body.clone();
            if other_body.is_empty() { other_body.push(b'{'); } else {
                let i = flip.index(other_body.len());
                other_body[i] ^= 0x01;
            }
            prop_assert!(verify_signature(&secret, &cid, &ts, &nonce, &other_body, &sig).is_err());
            let other_cid = format!("{cid}x");
            let other_ts = format!("{ts}1");
            let other_nonce = format!("{nonce}a");
            let other_secret = format!("{secret}!");
            prop_assert!(verify_signature(&secret, &other_cid, &ts, &nonce, &body, &sig).is_err());
            prop_assert!(verify_signature(&secret, &cid, &other_ts, &nonce, &body, &sig).is_err());
            prop_assert!(verify_signature(&secret, &cid, &ts, &other_nonce, &body, &sig).is_err());
            prop_assert!(verify_signature(&other_secret, &cid, &ts, &nonce, &body, &sig).is_err());
        }
    }
}
