//! Filing: an action weighed against the policy in force (`assess`),
//! shown for confirmation (`preview`), then written as a request once
//! enough independent colleagues could approve it (`file`).

use super::action::{self, Action, Counterparty};
use super::lifecycle::{gate_actor, policy_in_force, transition, ApprovalError, Change, Notify};
use super::model::{Kind, Policy, RequestStatus, Requirement, Weighed};
use super::quorum::{Colleagues, Filed};
use super::running::run_now;
use super::store::{self, ActionRequest, NewRequest};
use crate::access::Member;
use crate::audit::{outcome, Event, NewRecord};
use crate::state::AppState;
use crate::web::form::{Failure, Refusal};
use chrono::{DateTime, Duration, Utc};
use rust_decimal::Decimal;
use serde_json::{json, Value};
use uuid::Uuid;

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

/// How submitting an action ended.
pub enum Submitted {
    /// Filed; waits for approvals.
    Waiting(Uuid),
    /// Below the policy's threshold: run at once through the same gate;
    /// the request as it stands after the run.
    Ran(Box<ActionRequest>),
}

/// Files an action and, when the policy lets it run at once, runs it.
pub async fn submit<A: Action>(
    state: &AppState,
    member: &Member,
    filing: Filing<'_, A::Payload>,
) -> Result<Submitted, ApprovalError> {
    match file::<A>(state, member, filing).await? {
        FiledAs::Waiting(id) => Ok(Submitted::Waiting(id)),
        FiledAs::Approved(id) => {
            run_now(state, id).await?;
            let request = store::find(&state.pool, member.tenant_id, id)
                .await?
                .ok_or(ApprovalError::NotFound)?;
            Ok(Submitted::Ran(Box::new(request)))
        }
    }
}

/// Where a member's money action stands after they asked for it.
pub enum Gated {
    /// Not confirmed yet: what will happen, for the confirmation page.
    Confirm(Preview),
    /// Waits for approval, or is still being carried out: its request (or
    /// the same one already waiting), whose page shows how it goes.
    Waiting(Uuid),
    /// Ran at once and succeeded: the request as it ended.
    Done(Box<ActionRequest>),
}

/// The one way a member's action enters the gate from a page: previewed
/// until confirmed, then filed, and run at once when the policy lets it.
/// A refusal (or a run that failed) comes back in the user's terms.
pub async fn gate<A: Action>(
    state: &AppState,
    member: &Member,
    filing: Filing<'_, A::Payload>,
    confirmed: bool,
) -> Result<Gated, Failure> {
    let outcome = if confirmed {
        submit::<A>(state, member, filing).await.map(|s| match s {
            Submitted::Waiting(id) => Gated::Waiting(id),
            Submitted::Ran(request) => Gated::Done(request),
        })
    } else {
        preview::<A>(state, member, &filing).await.map(Gated::Confirm)
    };
    match outcome {
        Ok(Gated::Done(request)) if request.status == RequestStatus::Failed => Err(Refusal::form(
            request
                .failure_reason
                .unwrap_or_else(|| "The payments service refused it; nothing moved.".to_owned()),
        )
        .into()),
        // Still running (the job runner took it first): its page shows how it goes.
        Ok(Gated::Done(request)) if request.status != RequestStatus::Executed => {
            Ok(Gated::Waiting(request.id))
        }
        Ok(gated) => Ok(gated),
        Err(ApprovalError::Duplicate(existing)) => Ok(Gated::Waiting(existing)),
        Err(ApprovalError::Db(e)) => Err(e.into()),
        Err(e) => Err(Refusal::form(e.to_string()).into()),
    }
}
