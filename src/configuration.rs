//! Settings, typed: defaults that need no configuration (`cargo run` alone
//! gives a working portal against the built-in sandbox), then a TOML file,
//! then environment variables over it. The README's table lists every
//! key; `paydesk.example.toml` shows the file. Secrets stay wrapped, so a
//! `Debug` print of the settings shows none of them.

use std::net::SocketAddr;
use std::path::PathBuf;

use figment::providers::{Env, Format, Serialized, Toml};
use figment::Figment;
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};

/// The file read when `PAYDESK_CONFIG` names none (skipped when missing).
pub const DEFAULT_FILE: &str = "paydesk.toml";

#[derive(Debug, Clone, Deserialize)]
pub struct Settings {
    /// Where the portal listens (`listen`, `PAYDESK_LISTEN`).
    pub listen: SocketAddr,
    /// The portal's database (`database_url`, `DATABASE_URL`); created
    /// when missing.
    pub database_url: SecretString,
    /// Base64 of 32 bytes (`master_key`, `PAYDESK_MASTER_KEY`). Without it,
    /// default mode generates one and keeps it in the data directory, with
    /// a warning.
    pub master_key: Option<SecretString>,
    /// Where default mode keeps its key and the built-in sandbox's data
    /// (`data_dir`, `PAYDESK_DATA_DIR`).
    pub data_dir: PathBuf,
    /// True when served over TLS: cookies get `Secure`, answers get HSTS
    /// (`secure_cookies`, `PAYDESK_SECURE_COOKIES`).
    pub secure_cookies: bool,
    /// False in production: no in-process sandbox or demo tenant
    /// (`builtin_sandbox`, `PAYDESK_BUILTIN_SANDBOX`).
    pub builtin_sandbox: bool,
    /// When set, `/metrics` needs it as a bearer token (`metrics_token`,
    /// `PAYDESK_METRICS_TOKEN`).
    pub metrics_token: Option<SecretString>,
    /// The SMTP server for invitations and password resets (`smtp_url`,
    /// `PAYDESK_SMTP_URL`, e.g. `smtps://user:password@mail.example.com`).
    /// Without it mail lands in the outbox platform admins read.
    pub smtp_url: Option<SecretString>,
    /// The sender of that mail (`mail_from`, `PAYDESK_MAIL_FROM`).
    pub mail_from: String,
    /// The address staff reach the portal at, for links in mail
    /// (`public_url`, `PAYDESK_PUBLIC_URL`); `http://` and `listen` when unset.
    pub public_url: Option<String>,
    /// How often, at most, each audit log gets a signed checkpoint
    /// (`audit_checkpoint_minutes`, `PAYDESK_AUDIT_CHECKPOINT_MINUTES`);
    /// auditors can also sign one on demand.
    pub audit_checkpoint_minutes: u32,
    /// How many workers one process carries out approved actions with
    /// (`gate_workers`, `PAYDESK_GATE_WORKERS`); each takes up to 10 due at
    /// once and carries them out together, holding one database
    /// connection for their claim and borrowing others to record them.
    pub gate_workers: usize,
}

impl Settings {
    /// Where links in mail point, without a trailing slash; `bound` is
    /// the address the portal listens at (the port may have been chosen
    /// by the system).
    pub fn public_url(&self, bound: SocketAddr) -> String {
        match &self.public_url {
            Some(url) if !url.trim().is_empty() => url.trim().trim_end_matches('/').to_owned(),
            _ => format!("http://{bound}"),
        }
    }
}

/// The defaults, as the lowest layer.
#[derive(Serialize)]
struct Defaults {
    listen: &'static str,
    database_url: &'static str,
    data_dir: &'static str,
    secure_cookies: bool,
    builtin_sandbox: bool,
    mail_from: &'static str,
    audit_checkpoint_minutes: u32,
    gate_workers: usize,
}

const DEFAULTS: Defaults = Defaults {
    listen: "127.0.0.1:8080",
    database_url: "postgres://postgres@127.0.0.1:5432/paydesk",
    data_dir: ".paydesk",
    secure_cookies: false,
    builtin_sandbox: true,
    mail_from: "Paydesk <paydesk@localhost>",
    audit_checkpoint_minutes: 10,
    gate_workers: 8,
};

#[derive(Debug, thiserror::Error)]
#[error("the configuration is not valid: {0}")]
pub struct ConfigError(#[from] Box<figment::Error>);

impl Settings {
    /// Defaults, then the TOML file (`PAYDESK_CONFIG`, else `paydesk.toml`
    /// when it exists), then the environment. An empty variable counts as
    /// unset, as shells and container files often leave them.
    pub fn load() -> Result<Self, ConfigError> {
        let file = std::env::var("PAYDESK_CONFIG")
            .ok()
            .filter(|f| !f.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_FILE.to_owned());
        let set = |prefix: &'static str| {
            Env::prefixed(prefix).filter(move |key| {
                let name = format!("{prefix}{}", key.as_str().to_ascii_uppercase());
                std::env::var(name).is_ok_and(|v| !v.trim().is_empty())
            })
        };
        let settings: Settings = Figment::from(Serialized::defaults(DEFAULTS))
            .merge(Toml::file(file))
            .merge(set("PAYDESK_").ignore(&["config"]))
            .merge(set("").only(&["database_url"]))
            .extract()
            .map_err(Box::new)?;
        Ok(settings.without_empty_secrets())
    }

    /// An empty secret in the file counts as unset.
    fn without_empty_secrets(mut self) -> Self {
        let set = |s: Option<SecretString>| s.filter(|s| !s.expose_secret().trim().is_empty());
        self.master_key = set(self.master_key);
        self.metrics_token = set(self.metrics_token);
        self.smtp_url = set(self.smtp_url);
        self
    }
}

#[cfg(test)]
// figment's Jail takes closures that return figment's own, large, error.
#[allow(clippy::result_large_err)]
mod tests {
    use super::*;

    #[test]
    fn defaults_need_no_configuration() {
        figment::Jail::expect_with(|_| {
            let s = Settings::load().unwrap();
            assert_eq!(s.listen.to_string(), "127.0.0.1:8080");
            assert!(s.builtin_sandbox && !s.secure_cookies && s.master_key.is_none());
            Ok(())
        });
    }

    #[test]
    fn the_environment_wins_over_the_file_and_empty_means_unset() {
        figment::Jail::expect_with(|jail| {
            jail.create_file(
                "p.toml",
                r#"
                listen = "127.0.0.1:9000"
                secure_cookies = true
                metrics_token = "from-the-file"
                "#,
            )?;
            jail.set_env("PAYDESK_CONFIG", "p.toml");
            jail.set_env("PAYDESK_LISTEN", "127.0.0.1:9100");
            jail.set_env("PAYDESK_MASTER_KEY", "");
            jail.set_env("PAYDESK_BUILTIN_SANDBOX", "");
            jail.set_env("DATABASE_URL", "postgres://u:pw@db/x");
            let s = Settings::load().unwrap();
            assert_eq!(s.listen.to_string(), "127.0.0.1:9100");
            assert!(s.secure_cookies && s.builtin_sandbox);
            assert!(s.master_key.is_none(), "an empty variable is unset");
            assert_eq!(s.metrics_token.as_ref().unwrap().expose_secret(), "from-the-file");
            assert_eq!(s.database_url.expose_secret(), "postgres://u:pw@db/x");
            let shown = format!("{s:?}");
            assert!(
                !shown.contains("pw@") && !shown.contains("from-the-file"),
                "{shown}"
            );
            Ok(())
        });
    }

    #[test]
    fn a_bad_value_names_its_key() {
        figment::Jail::expect_with(|jail| {
            jail.set_env("PAYDESK_LISTEN", "not an address");
            let e = Settings::load().unwrap_err();
            assert!(
                e.to_string().contains("PAYDESK_") && e.to_string().contains("LISTEN"),
                "{e}"
            );
            Ok(())
        });
    }
}
