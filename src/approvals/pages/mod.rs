//! The gate's pages: the inbox with its export and bulk approval, a
//! request's page (what is approved, decisions, timeline), the policies
//! page and notifications.

use actix_web::web::{self};

use crate::access::Member;
use crate::state::AppState;
use crate::web::error::PortalError;

mod inbox;
mod policies;
mod request;

pub use inbox::waiting_for_me;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/approvals", web::get().to(inbox::inbox))
        .route("/approvals/bulk", web::post().to(inbox::bulk_approve))
        .route("/approvals/waiting", web::get().to(inbox::waiting))
        .route("/approvals/rows", web::get().to(inbox::waiting_rows))
        .route("/approvals/export.csv", web::get().to(inbox::export))
        .route("/approvals/{id}", web::get().to(request::detail))
        .route("/approvals/{id}/approve", web::post().to(request::approve))
        .route("/approvals/{id}/reject", web::post().to(request::reject))
        .route("/approvals/{id}/cancel", web::post().to(request::cancel))
        .route("/policies", web::get().to(policies::policies))
        .route(
            "/policies/settings/currency",
            web::post().to(policies::set_reporting_currency),
        )
        .route("/policies/{kind}", web::post().to(policies::save_policy))
        .route("/notifications", web::get().to(inbox::notifications));
}

/// Anyone who may read some kind of action's requests sees the inbox:
/// readers of its area and auditors (read-only), makers and checkers.
fn require_read(state: &AppState, member: &Member) -> Result<(), PortalError> {
    if state.gate.kinds().any(|k| k.readable_by(|p| member.can(p))) {
        Ok(())
    } else {
        Err(PortalError::Forbidden("audit.read or payouts.read".to_owned()))
    }
}

/// Anyone who may file or approve some kind of action acts on requests.
fn require_any(state: &AppState, member: &Member) -> Result<(), PortalError> {
    let allowed = state
        .gate
        .kinds()
        .any(|k| member.can(k.request_permission) || member.can(k.approve_permission));
    if allowed {
        Ok(())
    } else {
        Err(PortalError::Forbidden(
            "payouts.request or payouts.approve".to_owned(),
        ))
    }
}
