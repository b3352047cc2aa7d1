use actix_web::web::{self, Data, Form, Query};
use actix_web::HttpResponse;
use askama::Template;
use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::json;

use crate::access::permissions::Permission;
use crate::access::Member;
use crate::audit;
use crate::audit::Event;
use crate::startup::AppState;
use crate::web::error::{describe_upstream, PortalError};
use crate::web::page::{html, redirect, Shell};

/// Moving the clock acts on the whole sandbox, so it is an admin's tool.
const PERMISSION: Permission = Permission::ConnectionsManage;

/// The steps offered: (seconds, label).
const STEPS: &[(u64, &str)] = &[
    (60, "1 minute"),
    (3_600, "1 hour"),
    (86_400, "1 day"),
    (7 * 86_400, "1 week"),
];

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/sandbox-tools", web::get().to(page))
        .route("/sandbox-tools/advance", web::post().to(advance));
}

/// Whether the member is offered the tools: a sandbox connection and the
/// permission.
pub fn offered(member: &Member) -> bool {
    member.environment.as_deref() == Some("sandbox") && member.can(PERMISSION)
}

fn require(member: &Member) -> Result<(), PortalError> {
    member.require(PERMISSION)?;
    if member.environment.as_deref() != Some("sandbox") {
        return Err(PortalError::NotFound(
            "sandbox tools exist only for tenants connected to a sandbox".to_owned(),
        ));
    }
    Ok(())
}

#[derive(Template)]
#[template(path = "sandbox_tools/page.html")]
struct Page {
    shell: Shell,
    now: Result<DateTime<Utc>, String>,
    steps: &'static [(u64, &'static str)],
    notice: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub struct Moved {
    #[serde(default)]
    moved: Option<u64>,
}

async fn page(state: Data<AppState>, member: Member, q: Query<Moved>) -> Result<HttpResponse, PortalError> {
    require(&member)?;
    let client = state.client_for(&member, PERMISSION).await?;
    let now = client
        .sandbox_clock()
        .await
        .map(|c| c.now)
        .map_err(|e| describe_upstream(&e).0);
    let notice = q
        .moved
        .and_then(|s| STEPS.iter().find(|(secs, _)| *secs == s))
        .map(|(_, label)| {
            format!("The sandbox clock moved forward {label}; everything that fell due has run.")
        });
    html(&Page {
        shell: Shell::new(&member, "/sandbox-tools"),
        now,
        steps: STEPS,
        notice,
    })
}

#[derive(Debug, Deserialize)]
pub struct AdvanceForm {
    seconds: u64,
}

async fn advance(
    state: Data<AppState>,
    member: Member,
    form: Form<AdvanceForm>,
) -> Result<HttpResponse, PortalError> {
    require(&member)?;
    if !STEPS.iter().any(|(s, _)| *s == form.seconds) {
        return Err(PortalError::BadRequest(
            "choose one of the offered steps".to_owned(),
        ));
    }
    let client = state.client_for(&member, PERMISSION).await?;
    let moved = client.sandbox_advance_clock(form.seconds).await?;
    audit::member_did(
        &state.pool,
        &member,
        Event::SandboxClockAdvanced,
        "sandbox:clock",
        json!({"seconds": form.seconds, "now": moved.now}),
    )
    .await?;
    Ok(redirect(&format!("/sandbox-tools?moved={}", form.seconds)))
}
