//! The inbox: requests waiting for the member and the tenant's others, its
//! CSV export, bulk approval, and notifications.

use actix_web::web::{Data, Form, Query};
use actix_web::HttpResponse;
use askama::Template;
use chrono::{DateTime, Utc};
use serde::Deserialize;
use uuid::Uuid;

use crate::approvals::deciding;
use crate::approvals::forms::Submission;
use crate::approvals::lifecycle::{kind_of, policy_of};
use crate::approvals::model::{Kind, Policy, RequestStatus};

use super::{require_any, require_read};
use crate::access::Member;
use crate::approvals::store::{self, ActionRequest, Notice};
use crate::audit::Event;
use crate::auth::two_factor;
use crate::state::AppState;
use crate::web::error::PortalError;
use crate::web::form::split;
use crate::web::listing::{self, CsvRecord, Range};
use crate::web::page::{html, Shell};

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
pub(super) async fn export(
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
pub(super) async fn waiting_rows(
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
        let Ok((action, kind)) = kind_of(&state.gate, &request) else {
            continue;
        };
        let key = (kind.key, request.policy_version);
        if let std::collections::hash_map::Entry::Vacant(slot) = policies.entry(key) {
            slot.insert(policy_of(&state.pool, member.tenant_id, action, request.policy_version).await?);
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
pub(super) async fn waiting(
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

pub(super) async fn inbox(
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
pub(super) async fn bulk_approve(
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
    let (approved, errors) = deciding::approve_each(&state.pool, &state.gate, member, picked).await?;
    let notice = Some(format!(
        "Approved {approved} of {}.",
        crate::web::page::count(picked.len() as i64, "request", "requests")
    ));
    render_inbox(state, member, InboxQuery::default(), notice, errors).await
}

#[derive(Template)]
#[template(path = "approvals/notifications.html")]
struct NotificationsPage {
    shell: Shell,
    notices: Vec<Notice>,
}

pub(super) async fn notifications(
    state: Data<AppState>,
    member: Member,
) -> Result<HttpResponse, PortalError> {
    let notices = store::notifications(&state.pool, member.user.user_id, member.tenant_id).await?;
    store::mark_read(&state.pool, member.user.user_id, member.tenant_id).await?;
    html(&NotificationsPage {
        shell: Shell::new(&member, "/notifications"),
        notices,
    })
}
