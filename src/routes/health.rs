use actix_web::web::Data;
use actix_web::HttpResponse;

use crate::state::AppState;

/// Liveness: the process answers.
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().content_type("text/plain").body("ok")
}

/// Readiness: the database answers.
pub async fn readyz(state: Data<AppState>) -> HttpResponse {
    match sqlx::query!("SELECT 1 AS one").fetch_one(&state.pool).await {
        Ok(_) => HttpResponse::Ok().content_type("text/plain").body("ready"),
        Err(e) => {
            tracing::warn!(error = %e, "readiness check failed");
            HttpResponse::ServiceUnavailable()
                .content_type("text/plain")
                .body("the database is not reachable")
        }
    }
}
