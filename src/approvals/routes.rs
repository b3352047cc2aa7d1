//! The approvals inbox, a request's page (what is approved, decisions,
//! timeline), the policies page and notifications.

use actix_web::http::StatusCode;
use actix_web::web::{self, Data, Form, Path, Query};
use actix_web::HttpResponse;
use askama::Template;
use chrono::{DateTime, Utc};
use serde::Deserialize;
use uuid::Uuid;

use super::action::Fact;
use super::engine::{self, ApprovalError};
use super::forms::Submission;
use super::model::{Kind, Policy, RequestStatus};
use super::policy_routes;
use super::quorum::Colleagues;
use super::store::{self, ActionRequest, Decision, Notice};
use crate::access::Member;
use crate::audit::Event;
use crate::auth::two_factor;
use crate::state::AppState;
use crate::web::confirm::{Confirm, Confirmed};
use crate::web::error::PortalError;
use crate::web::form::split;
use crate::web::listing::{self, CsvRecord, Range};
use crate::web::page::{html, ok, redirect, unprocessable, Shell};
use crate::web::show::sentence_case;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/approvals", web::get().to(inbox))
        .route("/approvals/bulk", web::post().to(bulk_approve))
        .route("/approvals/waiting", web::get().to(waiting))
        .route("/approvals/rows", web::get().to(waiting_rows))
        .route("/approvals/export.csv", web::get().to(export))
        .route("/approvals/{id}", web::get().to(detail))
        .route("/approvals/{id}/approve", web::post().to(approve))
        .route("/approvals/{id}/reject", web::post().to(reject))
        .route("/approvals/{id}/cancel", web::post().to(cancel))
        .route("/policies", web::get().to(policy_routes::policies))
        .route(
            "/policies/settings/currency",
            web::post().to(policy_routes::set_reporting_currency),
        )
        .route("/policies/{kind}", web::post().to(policy_routes::save_policy))
        .route("/notifications", web::get().to(notifications));
}

/// Anyone who may read some kind of action's requests sees the inbox:
/// readers of its area and auditors (read-only), makers and checkers.
pub(super) fn require_read(state: &AppState, member: &Member) -> Result<(), PortalError> {
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

#[derive(Debug, Default, Deserialize, serde::Serialize)]
pub struct InboxQuery {
    /// `all` for every request; otherwise those waiting for me.
    #[serde(default)]
    tab: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    requester: String,
    #[serde(default)]
    from: String,
    #[serde(default)]
    to: String,
}

impl InboxQuery {
    /// The All tab's filter; dates that are not dates are named in `notes`.
    fn filter(&self) -> (store::ListFilter<'_>, Vec<String>) {
        let (filed, notes) = Range::parse(&self.from, &self.to);
        let filter = store::ListFilter {
            kind: Some(self.kind.as_str()).filter(|k| !k.is_empty()),
            status: RequestStatus::parse(&self.status),
            requester: Some(self.requester.trim()).filter(|r| !r.is_empty()),
            filed,
        };
        (filter, notes)
    }
}

/// The most requests a CSV export of the All tab holds.
const EXPORT_ROWS: i64 = 10_000;

impl CsvRecord for ActionRequest {
    const HEADER: &'static [&'static str] = &[
        "filed_at",
        "id",
        "kind",
        "summary",
        "amount",
        "currency",
        "value",
        "value_currency",
        "status",
        "requester",
        "approvals",
        "upstream_reference",
        "updated_at",
        "failure_reason",
    ];

    fn fields(self) -> Vec<String> {
        vec![
            self.created_at.to_rfc3339(),
            self.id.to_string(),
            self.kind.clone(),
            self.summary.clone(),
            self.amount.to_string(),
            self.currency.clone(),
            self.value.map(|v| v.to_string()).unwrap_or_default(),
            self.value_currency.clone().unwrap_or_default(),
            self.status.to_string(),
            self.requester_email.clone(),
            self.approvals.to_string(),
            self.upstream_reference.clone(),
            self.updated_at.to_rfc3339(),
            self.failure_reason.clone().unwrap_or_default(),
        ]
    }
}

/// The All tab's requests as CSV, for the filter shown (at most 10,000,
/// newest first), on record.
async fn export(
    state: Data<AppState>,
    member: Member,
    q: Query<InboxQuery>,
) -> Result<HttpResponse, PortalError> {
    require_read(&state, &member)?;
    let (filter, _) = q.filter();
    let rows = store::list_filtered(&state.pool, member.tenant_id, &filter, EXPORT_ROWS).await?;
    let details = serde_json::json!({ "filters": listing::query(&*q, None), "rows": rows.len() });
    crate::audit::member_did(
        &state.pool,
        &member,
        Event::ApprovalsExported,
        "approvals",
        details,
    )
    .await?;
    listing::export_rows("approvals", rows).await
}

/// A request as the inbox lists it.
pub struct InboxRow {
    request: ActionRequest,
    kind_label: &'static str,
    age: String,
    /// The row's pick: `<request id>:<digest>`.
    pick: String,
    /// Ticked on the page before the rows were drawn again.
    picked: bool,
}

/// The inbox's rows for `requests`, the `picked` ones ticked.
fn inbox_rows(state: &AppState, requests: Vec<ActionRequest>, picked: &[String]) -> Vec<InboxRow> {
    requests
        .into_iter()
        .map(|request| {
            let pick = format!("{}:{}", request.id, request.digest);
            InboxRow {
                kind_label: state
                    .gate
                    .get(&request.kind)
                    .map(|a| a.kind().label)
                    .unwrap_or("Unknown kind"),
                age: age(request.created_at),
                picked: picked.contains(&pick),
                pick,
                request,
            }
        })
        .collect()
}

/// The inbox's table alone, which the waiting tab draws again every few
/// seconds (`approvals/inbox_rows.html`).
#[derive(Template)]
#[template(path = "approvals/inbox_rows.html")]
struct InboxRows {
    shell: Shell,
    all_tab: bool,
    rows: Vec<InboxRow>,
}

/// The waiting tab's rows again, for its poll: requests someone else
/// decided leave, new ones arrive, and the picks the page sent stay ticked.
async fn waiting_rows(
    state: Data<AppState>,
    member: Member,
    picks: Query<Vec<(String, String)>>,
) -> Result<HttpResponse, PortalError> {
    require_read(&state, &member)?;
    let picked: Vec<String> = picks
        .into_inner()
        .into_iter()
        .filter(|(k, _)| k == "pick")
        .map(|(_, v)| v)
        .collect();
    let rows = inbox_rows(&state, waiting_for_me(&state, &member).await?, &picked);
    html(&InboxRows {
        shell: Shell::new(&member, "/approvals"),
        all_tab: false,
        rows,
    })
}

#[derive(Template)]
#[template(path = "approvals/inbox.html")]
struct InboxPage {
    shell: Shell,
    all_tab: bool,
    rows: Vec<InboxRow>,
    waiting_count: usize,
    kinds: Vec<Kind>,
    statuses: &'static [RequestStatus],
    q: InboxQuery,
    notice: Option<String>,
    errors: Vec<String>,
    /// Filter values that were not understood.
    notes: Vec<String>,
    export_query: String,
}

/// How long ago, in the largest whole unit.
fn age(at: DateTime<Utc>) -> String {
    let secs = (Utc::now() - at).num_seconds().max(0);
    match secs {
        0..=59 => "just now".to_owned(),
        60..=3599 => format!("{} min", secs / 60),
        3600..=86_399 => format!("{} h", secs / 3600),
        _ => format!("{} d", secs / 86_400),
    }
}

/// Pending requests this member may decide now: not theirs, not decided,
/// and they pass the independence and role rules of the request's policy.
pub async fn waiting_for_me(state: &AppState, member: &Member) -> Result<Vec<ActionRequest>, PortalError> {
    let candidates = store::candidates(&state.pool, member.tenant_id).await?;
    let Some(me) = candidates.find(member.user.user_id) else {
        return Ok(Vec::new());
    };
    let mut mine = Vec::new();
    // Requests of one kind mostly share a policy version: read each once.
    let mut policies: std::collections::HashMap<(&str, i32), Policy> = std::collections::HashMap::new();
    for request in store::inbox(&state.pool, member.tenant_id, member.user.user_id).await? {
        let Ok((action, kind)) = engine::kind_of(&state.gate, &request) else {
            continue;
        };
        let key = (kind.key, request.policy_version);
        if let std::collections::hash_map::Entry::Vacant(slot) = policies.entry(key) {
            slot.insert(
                engine::policy_of(&state.pool, member.tenant_id, action, request.policy_version).await?,
            );
        }
        let policy = &policies[&key];
        let escalated = policy
            .escalation_after_secs
            .is_some_and(|secs| Utc::now() >= request.created_at + chrono::Duration::seconds(secs as i64));
        if candidates
            .may_approve(policy, action.quorum(), me, &request.filed(), escalated)
            .is_ok()
        {
            mine.push(request);
        }
    }
    Ok(mine)
}

#[derive(Debug, Default, Deserialize)]
pub struct WaitingQuery {
    /// `line` for the dashboard's sentence; otherwise the menu's badge.
    #[serde(default, rename = "as")]
    view: String,
}

#[derive(Template)]
#[template(path = "approvals/waiting.html")]
struct Waiting {
    count: usize,
    line: bool,
}

/// How many requests wait for this member's decision, polled by the menu's
/// badge and the dashboard so both stay current without a reload; nothing
/// for readers who decide nothing.
async fn waiting(
    state: Data<AppState>,
    member: Member,
    q: Query<WaitingQuery>,
) -> Result<HttpResponse, PortalError> {
    require_read(&state, &member)?;
    let approves = state.gate.kinds().any(|k| member.can(k.approve_permission));
    let count = match approves {
        true => waiting_for_me(&state, &member).await?.len(),
        false => 0,
    };
    html(&Waiting {
        count,
        line: approves && q.view == "line",
    })
}

async fn render_inbox(
    state: &AppState,
    member: &Member,
    q: InboxQuery,
    notice: Option<String>,
    errors: Vec<String>,
) -> Result<HttpResponse, PortalError> {
    require_read(state, member)?;
    let all_tab = q.tab == "all";
    let waiting = waiting_for_me(state, member).await?;
    let waiting_count = waiting.len();
    let (filter, notes) = q.filter();
    let requests = if all_tab {
        store::list_filtered(&state.pool, member.tenant_id, &filter, 200).await?
    } else {
        waiting
    };
    let rows = inbox_rows(state, requests, &[]);
    html(&InboxPage {
        shell: Shell::new(member, "/approvals"),
        all_tab,
        rows,
        waiting_count,
        kinds: state.gate.kinds().collect(),
        statuses: RequestStatus::ALL,
        export_query: listing::query(&q, None),
        q,
        notice,
        errors,
        notes,
    })
}

async fn inbox(
    state: Data<AppState>,
    member: Member,
    q: Query<InboxQuery>,
) -> Result<HttpResponse, PortalError> {
    render_inbox(&state, &member, q.into_inner(), None, Vec::new()).await
}

#[derive(Template)]
#[template(path = "approvals/bulk_confirm.html")]
struct BulkConfirm {
    shell: Shell,
    picked: Vec<(ActionRequest, String)>,
    step_up: bool,
}

/// Approves the requests picked in the inbox, after a confirmation that
/// counts them; each is decided on its own, with the digest its row
/// carried, and refusals are listed.
async fn bulk_approve(
    state: Data<AppState>,
    member: Member,
    form: Form<Vec<(String, String)>>,
) -> Result<HttpResponse, PortalError> {
    require_any(&state, &member)?;
    let submission = Submission(form.into_inner());
    // Each pick is `<request id>:<the digest its row showed>`.
    let picked: Vec<(Uuid, String)> = submission
        .0
        .iter()
        .filter(|(k, _)| k == "pick")
        .filter_map(|(_, v)| v.split_once(':'))
        .filter_map(|(id, digest)| Some((Uuid::parse_str(id).ok()?, digest.to_owned())))
        .collect();
    if picked.is_empty() {
        let errors = vec!["Tick the requests to approve first.".to_owned()];
        return render_inbox(&state, &member, InboxQuery::default(), None, errors).await;
    }
    if !submission.confirmed() {
        let rows = store::find_each(&state.pool, member.tenant_id, &picked).await?;
        return html(&BulkConfirm {
            shell: Shell::new(&member, "/approvals"),
            picked: rows,
            step_up: two_factor::needs_step_up(&member.user),
        });
    }
    approve_picked(&state, &member, &picked, submission.get("code")).await
}

/// After a fresh proof of the second factor, each picked request on its own.
async fn approve_picked(
    state: &AppState,
    member: &Member,
    picked: &[(Uuid, String)],
    code: Option<&str>,
) -> Result<HttpResponse, PortalError> {
    if let Err(refusal) = split(two_factor::step_up(&state.pool, &state.key, &member.user, code).await)? {
        return render_inbox(state, member, InboxQuery::default(), None, vec![refusal.message]).await;
    }
    let (approved, errors) = engine::approve_each(&state.pool, &state.gate, member, picked).await?;
    let notice = Some(format!(
        "Approved {approved} of {}.",
        crate::web::page::count(picked.len() as i64, "request", "requests")
    ));
    render_inbox(state, member, InboxQuery::default(), notice, errors).await
}

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
    let (action, kind) =
        engine::kind_of(&state.gate, &request).map_err(|e| PortalError::Internal(Box::new(e)))?;
    let policy = engine::policy_of(&state.pool, member.tenant_id, action, request.policy_version).await?;
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
async fn detail(state: Data<AppState>, member: Member, id: Path<Uuid>) -> Result<HttpResponse, PortalError> {
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
    match engine::decide(
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

async fn approve(
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

async fn reject(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
    form: Form<DecisionForm>,
) -> Result<HttpResponse, PortalError> {
    decide(&state, &member, *id, false, &form).await
}

async fn cancel(
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
    match engine::cancel(&state.pool, &member, *id).await {
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

#[derive(Template)]
#[template(path = "approvals/notifications.html")]
struct NotificationsPage {
    shell: Shell,
    notices: Vec<Notice>,
}

async fn notifications(state: Data<AppState>, member: Member) -> Result<HttpResponse, PortalError> {
    let notices = store::notifications(&state.pool, member.user.user_id, member.tenant_id).await?;
    store::mark_read(&state.pool, member.user.user_id, member.tenant_id).await?;
    html(&NotificationsPage {
        shell: Shell::new(&member, "/notifications"),
        notices,
    })
}
