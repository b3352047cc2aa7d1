//! Structured logs through `tracing`; `RUST_LOG` sets the filter.

pub fn init() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| "paydesk=info,paydesk_sandbox=info,actix_web=warn".into());
    tracing_subscriber::fmt().with_env_filter(filter).init();
}
