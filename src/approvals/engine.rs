//! Filing, deciding, cancelling and expiring requests, and `transition`,
//! the one function that changes a request's status. Each decision takes
//! the request's row lock, so however many approvers click at once (or an
//! approval races a cancel or the expiry), exactly one change wins and at
//! most one job is queued to run the action.

use chrono::{DateTime, Duration, Utc};
use rust_decimal::Decimal;
use serde_json::{json, Value};
use sqlx::{PgPool, Postgres, Transaction};
use uuid::Uuid;

use super::action::{self, Action, Counterparty, ErasedAction, Registry};
use super::model::{Kind, Policy, RequestStatus, Requirement, Weighed};
use super::quorum::{Colleagues, Filed};
use super::store::{self, ActionRequest, NewRequest};
use crate::access::Member;
use crate::audit::Event;
use crate::audit::{self, outcome, Actor, NewRecord};
use crate::state::AppState;

#[derive(Debug, thiserror::Error)]
pub enum ApprovalError {
    #[error("{0}")]
    NotAllowed(String),
    #[error("{0}")]
    NoEligibleApprovers(String),
    #[error("a request for the same action and target is already waiting for approval")]
    Duplicate(Uuid),
    #[error("this request is {0} and can no longer be decided")]
    NotPending(RequestStatus),
    #[error("you already decided on this request")]
    AlreadyDecided,
    #[error("this request changed since you opened it; review it again before deciding")]
    Changed,
    #[error("no such request")]
    NotFound,
    #[error(transparent)]
    UnknownKind(#[from] action::UnknownKind),
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

/// The actor of what the gate does on its own (runs, expiries).
pub fn gate_actor() -> Actor {
    Actor {
        email: "approval gate".to_owned(),
        ..Actor::default()
    }
}

/// The version a request was filed under, or the kind's default. Saved
/// versions count from 1: version 0 is the default, read without a
/// statement (every run of a job asks).
pub async fn policy_of(
    pool: &PgPool,
    tenant: Uuid,
    action: &dyn ErasedAction,
    version: i32,
) -> Result<Policy, sqlx::Error> {
    if version == 0 {
        return Ok(action.default_policy());
    }
    Ok(store::saved_policy(pool, tenant, action.kind(), version)
        .await?
        .unwrap_or_else(|| action.default_policy()))
}

/// The policy new requests are filed under.
pub async fn policy_in_force(
    pool: &PgPool,
    tenant: Uuid,
    action: &dyn ErasedAction,
) -> Result<Policy, sqlx::Error> {
    Ok(store::latest_policy(pool, tenant, action.kind())
        .await?
        .unwrap_or_else(|| action.default_policy()))
}

/// Who is told of a change.
pub enum Notify {
    Nobody,
    Requester(String),
    /// The requester and everyone who approved: an outcome they all own.
    RequesterAndApprovers(String),
    Users(Vec<Uuid>, String),
}

/// A status change with what is written alongside it.
pub struct Change {
    pub to: RequestStatus,
    /// Timeline entry: what happened, and a detail.
    pub what: &'static str,
    pub detail: String,
    pub failure: Option<String>,
    pub notify: Notify,
    /// The audit record: who, its event, and details.
    pub audit: (Actor, Event, Value),
}

/// Changes a request's status, and writes the timeline entry, the notices
/// and the audit record, all in `tx`. Refused when the move isn't allowed
/// or the request is no longer where the caller saw it.
pub async fn transition(
    tx: &mut Transaction<'_, Postgres>,
    request: &ActionRequest,
    change: Change,
) -> Result<(), ApprovalError> {
    if !request.status.can_move_to(change.to) {
        return Err(ApprovalError::NotPending(request.status));
    }
    // Told with the move where the members are known; the approvers are
    // read in a statement of their own.
    let requester = [request.requested_by];
    let (tell, message): (&[Uuid], &str) = match &change.notify {
        Notify::Nobody | Notify::RequesterAndApprovers(_) => (&[], ""),
        Notify::Requester(m) => (&requester, m),
        Notify::Users(users, m) => (users, m),
    };
    let (actor, action, details) = change.audit;
    let result = if change.to == RequestStatus::Failed {
        outcome::FAILURE
    } else {
        outcome::SUCCESS
    };
    let record = NewRecord::new(
        &actor,
        Some(request.tenant_id),
        action,
        format!("request:{}", request.id),
        result,
    )
    .with_details(details);
    let moved = store::Move {
        from: request.status,
        to: change.to,
        failure: change.failure.as_deref(),
        what: change.what,
        detail: &change.detail,
        tell,
        message,
        // Approved is queued to run in the same statement: nothing can
        // approve a request without its run being owed.
        queue: change.to == RequestStatus::Approved,
        audit: std::slice::from_ref(&record),
    };
    if !store::move_status(&mut **tx, request.id, moved).await? {
        return Err(ApprovalError::Changed);
    }
    if let Notify::RequesterAndApprovers(m) = &change.notify {
        store::notify_requester_and_approvers(&mut **tx, request.id, m).await?;
    }
    Ok(())
}

/// Marks the approved requests among `requests` as being carried out, in
/// one statement for all: the move, its timeline entry and its audit
/// record, as `transition` writes them for one. A runner starts what its
/// claim took together, so a busy gate pays one statement per claim
/// here, not a transaction per request. One no longer approved in the
/// database is left as it is, and still approved here: its run refuses to
/// go on, and the next claim reads it again.
pub async fn start_executing<'r>(
    pool: &PgPool,
    requests: impl Iterator<Item = &'r mut ActionRequest>,
) -> Result<(), sqlx::Error> {
    let approved: Vec<&mut ActionRequest> =
        requests.filter(|r| r.status == RequestStatus::Approved).collect();
    if approved.is_empty() {
        return Ok(());
    }
    let starts: Vec<store::Start> = approved
        .iter()
        .map(|r| store::Start {
            id: r.id,
            detail: format!("reference {}", r.upstream_reference),
            record: NewRecord::new(
                &gate_actor(),
                Some(r.tenant_id),
                Event::ApprovalsExecuting,
                format!("request:{}", r.id),
                outcome::SUCCESS,
            ),
        })
        .collect();
    let moved = store::start_all(pool, &starts).await?;
    for request in approved.into_iter().filter(|r| moved.contains(&r.id)) {
        request.status = RequestStatus::Executing;
    }
    Ok(())
}

/// What a new request carries; the payload is the kind's own type.
pub struct Filing<'a, P> {
    /// What the action acts on (one pending request per kind and target).
    pub target: &'a str,
    pub summary: &'a str,
    pub payload: P,
    /// What the action moves, in `currency`; the policy weighs it in the
    /// tenant's reporting currency.
    pub amount: Decimal,
    pub currency: &'a str,
    /// The upstream reference, when the form fixed one (so a double
    /// submit files once); else the gate makes one from the request id.
    pub reference: Option<String>,
    /// When the payee was saved, for a saved beneficiary.
    pub payee_saved_at: Option<DateTime<Utc>>,
}

impl<'a, P> Filing<'a, P> {
    /// A control change: nothing to weigh, no reference of its own, no payee.
    pub fn control(target: &'a str, summary: &'a str, payload: P) -> Self {
        Filing {
            target,
            summary,
            payload,
            amount: Decimal::ZERO,
            currency: "",
            reference: None,
            payee_saved_at: None,
        }
    }
}

/// How filing ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FiledAs {
    /// Waits for approvals.
    Waiting(Uuid),
    /// The policy asks for no approval: approved at filing and queued.
    Approved(Uuid),
}

impl FiledAs {
    pub fn id(self) -> Uuid {
        match self {
            FiledAs::Waiting(id) | FiledAs::Approved(id) => id,
        }
    }
}

/// A request weighed against the policy in force, before it is filed.
pub struct Assessment {
    pub policy: Policy,
    pub weighed: Weighed,
    /// Reporting-currency units per unit of the action's currency.
    pub rate: Decimal,
    pub counterparties: Vec<Counterparty>,
    pub need: Requirement,
    pub payload: Value,
    pub facts: Vec<action::Fact>,
    /// The tenant's active members and their ties, read once for the filing.
    pub members: Colleagues,
}

/// Reporting-currency units per unit of `from`, at the service's mid rate.
async fn rate_to(client: &paydesk_api::Client, from: &str, to: &str) -> Result<Decimal, ApprovalError> {
    crate::rates::board::mid_rate(client, from, to)
        .await
        .map_err(|e| {
            ApprovalError::NotAllowed(format!(
                "The service's {from}/{to} rate is needed to weigh this against the approval policy, and it \
             could not be read ({}). Try again in a moment; nothing was filed.",
                crate::web::error::describe_upstream(&e).0
            ))
        })
}

/// Whether someone other than `member` holds the kind's approve permission.
fn another_admin(members: &Colleagues, member: &Member, kind: Kind) -> bool {
    members.members.iter().any(|m| {
        m.user_id != member.user.user_id && m.permissions.iter().any(|p| p == kind.approve_permission.name())
    })
}

/// Weighs a filing: its value in the reporting currency at the service's
/// rate, the running totals, first-time counterparties, a new payee.
pub async fn assess<A: Action>(
    state: &AppState,
    member: &Member,
    f: &Filing<'_, A::Payload>,
) -> Result<Assessment, ApprovalError> {
    let action = state.gate.get(A::KIND.key)?;
    let kind = A::KIND;
    let pool = &state.pool;
    let payload = serde_json::to_value(&f.payload).map_err(|e| sqlx::Error::Encode(Box::new(e)))?;
    let facts = action
        .describe(&payload)
        .map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
    let counterparties = action
        .counterparties(&payload)
        .map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
    let keys: Vec<String> = counterparties.iter().map(|c| c.key.clone()).collect();
    // The reads that do not depend on one another go out together: a
    // filing waits for the slowest, not for their sum.
    let (policy, reporting, known, members) = tokio::try_join!(
        policy_in_force(pool, member.tenant_id, action),
        store::reporting_currency(pool, member.tenant_id),
        store::known_counterparties(pool, member.tenant_id, &keys),
        store::candidates(pool, member.tenant_id),
    )?;
    let since = Utc::now() - Duration::hours(policy.period_hours as i64);
    let totals = async {
        // Only a limit weighs them, and a busy tenant's totals are rows
        // every filing updates: not read when the policy sets no limit.
        if policy.member_limit.is_none() && policy.tenant_limit.is_none() {
            return Ok((Decimal::ZERO, Decimal::ZERO));
        }
        store::running_totals(pool, member.tenant_id, kind, member.user.user_id, since)
            .await
            .map_err(ApprovalError::from)
    };
    // Controls move nothing; they need no rate (nor a connection).
    let rate = async {
        if f.amount.is_zero() {
            return Ok(Decimal::ONE);
        }
        let client = state
            .upstreams
            .for_member(pool, &state.key, &state.audit, member)
            .await
            .map_err(|e| ApprovalError::NotAllowed(e.to_string()))?;
        rate_to(&client, f.currency, &reporting).await
    };
    let ((member_total, tenant_total), rate) = tokio::try_join!(totals, rate)?;
    let mut value = f.amount * rate;
    value.rescale(2);
    let weighed = Weighed {
        value,
        currency: reporting,
        member_total,
        tenant_total,
        first_time: counterparties
            .iter()
            .filter(|c| !known.contains(&c.key))
            .map(|c| c.label.clone())
            .collect(),
        new_payee: f
            .payee_saved_at
            .is_some_and(|at| Utc::now() - at < Duration::hours(24)),
    };
    let mut need = policy.require(&weighed);
    if A::CONTROL && !another_admin(&members, member, kind) {
        need = Requirement {
            approvals: 0,
            role: None,
            fired: vec![
                "You are the only admin who could approve this: it applies at once, and what it grants stays marked \
                 as granted by you alone until a second admin confirms it (four eyes start with a second admin)"
                    .to_owned(),
            ],
        };
    }
    Ok(Assessment {
        policy,
        weighed,
        rate,
        counterparties,
        need,
        payload,
        facts,
        members,
    })
}

/// Files a request under the policy in force, after checking that the
/// maker may request it and that enough other members could approve it.
/// The upstream reference is fixed here; the digest covers what reviewers
/// will see; the value, the rate and the rules that fired are kept.
pub async fn file<A: Action>(
    state: &AppState,
    member: &Member,
    f: Filing<'_, A::Payload>,
) -> Result<FiledAs, ApprovalError> {
    let kind = A::KIND;
    if !member.can(kind.request_permission) {
        let hint = if member.can(kind.approve_permission) {
            " Approvers check requests; they don't file them."
        } else {
            ""
        };
        return Err(ApprovalError::NotAllowed(format!(
            "Filing needs the '{}' permission.{hint}",
            kind.request_permission
        )));
    }
    let pool = &state.pool;
    let a = assess::<A>(state, member, &f).await?;
    let filed = Filed {
        by: member.user.user_id,
        at: Utc::now(),
    };
    let needed = a.need.approvals;
    let quorum = (kind, A::CONTROL);
    let eligible = a.members.eligible(&a.policy, quorum, &filed);
    let from_role = a
        .need
        .role
        .as_ref()
        .is_none_or(|role| eligible.iter().any(|m| &m.role_name == role));
    if (eligible.len() as i32) < needed || !from_role {
        return Err(ApprovalError::NoEligibleApprovers(
            a.members
                .missing_approvers_message(&a.policy, quorum, &filed, needed),
        ));
    }
    let digest = action::digest(kind, &a.facts, &a.payload);
    let id = Uuid::new_v4();
    // Waiting for approval, its approvers are told, and its first
    // reminder, escalation or expiry announced, as it is written.
    let approvers: Vec<Uuid> = match needed {
        0 => Vec::new(),
        _ => eligible.iter().map(|a| a.user_id).collect(),
    };
    let policy = a.policy;
    let record = NewRecord::new(
        &member.actor(),
        Some(member.tenant_id),
        Event::ApprovalsRequested,
        format!("request:{id}"),
        outcome::SUCCESS,
    )
    .with_details(
        json!({"kind": kind.key, "summary": f.summary, "policy_version": policy.version,
               "required_approvals": needed, "digest": digest}),
    );
    let heralds = store::Heralds {
        detail: &format!("by {}", member.user.email),
        tell: &approvers,
        message: &format!("Waiting for your approval: {}", f.summary),
        due: (needed > 0).then(|| policy.first_due(filed.at)),
        audit: std::slice::from_ref(&record),
    };
    let new = NewRequest {
        id,
        tenant: member.tenant_id,
        kind,
        target: f.target,
        summary: f.summary,
        payload: a.payload,
        amount: f.amount,
        currency: f.currency,
        value: a.weighed.value,
        value_currency: &a.weighed.currency,
        value_rate: a.rate,
        counterparties: a.counterparties.iter().map(|c| c.key.clone()).collect(),
        rules_fired: a.need.fired,
        required_role: a.need.role,
        requested_by: member.user.user_id,
        policy_version: policy.version,
        required_approvals: needed,
        reference: f
            .reference
            .clone()
            .unwrap_or_else(|| format!("pd-{}", id.simple())),
        digest: &digest,
        expires_at: filed.at + Duration::seconds(policy.expires_after_secs as i64),
    };
    // Waiting for approval, a filing is its one statement; approved at
    // once, it is approved in the same transaction.
    if needed > 0 {
        let mut conn = pool.acquire().await?;
        filed_or_refused(store::insert_request(&mut conn, &new, heralds).await?)?;
        return Ok(FiledAs::Waiting(id));
    }
    let mut tx = pool.begin().await?;
    filed_or_refused(store::insert_request(&mut tx, &new, heralds).await?)?;
    let request = store::find(&mut *tx, member.tenant_id, id)
        .await?
        .ok_or(ApprovalError::NotFound)?;
    transition(
        &mut tx,
        &request,
        Change {
            to: RequestStatus::Approved,
            what: "approved",
            detail: format!("by policy version {}: no approval needed", policy.version),
            failure: None,
            notify: Notify::Nobody,
            audit: (
                gate_actor(),
                Event::ApprovalsApproved,
                json!({"by_policy": policy.version}),
            ),
        },
    )
    .await?;
    tx.commit().await?;
    Ok(FiledAs::Approved(id))
}

/// A filing's insert as the member hears of it: a request of theirs
/// already waiting for the same, or a form sent twice.
fn filed_or_refused(inserted: Result<(), Option<Uuid>>) -> Result<(), ApprovalError> {
    match inserted {
        Ok(()) => Ok(()),
        Err(Some(existing)) => Err(ApprovalError::Duplicate(existing)),
        Err(None) => Err(ApprovalError::NotAllowed(
            "This form was already submitted. Reload the page to start again.".to_owned(),
        )),
    }
}

/// What filing would come to, for the confirmation page: what reviewers
/// would see, how many approvals it would wait for (0: runs at once), and
/// why.
pub struct Preview {
    pub facts: Vec<action::Fact>,
    pub needed: i32,
    pub fired: Vec<String>,
    pub value: String,
}

pub async fn preview<A: Action>(
    state: &AppState,
    member: &Member,
    f: &Filing<'_, A::Payload>,
) -> Result<Preview, ApprovalError> {
    let a = assess::<A>(state, member, f).await?;
    Ok(Preview {
        value: format!("{} {}", a.weighed.value, a.weighed.currency),
        facts: a.facts,
        needed: a.need.approvals,
        fired: a.need.fired,
    })
}

/// What a decision led to.
#[derive(Debug, PartialEq, Eq)]
pub enum Decided {
    /// Recorded; more approvals are needed.
    Recorded,
    /// The last approval: the action is queued to run.
    Approved,
    Rejected,
}

/// Approves each picked request (id, the digest its row showed) on its
/// own: how many were approved, and why each other one was not.
pub async fn approve_each(
    pool: &PgPool,
    registry: &Registry,
    member: &Member,
    picked: &[(Uuid, String)],
) -> Result<(usize, Vec<String>), sqlx::Error> {
    let mut approved = 0;
    let mut refusals = Vec::new();
    // Who may decide is read once for the whole set: it is the same member.
    let colleagues = store::candidates(pool, member.tenant_id).await?;
    for (id, digest) in picked {
        let verdict = Verdict {
            approve: true,
            comment: "",
            digest,
        };
        match decide_as(pool, registry, member, &colleagues, *id, verdict).await {
            Ok(_) => approved += 1,
            Err(ApprovalError::Db(e)) => return Err(e),
            Err(e) => {
                let summary = store::find(pool, member.tenant_id, *id)
                    .await?
                    .map_or_else(|| id.to_string(), |r| r.summary);
                let reason = crate::web::show::sentence_case(&e.to_string());
                refusals.push(format!("{summary}: {reason}"));
            }
        }
    }
    Ok((approved, refusals))
}

/// Approves or rejects what `digest` describes, with a comment.
pub async fn decide(
    pool: &PgPool,
    registry: &Registry,
    member: &Member,
    request_id: Uuid,
    approve: bool,
    comment: &str,
    digest: &str,
) -> Result<Decided, ApprovalError> {
    let colleagues = store::candidates(pool, member.tenant_id).await?;
    let verdict = Verdict {
        approve,
        comment,
        digest,
    };
    decide_as(pool, registry, member, &colleagues, request_id, verdict).await
}

/// One decision: approve or reject, the comment, and the digest of what
/// the decider saw.
struct Verdict<'a> {
    approve: bool,
    comment: &'a str,
    digest: &'a str,
}

async fn decide_as(
    pool: &PgPool,
    registry: &Registry,
    member: &Member,
    colleagues: &Colleagues,
    request_id: Uuid,
    Verdict {
        approve,
        comment,
        digest,
    }: Verdict<'_>,
) -> Result<Decided, ApprovalError> {
    let mut tx = pool.begin().await?;
    let request = store::lock(&mut tx, member.tenant_id, request_id)
        .await?
        .ok_or(ApprovalError::NotFound)?;
    let now = Utc::now();
    if request.status == RequestStatus::Pending && now >= request.expires_at {
        expire_locked(&mut tx, &request).await?;
        tx.commit().await?;
        return Err(ApprovalError::NotPending(RequestStatus::Expired));
    }
    if request.status != RequestStatus::Pending {
        return Err(ApprovalError::NotPending(request.status));
    }
    let action = registry.get(&request.kind)?;
    let kind = action.kind();
    let policy = policy_of(pool, member.tenant_id, action, request.policy_version).await?;
    let escalated = policy
        .escalation_after_secs
        .is_some_and(|secs| now >= request.created_at + Duration::seconds(secs as i64));
    let me = colleagues.find(member.user.user_id).ok_or_else(|| {
        ApprovalError::NotAllowed("You are not an active member of this tenant.".to_owned())
    })?;
    colleagues
        .may_approve(&policy, action.quorum(), me, &request.filed(), escalated)
        .map_err(ApprovalError::NotAllowed)?;
    if digest != request.digest {
        return Err(ApprovalError::Changed);
    }
    if !approve && comment.trim().is_empty() {
        return Err(ApprovalError::NotAllowed(
            "Say why you reject it: the requester reads the reason.".to_owned(),
        ));
    }
    let comment = comment.trim();
    let decision = if approve { "approve" } else { "reject" };
    let Some(approvals) = store::add_decision(
        &mut tx,
        &request,
        me.user_id,
        (decision, comment),
        (
            kind.approve_permission,
            policy.escalation_role.as_deref().filter(|_| escalated),
        ),
    )
    .await?
    else {
        return Err(ApprovalError::AlreadyDecided);
    };
    let role_met = match &request.required_role {
        None => true,
        Some(role) => store::approver_role_names(&mut *tx, request.id)
            .await?
            .contains(role),
    };
    let detail = if comment.is_empty() {
        format!("by {}", me.email)
    } else {
        format!("by {}: {comment}", me.email)
    };
    let details = json!({"comment": comment, "approvals": approvals, "required": request.required_approvals,
                         "digest": request.digest});
    let result = if !approve {
        transition(
            &mut tx,
            &request,
            Change {
                to: RequestStatus::Rejected,
                what: "rejected",
                detail,
                failure: None,
                notify: Notify::Requester(format!("Your request was rejected: {}", request.summary)),
                audit: (member.actor(), Event::ApprovalsRejected, details),
            },
        )
        .await?;
        Decided::Rejected
    } else if approvals >= i64::from(request.required_approvals) && role_met {
        transition(
            &mut tx,
            &request,
            Change {
                to: RequestStatus::Approved,
                what: "approved",
                detail,
                failure: None,
                notify: Notify::Requester(format!("Your request was approved: {}", request.summary)),
                audit: (member.actor(), Event::ApprovalsApproved, details),
            },
        )
        .await?;
        Decided::Approved
    } else {
        store::add_timeline(&mut *tx, request.id, "approved by one", &detail).await?;
        audit::store::append_in(
            &mut tx,
            &[NewRecord::new(
                &member.actor(),
                Some(member.tenant_id),
                Event::ApprovalsApproved,
                format!("request:{}", request.id),
                outcome::SUCCESS,
            )
            .with_details(details)],
        )
        .await?;
        Decided::Recorded
    };
    tx.commit().await?;
    Ok(result)
}

/// The maker withdraws a pending request.
pub async fn cancel(pool: &PgPool, member: &Member, request_id: Uuid) -> Result<(), ApprovalError> {
    let mut tx = pool.begin().await?;
    let request = store::lock(&mut tx, member.tenant_id, request_id)
        .await?
        .ok_or(ApprovalError::NotFound)?;
    if request.requested_by != member.user.user_id {
        return Err(ApprovalError::NotAllowed(
            "Only the member who filed a request can cancel it.".to_owned(),
        ));
    }
    if request.status != RequestStatus::Pending {
        return Err(ApprovalError::NotPending(request.status));
    }
    transition(
        &mut tx,
        &request,
        Change {
            to: RequestStatus::Cancelled,
            what: "cancelled",
            detail: format!("by {}", member.user.email),
            failure: None,
            notify: Notify::Nobody,
            audit: (member.actor(), Event::ApprovalsCancelled, json!({})),
        },
    )
    .await?;
    tx.commit().await?;
    Ok(())
}

async fn expire_locked(
    tx: &mut Transaction<'_, Postgres>,
    request: &ActionRequest,
) -> Result<(), ApprovalError> {
    transition(
        tx,
        request,
        Change {
            to: RequestStatus::Expired,
            what: "expired",
            detail: "no decision in time".to_owned(),
            failure: None,
            notify: Notify::Requester(format!(
                "Your request expired without a decision: {}",
                request.summary
            )),
            audit: (gate_actor(), Event::ApprovalsExpired, json!({})),
        },
    )
    .await
}

/// Expires pending requests past their deadline, each under its row lock,
/// so an approval racing the expiry either wins before it or is refused.
pub async fn expire_overdue(pool: &PgPool) -> Result<(), ApprovalError> {
    for (id, tenant) in store::overdue(pool).await? {
        let mut tx = pool.begin().await?;
        if let Some(request) = store::lock(&mut tx, tenant, id).await? {
            if request.status == RequestStatus::Pending && Utc::now() >= request.expires_at {
                expire_locked(&mut tx, &request).await?;
            }
        }
        tx.commit().await?;
    }
    Ok(())
}

/// The kind of a stored request, from the registry.
pub fn kind_of<'r>(
    registry: &'r Registry,
    request: &ActionRequest,
) -> Result<(&'r dyn ErasedAction, Kind), ApprovalError> {
    let action = registry.get(&request.kind)?;
    Ok((action, action.kind()))
}
