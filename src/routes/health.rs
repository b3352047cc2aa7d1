use actix_web::web::Data;
use actix_web::HttpResponse;
use paydesk_api::Client;

/// Liveness: the process answers.
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().content_type("text/plain").body("ok")
}

/// Readiness: the upstream answers a signed identity probe.
pub async fn readyz(upstream: Data<Client>) -> HttpResponse {
    match upstream.whoami().await {
        Ok(_) => HttpResponse::Ok().content_type("text/plain").body("ready"),
        Err(e) => HttpResponse::ServiceUnavailable()
            .content_type("text/plain")
            .body(format!("upstream not ready: {e}")),
    }
}
