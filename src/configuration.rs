//! Settings from the environment, with defaults that need no configuration.

use std::net::SocketAddr;

#[derive(Debug, Clone)]
pub struct Settings {
    /// Where the portal listens (`PAYDESK_LISTEN`, default 127.0.0.1:8080).
    pub listen: SocketAddr,
}

impl Settings {
    pub fn from_env() -> Self {
        let listen = std::env::var("PAYDESK_LISTEN")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 8080)));
        Settings { listen }
    }
}
