//! Prometheus metrics at `/metrics`: request latency per route, upstream
//! call latency and errors per operation, approval requests by status,
//! the job queue's depth and age, and webhook events received and
//! rejected. Scraping needs no session; when `PAYDESK_METRICS_TOKEN` is
//! set it needs `Authorization: Bearer <token>`.

use std::sync::OnceLock;
use std::time::Instant;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header;
use actix_web::middleware::Next;
use actix_web::web::Data;
use actix_web::{HttpRequest, HttpResponse};
use constant_time_eq::constant_time_eq;
use metrics::{counter, gauge, histogram};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use paydesk_api::paths::Operation;
use paydesk_api::{CallOutcome, CallRecord};
use secrecy::ExposeSecret;

use crate::state::AppState;
use crate::web::error::PortalError;

/// One recorder for the process (tests run many apps in one).
fn handle() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let recorder = PrometheusBuilder::new()
            .set_buckets(&[0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0])
            .map(PrometheusBuilder::build_recorder)
            .unwrap_or_else(|_| PrometheusBuilder::new().build_recorder());
        let handle = recorder.handle();
        // Another recorder already installed (an embedding program's)
        // keeps its place; ours then renders what it was given.
        let _ = metrics::set_global_recorder(recorder);
        handle
    })
}

/// Times every request by its route pattern, never its concrete path.
pub async fn record_requests(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    handle();
    let started = Instant::now();
    let method = req.method().to_string();
    let res = next.call(req).await?.map_into_boxed_body();
    let route = res
        .request()
        .match_pattern()
        .unwrap_or_else(|| "unmatched".to_owned());
    histogram!("paydesk_http_request_duration_seconds",
        "route" => route, "method" => method, "status" => res.status().as_u16().to_string())
    .record(started.elapsed().as_secs_f64());
    Ok(res)
}

/// The operation a call was, by its method and path template. Runs for
/// every upstream call, so it compares segments as it splits them rather
/// than collecting each of the hundred templates.
fn operation(method: &str, path: &str) -> &'static str {
    let concrete = path.split('?').next().unwrap_or_default();
    Operation::ALL
        .iter()
        .find(|op| {
            let (mut template, mut given) = (op.template().split('/'), concrete.split('/'));
            op.method().as_str() == method
                && std::iter::from_fn(|| match (template.next(), given.next()) {
                    (None, None) => None,
                    (Some(t), Some(c)) => Some(t.starts_with('{') || t == c),
                    _ => Some(false),
                })
                .all(|same| same)
        })
        .map_or("unknown", |op| op.template())
}

/// Records one upstream call.
pub fn upstream_call(call: &CallRecord) {
    let operation = operation(call.method, &call.path);
    histogram!("paydesk_upstream_call_duration_seconds", "operation" => operation, "method" => call.method)
        .record(call.duration.as_secs_f64());
    if call.outcome != CallOutcome::Ok {
        counter!("paydesk_upstream_call_errors_total", "operation" => operation, "method" => call.method)
            .increment(1);
    }
}

/// A webhook event the receiver accepted or rejected.
pub fn webhook(accepted: bool) {
    let outcome = if accepted { "received" } else { "rejected" };
    counter!("paydesk_webhook_events_total", "outcome" => outcome).increment(1);
}

/// Whether the request may read the metrics: anyone when no token is
/// set, else only with the token as a bearer.
fn allowed(state: &AppState, req: &HttpRequest) -> bool {
    let Some(token) = &state.metrics_token else {
        return true;
    };
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default();
    constant_time_eq(given.as_bytes(), token.expose_secret().as_bytes())
}

/// Sets the gauges from the database, so every replica reports the same
/// approvals and the same queue.
async fn read_gauges(pool: &sqlx::PgPool) -> Result<(), sqlx::Error> {
    let by_status = crate::approvals::count_by_status(pool).await?;
    for status in crate::approvals::RequestStatus::ALL {
        let count = by_status
            .iter()
            .find(|(s, _)| s == status)
            .map_or(0, |(_, count)| *count);
        gauge!("paydesk_approval_requests", "status" => status.as_str()).set(count as f64);
    }
    let (depth, oldest) = crate::approvals::queue_depth(pool).await?;
    gauge!("paydesk_job_queue_depth").set(depth as f64);
    gauge!("paydesk_job_queue_oldest_due_seconds").set(oldest);
    Ok(())
}

/// `GET /metrics`, in Prometheus' text format.
pub async fn scrape(state: Data<AppState>, req: HttpRequest) -> Result<HttpResponse, PortalError> {
    if !allowed(&state, &req) {
        return Ok(HttpResponse::Unauthorized()
            .insert_header((header::WWW_AUTHENTICATE, "Bearer"))
            .body("a bearer token is needed to read the metrics"));
    }
    read_gauges(&state.pool).await?;
    Ok(HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4")
        .body(handle().render()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_labelled_by_operation_not_by_id() {
        assert_eq!(operation("GET", "/api/cards/3f1c"), "/api/cards/{cardId}");
        assert_eq!(
            operation("POST", "/api/payouts/q1/finalize"),
            "/api/payouts/{quoteId}/finalize"
        );
        assert_eq!(operation("GET", "/api/balances?x=1"), "/api/balances");
        assert_eq!(operation("PATCH", "/nowhere"), "unknown");
    }
}
