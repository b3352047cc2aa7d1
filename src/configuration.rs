//! Settings from the environment, with defaults that need no configuration:
//! `cargo run` alone gives a working portal against the built-in sandbox.

use std::net::SocketAddr;
use std::path::PathBuf;

use secrecy::SecretString;

#[derive(Debug, Clone)]
pub struct Settings {
    /// Where the portal listens (`PAYDESK_LISTEN`, default 127.0.0.1:8080).
    pub listen: SocketAddr,
    /// `DATABASE_URL`, default the local server's `paydesk` database
    /// (created when missing).
    pub database_url: String,
    /// `PAYDESK_MASTER_KEY` (base64 of 32 bytes). Without it, default mode
    /// generates one and keeps it in the data directory, with a warning.
    pub master_key: Option<SecretString>,
    /// `PAYDESK_DATA_DIR`, default `.paydesk` in the working directory.
    pub data_dir: PathBuf,
    /// `PAYDESK_SECURE_COOKIES=true` when served over TLS (cookies get
    /// `Secure`, responses get HSTS).
    pub secure_cookies: bool,
    /// `PAYDESK_BUILTIN_SANDBOX=false` turns off the in-process sandbox and
    /// its demo tenant (production).
    pub builtin_sandbox: bool,
    /// `PAYDESK_METRICS_TOKEN`: when set, `/metrics` needs it as a bearer
    /// token.
    pub metrics_token: Option<SecretString>,
}

impl Settings {
    pub fn from_env() -> Self {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let flag = |name: &str, default: bool| {
            var(name).map_or(default, |v| {
                matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes")
            })
        };
        Settings {
            listen: var("PAYDESK_LISTEN")
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 8080))),
            database_url: var("DATABASE_URL")
                .unwrap_or_else(|| "postgres://postgres@127.0.0.1:5432/paydesk".to_owned()),
            master_key: var("PAYDESK_MASTER_KEY").map(SecretString::from),
            data_dir: var("PAYDESK_DATA_DIR").map_or_else(|| PathBuf::from(".paydesk"), PathBuf::from),
            secure_cookies: flag("PAYDESK_SECURE_COOKIES", false),
            builtin_sandbox: flag("PAYDESK_BUILTIN_SANDBOX", true),
            metrics_token: var("PAYDESK_METRICS_TOKEN").map(SecretString::from),
        }
    }
}
