//! Runs approved actions from the job queue, exactly once. Jobs are taken
//! with `FOR UPDATE SKIP LOCKED`, one per transaction, so any number of
//! replicas can run them. A payout is carried out with the upstream
//! reference fixed when it was filed: the quote and initialize are
//! idempotent by it, the payout id is saved before finalize, and an unknown
//! outcome is settled by reading the payout back, never by sending again.
//! A card termination reads the card first and terminates it only if it
//! is not terminated yet.

use std::time::Duration as StdDuration;

use actix_web::web::Data;
use chrono::{Duration, Utc};
use paydesk_api::models::payouts::{InitializeRequest, Payout, PayoutBeneficiary, QuoteRequest};
use paydesk_api::units::{decimal_to_units, Currency};
use paydesk_api::{ApiError, Client};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::json;
use uuid::Uuid;

use super::model::{self, ActionKind};
use super::store::{self, ActionRequest};
use crate::audit::{self, outcome, Actor, NewRecord};
use crate::cards::termination::TerminationPayload;
use crate::startup::AppState;
use crate::web::error::{describe_upstream, PortalError};

/// How long the runner sleeps when there is nothing to do.
const IDLE: StdDuration = StdDuration::from_millis(500);
const MAX_ATTEMPTS: i32 = 10;

/// Everything a payout request needs to run, fixed when it was filed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PayoutPayload {
    pub country: String,
    pub from_asset: String,
    pub to_currency: String,
    pub amount: Decimal,
    pub payment_reason: String,
    pub beneficiary: PayoutBeneficiary,
    /// A saved beneficiary the request was filed for, re-checked at approval.
    #[serde(default)]
    pub beneficiary_id: Option<String>,
    /// The rate shown to the approvers; execution refuses a worse one
    /// beyond the policy's tolerance.
    pub indicative_rate: Decimal,
    pub indicative_settlement: Decimal,
    pub indicative_fees: Decimal,
}

fn engine_actor() -> Actor {
    Actor {
        email: "approvals engine".to_owned(),
        ..Actor::default()
    }
}

/// What a run of a job came to.
enum Step {
    Done,
    Again(StdDuration),
}

/// How often in-flight payouts are read back, in case a webhook was lost.
const RECONCILE_EVERY: StdDuration = StdDuration::from_secs(10);

/// Starts the runner on the current runtime.
pub fn start(state: Data<AppState>) {
    tokio::spawn(async move {
        let mut last_reconcile = std::time::Instant::now();
        loop {
            if last_reconcile.elapsed() >= RECONCILE_EVERY {
                last_reconcile = std::time::Instant::now();
                if let Err(e) = reconcile(&state).await {
                    tracing::warn!(error = %e, "reading back in-flight payouts failed");
                }
                if let Err(e) = nudge(&state).await {
                    tracing::warn!(error = %e, "reminding approvers failed");
                }
            }
            match run_next(&state).await {
                Ok(true) => continue,
                Ok(false) => tokio::time::sleep(IDLE).await,
                Err(e) => {
                    tracing::error!(error = %e, "the job runner failed; retrying");
                    tokio::time::sleep(IDLE).await;
                }
            }
        }
    });
}

/// Webhooks may be lost: reads back payouts still in flight and records
/// their status (which never moves backwards).
pub async fn reconcile(state: &AppState) -> Result<(), PortalError> {
    for (request, tenant, payout_id) in store::in_flight_payouts(&state.pool).await? {
        let client = match state
            .upstreams
            .for_tenant(&state.pool, &state.key, &state.audit, tenant, engine_actor())
            .await
        {
            Ok(c) => c,
            Err(_) => continue,
        };
        if let Ok(payout) = client.payout(&payout_id).await {
            store::payout_event_status(&state.pool, request, &payout.status).await?;
        }
    }
    Ok(())
}

/// Requests waiting past their policy's reminder time remind their
/// approvers in the app, once; past the escalation time the backup role is
/// told it may now approve.
pub async fn nudge(state: &AppState) -> Result<(), sqlx::Error> {
    for what in [store::Nudge::Reminder, store::Nudge::Escalation] {
        for (id, tenant) in store::due_for(&state.pool, what).await? {
            let Some(request) = store::find(&state.pool, tenant, id).await? else {
                continue;
            };
            let kind = request.kind();
            let policy = store::policy_version(&state.pool, tenant, kind, request.policy_version).await?;
            let members = store::candidates(&state.pool, tenant).await?;
            let (who, message): (Vec<Uuid>, String) = match what {
                store::Nudge::Reminder => (
                    model::eligible(&policy, kind, &request.filed(), &members)
                        .iter()
                        .map(|m| m.user_id)
                        .collect(),
                    format!("Reminder: still waiting for your approval: {}", request.summary),
                ),
                store::Nudge::Escalation => (
                    members
                        .iter()
                        .filter(|m| Some(m.role_name.as_str()) == policy.escalation_role.as_deref())
                        .filter(|m| m.user_id != request.requested_by)
                        .map(|m| m.user_id)
                        .collect(),
                    format!("Escalated to you: you may now approve {}", request.summary),
                ),
            };
            let mut tx = state.pool.begin().await?;
            for user in who {
                store::notify(&mut *tx, user, tenant, id, &message).await?;
            }
            store::mark_nudged(&mut *tx, id, what).await?;
            let what_label = match what {
                store::Nudge::Reminder => "reminded",
                store::Nudge::Escalation => "escalated",
            };
            store::add_timeline(&mut *tx, id, what_label, "").await?;
            tx.commit().await?;
        }
    }
    Ok(())
}

/// Takes and runs one due job; false when none is due.
pub async fn run_next(state: &AppState) -> Result<bool, sqlx::Error> {
    let mut tx = state.pool.begin().await?;
    let job: Option<(i64, Option<Uuid>, i32)> = sqlx::query_as(
        "SELECT id, request_id, attempts FROM jobs WHERE done_at IS NULL AND run_at <= now() \
         ORDER BY run_at, id LIMIT 1 FOR UPDATE SKIP LOCKED",
    )
    .fetch_optional(&mut *tx)
    .await?;
    let Some((job_id, Some(request_id), attempts)) = job else {
        return Ok(false);
    };
    let request: Option<(Uuid,)> = sqlx::query_as("SELECT tenant_id FROM action_requests WHERE id = $1")
        .bind(request_id)
        .fetch_optional(&mut *tx)
        .await?;
    let result = match request {
        Some((tenant,)) => execute(state, tenant, request_id).await,
        None => Ok(Step::Done),
    };
    match result {
        Ok(Step::Done) => {
            sqlx::query("UPDATE jobs SET done_at = now(), attempts = attempts + 1 WHERE id = $1")
                .bind(job_id)
                .execute(&mut *tx)
                .await?;
        }
        Ok(Step::Again(after)) => {
            sqlx::query(
                "UPDATE jobs SET run_at = now() + $2::interval, attempts = attempts + 1 WHERE id = $1",
            )
            .bind(job_id)
            .bind(format!("{} milliseconds", after.as_millis()))
            .execute(&mut *tx)
            .await?;
        }
        Err(e) if attempts + 1 >= MAX_ATTEMPTS => {
            let reason = format!("gave up after {MAX_ATTEMPTS} attempts: {e}");
            fail(state, request_id, &reason).await?;
            sqlx::query(
                "UPDATE jobs SET done_at = now(), attempts = attempts + 1, last_error = $2 WHERE id = $1",
            )
            .bind(job_id)
            .bind(&reason)
            .execute(&mut *tx)
            .await?;
        }
        Err(e) => {
            tracing::warn!(error = %e, %request_id, "job failed; will retry");
            sqlx::query(
                "UPDATE jobs SET attempts = attempts + 1, last_error = $2, \
                 run_at = now() + make_interval(secs => least(60, 2 ^ attempts)) WHERE id = $1",
            )
            .bind(job_id)
            .bind(e.to_string())
            .execute(&mut *tx)
            .await?;
        }
    }
    tx.commit().await?;
    Ok(true)
}

async fn fail(state: &AppState, request_id: Uuid, reason: &str) -> Result<(), sqlx::Error> {
    let mut tx = state.pool.begin().await?;
    store::set_status(&mut *tx, request_id, "failed", Some(reason)).await?;
    store::add_timeline(&mut *tx, request_id, "failed", reason).await?;
    let row: Option<(Uuid, Uuid, String)> =
        sqlx::query_as("SELECT tenant_id, requested_by, summary FROM action_requests WHERE id = $1")
            .bind(request_id)
            .fetch_optional(&mut *tx)
            .await?;
    if let Some((tenant, requester, summary)) = row {
        store::notify(
            &mut *tx,
            requester,
            tenant,
            request_id,
            &format!("Your request failed: {summary}: {reason}"),
        )
        .await?;
        audit::store::append_in(
            &mut tx,
            &[NewRecord::new(
                &engine_actor(),
                Some(tenant),
                "approvals.failed",
                format!("request:{request_id}"),
                outcome::FAILURE,
            )
            .with_details(json!({ "reason": reason }))],
        )
        .await?;
    }
    tx.commit().await
}

async fn execute(state: &AppState, tenant: Uuid, request_id: Uuid) -> Result<Step, PortalError> {
    let Some(request) = store::find(&state.pool, tenant, request_id).await? else {
        return Ok(Step::Done);
    };
    if !matches!(request.status.as_str(), "approved" | "executing") {
        return Ok(Step::Done);
    }
    if request.status == "approved" {
        store::set_status(&state.pool, request.id, "executing", None).await?;
        store::add_timeline(&state.pool, request.id, "executing", "").await?;
    }
    match request.kind() {
        ActionKind::Payout => execute_payout(state, &request).await,
        ActionKind::CardTermination => execute_card_termination(state, &request).await,
    }
}

/// Terminates the card once. DELETE carries no reference, so the card is
/// read first: one found terminated was terminated by an earlier run
/// whose answer was lost, and is not terminated again.
async fn execute_card_termination(state: &AppState, request: &ActionRequest) -> Result<Step, PortalError> {
    let payload: TerminationPayload =
        serde_json::from_value(request.payload.0.clone()).map_err(|e| PortalError::Internal(Box::new(e)))?;
    let client = match state
        .upstreams
        .for_tenant(
            &state.pool,
            &state.key,
            &state.audit,
            request.tenant_id,
            engine_actor(),
        )
        .await
    {
        Ok(c) => c,
        Err(PortalError::NoConnection) => {
            fail(state, request.id, "the tenant no longer has an API connection").await?;
            return Ok(Step::Done);
        }
        Err(e) => return Err(e),
    };
    let card = client.card(&payload.card_id).await?;
    let result = if card.status == "terminated" {
        json!({"card_id": card.id, "terminated_at": card.terminated_at})
    } else {
        match client.terminate_card(&payload.card_id, &payload.reason).await {
            Ok(t) => json!({
                "card_id": t.card_id,
                "terminated_at": t.terminated_at,
                "remaining_balance": t.remaining_balance.display(),
                "balance_returned": t.balance_returned,
            }),
            Err(ApiError::OutcomeUnknown { .. }) | Err(ApiError::Unavailable(_)) => {
                store::add_timeline(
                    &state.pool,
                    request.id,
                    "termination unconfirmed",
                    "reading the card back",
                )
                .await?;
                return Ok(Step::Again(StdDuration::from_secs(2)));
            }
            Err(
                e @ ApiError::Problem {
                    status: 400..=499, ..
                },
            ) => {
                fail(state, request.id, &describe_upstream(&e).0).await?;
                return Ok(Step::Done);
            }
            Err(e) => return Err(e.into()),
        }
    };
    let detail = match result["remaining_balance"].as_str() {
        Some(balance) => format!(
            "card ····{} terminated; {balance} USD returned to the wallet",
            payload.last_four
        ),
        None => format!("card ····{} terminated", payload.last_four),
    };
    let mut tx = state.pool.begin().await?;
    store::merge_outcome(&mut *tx, request.id, result.clone()).await?;
    store::set_status(&mut *tx, request.id, "executed", None).await?;
    store::add_timeline(&mut *tx, request.id, "terminated", &detail).await?;
    store::notify(
        &mut *tx,
        request.requested_by,
        request.tenant_id,
        request.id,
        &format!("Your request was carried out: {}", request.summary),
    )
    .await?;
    audit::store::append_in(
        &mut tx,
        &[NewRecord::new(
            &engine_actor(),
            Some(request.tenant_id),
            "approvals.executed",
            format!("request:{}", request.id),
            outcome::SUCCESS,
        )
        .with_details(result)],
    )
    .await?;
    tx.commit().await?;
    Ok(Step::Done)
}

/// Payout statuses that mean finalize went through.
fn finalized(status: &str) -> bool {
    matches!(status, "PENDING" | "PROCESSING" | "COMPLETED" | "FAILED")
}

async fn executed(state: &AppState, request: &ActionRequest, payout: &Payout) -> Result<Step, PortalError> {
    let mut tx = state.pool.begin().await?;
    store::merge_outcome(&mut *tx, request.id, json!({"payout_id": payout.id})).await?;
    store::payout_event_status(&mut *tx, request.id, &payout.status).await?;
    store::set_status(&mut *tx, request.id, "executed", None).await?;
    store::add_timeline(
        &mut *tx,
        request.id,
        "finalized",
        &format!("payout {} is {}", payout.id, payout.status),
    )
    .await?;
    store::notify(
        &mut *tx,
        request.requested_by,
        request.tenant_id,
        request.id,
        &format!("Your request was carried out: {}", request.summary),
    )
    .await?;
    audit::store::append_in(
        &mut tx,
        &[NewRecord::new(
            &engine_actor(),
            Some(request.tenant_id),
            "approvals.executed",
            format!("request:{}", request.id),
            outcome::SUCCESS,
        )
        .with_details(json!({"payout_id": payout.id, "reference": request.upstream_reference}))],
    )
    .await?;
    tx.commit().await?;
    Ok(Step::Done)
}

async fn execute_payout(state: &AppState, request: &ActionRequest) -> Result<Step, PortalError> {
    let payload: PayoutPayload =
        serde_json::from_value(request.payload.0.clone()).map_err(|e| PortalError::Internal(Box::new(e)))?;
    let client = state
        .upstreams
        .for_tenant(
            &state.pool,
            &state.key,
            &state.audit,
            request.tenant_id,
            engine_actor(),
        )
        .await;
    let client = match client {
        Ok(c) => c,
        Err(PortalError::NoConnection) => {
            fail(state, request.id, "the tenant no longer has an API connection").await?;
            return Ok(Step::Done);
        }
        Err(e) => return Err(e),
    };
    let attempt = request.outcome.0["attempt"].as_u64().unwrap_or(0);

    // A payout from an earlier run: settle what happened to it first.
    if let Some(payout_id) = request.outcome.0["payout_id"].as_str() {
        let payout = client.payout(payout_id).await?;
        if finalized(&payout.status) {
            return executed(state, request, &payout).await;
        }
        if payout.status == "EXPIRED" {
            return fresh_quote(state, request, attempt).await;
        }
        return finalize(state, &client, request, &payload, &payout).await;
    }

    // The state now, not at filing: the beneficiary must be as approved.
    if let Some(id) = &payload.beneficiary_id {
        let saved = client.beneficiary(id).await;
        let unchanged = match &saved {
            Ok(b) => matches!(&b.destination, paydesk_api::models::beneficiaries::Destination::Account {
                account_number, bank_code, ..
            } if *account_number == payload.beneficiary.account_number
                && Some(bank_code) == payload.beneficiary.bank_code.as_ref()),
            Err(_) => false,
        };
        if !unchanged {
            fail(state, request.id, "the saved beneficiary changed or was deleted after the request was filed; file a new request").await?;
            return Ok(Step::Done);
        }
    }

    let reference = if attempt == 0 {
        request.upstream_reference.clone()
    } else {
        format!("{}-{attempt}", request.upstream_reference)
    };
    let quote = client
        .create_payout_quote(&QuoteRequest {
            amount: Some(payload.amount),
            country: payload.country.clone(),
            from_asset: payload.from_asset.clone(),
            to_currency: payload.to_currency.clone(),
            source: "offchain".to_owned(),
            reference: reference.clone(),
            ..Default::default()
        })
        .await;
    let quote = match quote {
        Ok(q) => q,
        Err(
            e @ ApiError::Problem {
                status: 400..=499, ..
            },
        ) => {
            fail(state, request.id, &describe_upstream(&e).0).await?;
            return Ok(Step::Done);
        }
        Err(e) => return Err(e.into()),
    };
    if quote.status == "EXPIRED" || Utc::now() >= quote.expires_at {
        store::merge_outcome(&state.pool, request.id, json!({"attempt": attempt + 1})).await?;
        return Ok(Step::Again(StdDuration::ZERO));
    }
    let policy = store::policy_version(
        &state.pool,
        request.tenant_id,
        ActionKind::Payout,
        request.policy_version,
    )
    .await?;
    if policy.rate_moved_too_far(payload.indicative_rate, quote.exchange_rate.rate) {
        send_back(state, request, &payload, &quote).await?;
        return Ok(Step::Done);
    }
    let asset = Currency::parse(&quote.from_asset).map_err(|e| PortalError::Internal(Box::new(e)))?;
    let decimals = asset.decimals().unwrap_or(6);
    let needed = decimal_to_units(quote.amount + quote.fees, decimals).unwrap_or(i64::MAX);
    let available = client.balance(asset.code()).await?.available_balance.value();
    if available < needed {
        fail(
            state,
            request.id,
            &format!(
                "the {} wallet holds less than the {} this payout needs",
                asset,
                quote.amount + quote.fees
            ),
        )
        .await?;
        return Ok(Step::Done);
    }
    // Saved before anything moves, so a crash from here on is reconciled by
    // reading this payout back.
    store::merge_outcome(
        &state.pool,
        request.id,
        json!({"payout_id": quote.id, "quote_id": quote.quote_id, "reference": reference}),
    )
    .await?;
    store::add_timeline(
        &state.pool,
        request.id,
        "quoted",
        &format!(
            "{} {} for {} {} at {}",
            quote.amount,
            quote.from_asset,
            quote.settlement_amount,
            quote.to_currency,
            quote.exchange_rate.rate
        ),
    )
    .await?;
    let initialized = client
        .initialize_payout(
            &quote.quote_id,
            &InitializeRequest {
                quote_id: quote.quote_id.clone(),
                reference,
                payment_reason: payload.payment_reason.clone(),
                callback_url: None,
                beneficiary: payload.beneficiary.clone(),
            },
        )
        .await;
    let payout = match initialized {
        Ok(p) => p,
        Err(e @ ApiError::Problem { .. }) if e.code() == Some("QUOTE_EXPIRED") => {
            return fresh_quote(state, request, attempt).await;
        }
        Err(
            e @ ApiError::Problem {
                status: 400..=499, ..
            },
        ) => {
            fail(state, request.id, &describe_upstream(&e).0).await?;
            return Ok(Step::Done);
        }
        Err(e) => return Err(e.into()),
    };
    store::add_timeline(
        &state.pool,
        request.id,
        "initialized",
        &format!("payout {}", payout.id),
    )
    .await?;
    finalize(state, &client, request, &payload, &payout).await
}

async fn finalize(
    state: &AppState,
    client: &Client,
    request: &ActionRequest,
    _payload: &PayoutPayload,
    payout: &Payout,
) -> Result<Step, PortalError> {
    match client.finalize_payout(&payout.quote_id).await {
        Ok(done) => executed(state, request, &done).await,
        Err(ApiError::OutcomeUnknown { .. }) | Err(ApiError::Unavailable(_)) => {
            // Never finalize blindly again: read what happened.
            store::add_timeline(
                &state.pool,
                request.id,
                "finalize unconfirmed",
                "reading the payout back",
            )
            .await?;
            match client.payout(&payout.id.to_string()).await {
                Ok(p) if finalized(&p.status) => executed(state, request, &p).await,
                _ => Ok(Step::Again(StdDuration::from_secs(2))),
            }
        }
        Err(e @ ApiError::Problem { .. }) if e.code() == Some("QUOTE_EXPIRED") => {
            fresh_quote(state, request, request.outcome.0["attempt"].as_u64().unwrap_or(0)).await
        }
        Err(
            e @ ApiError::Problem {
                status: 400..=499, ..
            },
        ) => {
            fail(state, request.id, &describe_upstream(&e).0).await?;
            Ok(Step::Done)
        }
        Err(e) => Err(e.into()),
    }
}

/// The quote ran out before finalize, so nothing was paid: the next run
/// takes a fresh quote under the next reference of the series.
async fn fresh_quote(state: &AppState, request: &ActionRequest, attempt: u64) -> Result<Step, PortalError> {
    store::merge_outcome(
        &state.pool,
        request.id,
        json!({"attempt": attempt + 1, "payout_id": null}),
    )
    .await?;
    store::add_timeline(
        &state.pool,
        request.id,
        "quote expired",
        "a fresh quote will be taken",
    )
    .await?;
    Ok(Step::Again(StdDuration::ZERO))
}

/// The rate moved beyond tolerance: the request goes back for approval at
/// the new rate instead of paying at a worse one.
async fn send_back(
    state: &AppState,
    request: &ActionRequest,
    payload: &PayoutPayload,
    quote: &Payout,
) -> Result<(), PortalError> {
    let mut updated = payload.clone();
    updated.indicative_rate = quote.exchange_rate.rate;
    updated.indicative_settlement = quote.settlement_amount;
    updated.indicative_fees = quote.fees;
    let mut tx = state.pool.begin().await?;
    store::set_payload(
        &mut *tx,
        request.id,
        &serde_json::to_value(&updated).unwrap_or_default(),
    )
    .await?;
    store::clear_decisions(&mut *tx, request.id).await?;
    sqlx::query(
        "UPDATE action_requests SET status = 'pending', expires_at = $2, updated_at = now() WHERE id = $1",
    )
    .bind(request.id)
    .bind(Utc::now() + Duration::days(1))
    .execute(&mut *tx)
    .await?;
    store::add_timeline(
        &mut *tx,
        request.id,
        "back for approval",
        &format!(
            "the rate moved from {} to {}",
            payload.indicative_rate, quote.exchange_rate.rate
        ),
    )
    .await?;
    store::notify(
        &mut *tx,
        request.requested_by,
        request.tenant_id,
        request.id,
        &format!(
            "The rate moved; your request needs approval again: {}",
            request.summary
        ),
    )
    .await?;
    tx.commit().await?;
    Ok(())
}
