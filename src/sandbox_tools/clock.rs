//! The service's clock as the portal's pages use it. A sandbox's clock can
//! be moved forward (Sandbox tools, tests, demos), so the service's times
//! and the portal's own (approvals, the audit log) can be days apart for
//! the same payout; pages that show both say so.

use chrono::{DateTime, Utc};
use paydesk_api::Client;

use crate::access::Member;
use crate::web::show;

/// The service's time: on a sandbox connection its clock, else this
/// machine's. Card ages and "today" for lite cards are measured on it.
pub async fn service_now(client: &Client, member: &Member) -> DateTime<Utc> {
    if member.environment.as_deref() == Some("sandbox") {
        if let Ok(clock) = client.sandbox_clock().await {
            return clock.now;
        }
    }
    Utc::now()
}

/// On a sandbox whose clock was moved (by a minute or more), a sentence
/// saying how far, and which times on the page are on which clock.
pub async fn note(client: &Client, member: &Member) -> Option<String> {
    let service = service_now(client, member).await;
    let apart = service - Utc::now();
    if apart.num_minutes().abs() < 1 {
        return None;
    }
    let side = if apart > chrono::Duration::zero() {
        "ahead of"
    } else {
        "behind"
    };
    Some(format!(
        "The sandbox's clock is {} {side} real time: the service's times on this page are on its clock; the portal's (approvals, the audit log) are real time.",
        show::span(apart.abs())
    ))
}
