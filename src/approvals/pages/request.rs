//! A request's page: what is approved, who decided, its timeline, and the
//! approve, reject and cancel forms.

use actix_web::http::StatusCode;
use actix_web::web::{Data, Form, Path};
use actix_web::HttpResponse;
use askama::Template;
use chrono::{DateTime, Utc};
use serde::Deserialize;
use uuid::Uuid;

use crate::approvals::action::{AwaitedDeposit, Fact};
use crate::approvals::deciding;
use crate::approvals::lifecycle::{kind_of, policy_of, ApprovalError};
use crate::approvals::model::{Kind, RequestStatus};

use super::require_any;
use crate::access::Member;
use crate::approvals::quorum::Colleagues;
use crate::approvals::store::{self, ActionRequest, Decision};
use crate::auth::two_factor;
use crate::state::AppState;
use crate::web::confirm::{Confirm, Confirmed};
use crate::web::error::PortalError;
use crate::web::form::split;
use crate::web::page::{ok, redirect, unprocessable, Shell};
use crate::web::show::sentence_case;

#[derive(Template)]
#[template(path = "approvals/detail.html")]
struct DetailPage {
    shell: Shell,
    request: ActionRequest,
    kind: Kind,
    /// What is approved, as the kind describes it.
    facts: Vec<Fact>,
    /// Where the action stands upstream, as its kind says, for the header.
    headline: Option<String>,
    /// A deposit the running action waits for.
    awaited: Option<AwaitedDeposit>,
    decisions: Vec<Decision>,
    /// Who could still approve, while it waits.
    waiting_for: Vec<String>,
    timeline: Vec<(DateTime<Utc>, String, String)>,
    can_decide: bool,
    can_cancel: bool,
    live: bool,
    error: Option<String>,
    /// Asking the approver to confirm, with the comment they typed.
    confirming: Option<String>,
    /// Confirming asks for a code: the last proof is over 5 minutes old.
    step_up: bool,
    /// Once it reached the service, on a sandbox whose clock was moved:
    /// which times are on which clock.
    clock: Option<String>,
    /// The requester or an approver holds a grant one admin made alone.
    added_alone: Option<String>,
}

/// When the requester or an approver got their membership or role from an
/// admin acting alone: four eyes here rest on that admin's choice of
/// people, and the page says so.
fn added_alone_note(
    colleagues: &Colleagues,
    request: &ActionRequest,
    decisions: &[Decision],
) -> Option<String> {
    let alone: Vec<&str> = colleagues
        .members
        .iter()
        .filter(|c| {
            c.user_id == request.requested_by
                || decisions
                    .iter()
                    .any(|d| d.decision == "approve" && d.approver_email == c.email)
        })
        .filter(|c| colleagues.ties.added_alone(c.user_id))
        .map(|c| c.email.as_str())
        .collect();
    (!alone.is_empty()).then(|| {
        format!(
            "{} got their membership or role from an admin acting alone, and no second admin confirmed it: \
             four eyes here rest on that admin's choice of people. Another admin can confirm it on the Members page.",
            alone.join(", ")
        )
    })
}

/// The sandbox clock's note for a request that reached the service (its
/// movements carry the service's times; the timeline the portal's).
async fn clock_note(state: &AppState, member: &Member, request: &ActionRequest) -> Option<String> {
    let reached = matches!(
        request.status,
        RequestStatus::Executing | RequestStatus::Executed | RequestStatus::Failed
    );
    if !reached || member.environment.as_deref() != Some("sandbox") {
        return None;
    }
    let client = state
        .upstreams
        .for_member(&state.pool, &state.key, &state.audit, member)
        .await
        .ok()?;
    crate::sandbox_tools::clock::note(&client, member).await
}

async fn render_detail(
    state: &AppState,
    member: &Member,
    id: Uuid,
    error: Option<String>,
) -> Result<String, PortalError> {
    render_detail_confirming(state, member, id, error, None).await
}

async fn render_detail_confirming(
    state: &AppState,
    member: &Member,
    id: Uuid,
    error: Option<String>,
    confirming: Option<String>,
) -> Result<String, PortalError> {
    let request = store::find(&state.pool, member.tenant_id, id)
        .await?
        .ok_or_else(|| PortalError::NotFound("no such request".to_owned()))?;
    let (action, kind) = kind_of(&state.gate, &request).map_err(|e| PortalError::Internal(Box::new(e)))?;
    let policy = policy_of(&state.pool, member.tenant_id, action, request.policy_version).await?;
    let now = Utc::now();
    let escalated = policy
        .escalation_after_secs
        .is_some_and(|secs| now >= request.created_at + chrono::Duration::seconds(secs as i64));
    let candidates = store::candidates(&state.pool, member.tenant_id).await?;
    let may_approve = candidates.find(member.user.user_id).is_some_and(|me| {
        candidates
            .may_approve(&policy, action.quorum(), me, &request.filed(), escalated)
            .is_ok()
    });
    if !(kind.readable_by(|p| member.can(p)) || may_approve) {
        return Err(PortalError::Forbidden(kind.read_permission.name().to_owned()));
    }
    let decisions = store::decisions(&state.pool, id).await?;
    let pending = request.status == RequestStatus::Pending && now < request.expires_at;
    let decided = decisions.iter().any(|d| d.approver_email == member.user.email);
    let waiting_for = if pending {
        candidates
            .eligible(&policy, action.quorum(), &request.filed())
            .into_iter()
            .filter(|c| !decisions.iter().any(|d| d.approver_email == c.email))
            .map(|c| format!("{} ({})", c.email, c.role_name))
            .collect()
    } else {
        Vec::new()
    };
    Ok(DetailPage {
        waiting_for,
        clock: clock_note(state, member, &request).await,
        shell: Shell::new(member, "/approvals"),
        facts: action
            .describe(&request.payload.0)
            .map_err(|e| PortalError::Internal(Box::new(e)))?,
        headline: action.headline(&request.progress.0),
        awaited: action
            .awaits(&request.progress.0)
            .filter(|_| request.status.is_live()),
        kind,
        added_alone: added_alone_note(&candidates, &request, &decisions),
        can_decide: pending && !decided && may_approve,
        can_cancel: pending && request.requested_by == member.user.user_id,
        live: request.status.is_live(),
        timeline: store::timeline(&state.pool, id).await?,
        decisions,
        request,
        error,
        confirming,
        step_up: two_factor::needs_step_up(&member.user),
    }
    .render()?)
}

/// Who may see a request is decided by `render_detail` (a backup role
/// sees it once escalated).
pub(super) async fn detail(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
) -> Result<HttpResponse, PortalError> {
    let body = render_detail(&state, &member, *id, None).await?;
    Ok(ok(body))
}

#[derive(Deserialize)]
pub struct DecisionForm {
    #[serde(default)]
    comment: String,
    /// Of what the page showed; a request changed since is not decided.
    #[serde(default)]
    digest: String,
    /// `yes` once the approver confirmed.
    #[serde(default)]
    confirmed: String,
    /// The step-up code, when the page asked for one.
    #[serde(default)]
    code: String,
}

/// The engine decides who may decide (a backup role may, once escalated).
async fn decide(
    state: &AppState,
    member: &Member,
    id: Uuid,
    approve: bool,
    form: &DecisionForm,
) -> Result<HttpResponse, PortalError> {
    match deciding::decide(
        &state.pool,
        &state.gate,
        member,
        id,
        approve,
        &form.comment,
        &form.digest,
    )
    .await
    {
        Ok(_) => Ok(redirect(&format!("/approvals/{id}"))),
        Err(ApprovalError::NotFound) => Err(PortalError::NotFound("no such request".to_owned())),
        Err(ApprovalError::Db(e)) => Err(e.into()),
        Err(e) => {
            let message = e.to_string();
            let body = render_detail(state, member, id, Some(sentence_case(&message))).await?;
            Ok(HttpResponse::build(StatusCode::UNPROCESSABLE_ENTITY)
                .content_type("text/html; charset=utf-8")
                .body(body))
        }
    }
}

pub(super) async fn approve(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
    form: Form<DecisionForm>,
) -> Result<HttpResponse, PortalError> {
    if form.confirmed != "yes" {
        let body = render_detail_confirming(&state, &member, *id, None, Some(form.comment.clone())).await?;
        return Ok(ok(body));
    }
    let stepped = two_factor::step_up(&state.pool, &state.key, &member.user, Some(&form.code)).await;
    if let Err(refusal) = split(stepped)? {
        let comment = Some(form.comment.clone());
        let body = render_detail_confirming(&state, &member, *id, Some(refusal.message), comment).await?;
        return Ok(unprocessable(body));
    }
    decide(&state, &member, *id, true, &form).await
}

pub(super) async fn reject(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
    form: Form<DecisionForm>,
) -> Result<HttpResponse, PortalError> {
    decide(&state, &member, *id, false, &form).await
}

pub(super) async fn cancel(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
    confirmed: Form<Confirmed>,
) -> Result<HttpResponse, PortalError> {
    require_any(&state, &member)?;
    if !confirmed.yes() {
        let request = store::find(&state.pool, member.tenant_id, *id)
            .await?
            .ok_or_else(|| PortalError::NotFound("no such request".to_owned()))?;
        let consequences = [
            format!("'{}' is withdrawn and will not run.", request.summary),
            "Approvals already given are void; the timeline keeps the record.".to_owned(),
        ];
        let back = format!("/approvals/{}", request.id);
        return Confirm {
            title: "Cancel this request",
            consequences: &consequences,
            action: &format!("/approvals/{}/cancel", request.id),
            back: &back,
            button: "Cancel request",
            fields: &[],
        }
        .page(&member);
    }
    match deciding::cancel(&state.pool, &member, *id).await {
        Ok(()) => Ok(redirect(&format!("/approvals/{}", *id))),
        Err(ApprovalError::NotFound) => Err(PortalError::NotFound("no such request".to_owned())),
        Err(ApprovalError::Db(e)) => Err(e.into()),
        Err(e) => {
            let body = render_detail(&state, &member, *id, Some(sentence_case(&e.to_string()))).await?;
            Ok(crate::web::page::unprocessable(body))
        }
    }
}

// --- Notifications --------------------------------------------------------------
