//! Structured logs through `tracing`; `RUST_LOG` sets the filter. Each
//! request is a span (request id, method, route, status) logged when it
//! closes, with its duration.

use tracing_subscriber::fmt::format::FmtSpan;

pub fn init() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| "paydesk=info,paydesk_sandbox=info,tracing_actix_web=info,actix_web=warn".into());
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_span_events(FmtSpan::CLOSE)
        .init();
}
