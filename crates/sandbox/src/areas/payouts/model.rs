//! The payout state machine as plain functions over the company's data:
//! QUOTE -> INITIATED -> PENDING -> PROCESSING -> COMPLETED or FAILED, and
//! EXPIRED when a quote runs out before finalize. Quotes are valid 15
//! minutes of sandbox time; the rail moves a finalized payout to
//! PROCESSING 30 s later and settles it 60 s after that. Offchain payouts
//! debit the wallet (amount + fees, in the source asset) at finalize, and
//! a failure returns both with a REVERSAL.
//!
//! Onchain payouts (`source: onchain` with a `chain`) are funded by a
//! deposit (sandbox-rules.md, Payouts): initialize gives the payout a
//! `deposit_address` on the quote's chain and debits nothing; a deposit to
//! it (`POST /sandbox/deposits`) is detected and confirmed like any
//! deposit, crediting the wallet; finalize is a 422
//! `DEPOSIT_NOT_CONFIRMED` until the confirmed deposits to that address
//! add up to amount + fees, and then debits and runs the rail exactly as
//! an offchain finalize does. A deposit still being confirmed does not
//! count; an excess, or the deposit of a quote that expired, stays in the
//! wallet.
//!
//! Decisions where the documents are silent: fees are 1% of the amount,
//! rounded up to the asset's smallest unit; a quote from `amount` rounds the
//! settlement down to the cent, one from `settlement_amount` rounds the
//! amount up; an expired payout's record status is EXPIRED.

use chrono::Duration;
use paydesk_api::models::payouts::{events, InitializeRequest, Payout, PayoutBeneficiary, PayoutStatus};
use paydesk_api::models::transactions::{TransactionState, TransactionType};
use paydesk_api::units::{BaseUnits, Currency};
use paydesk_api::wire::codes;
use serde_json::json;
use uuid::Uuid;

use super::book::payout_chain;
use super::corridors::{self, Corridor};
use super::lifecycle::{transition, PayoutEvent};
pub use super::quote::quote;
use crate::chains::{self};
use crate::error::ApiError;
use crate::ledger::NewTransaction;
use crate::scheduler::Job;
use crate::state::{Company, Effects};
use crate::webhooks;

pub const QUOTE_VALIDITY_SECS: i64 = 15 * 60;
pub const TO_PROCESSING_SECS: i64 = 30;
pub const TO_SETTLED_SECS: i64 = 60;
/// Beneficiary account numbers ending so fail on the rail (test value).
const FAILING_SUFFIX: &str = "9999";

fn quote_index(company: &Company, quote_id: &str) -> Result<usize, ApiError> {
    company
        .payouts
        .index_by_quote(quote_id)
        .ok_or_else(|| ApiError::NotFound(format!("no payout quote {quote_id}")))
}

fn check_beneficiary(corridor: &Corridor, b: &PayoutBeneficiary) -> Result<(), ApiError> {
    let field = |name: &str, message: &str| ApiError::field(format!("beneficiary.{name}"), message);
    let kind = b.destination_type.to_ascii_lowercase();
    let kind = kind.as_str();
    if !matches!(kind, "bank" | "mobile_money" | "swift") {
        return Err(field("destination_type", "must be bank, mobile_money or swift"));
    }
    if !corridor.destination_types().iter().any(|t| t == kind) {
        return Err(field(
            "destination_type",
            &format!(
                "{} payouts support {}",
                corridor.country,
                corridor.destination_types().join(" and ")
            ),
        ));
    }
    if !b.country.trim().eq_ignore_ascii_case(corridor.country) {
        return Err(field(
            "country",
            &format!("must be {}, the quote's country", corridor.country),
        ));
    }
    if b.account_name.trim().is_empty() {
        return Err(field("account_name", "is required"));
    }
    if b.account_number.trim().is_empty() {
        return Err(field("account_number", "is required"));
    }
    let code = b.bank_code.as_deref().unwrap_or("").trim();
    if code.is_empty() {
        return Err(field(
            "bank_code",
            "is required for bank and mobile_money destinations",
        ));
    }
    match corridor.bank(code) {
        Some((_, _, bank_kind)) if *bank_kind == kind => Ok(()),
        Some(_) => Err(field("bank_code", &format!("'{code}' is not a {kind} provider"))),
        None => Err(field(
            "bank_code",
            &format!(
                "'{code}' is not a provider code of {}; see /api/payouts/banks/{}",
                corridor.country, corridor.country
            ),
        )),
    }
}

/// Attaches the beneficiary and reason; the quote must still be valid.
pub fn initialize(
    company: &mut Company,
    path_quote_id: &str,
    req: &InitializeRequest,
    fx: &mut Effects<'_>,
) -> Result<Payout, ApiError> {
    if !req.quote_id.is_empty() && req.quote_id != path_quote_id {
        return Err(ApiError::field("quote_id", "must match the quote id in the path"));
    }
    if req.reference.trim().is_empty() {
        return Err(ApiError::field("reference", "is required"));
    }
    let index = quote_index(company, path_quote_id)?;
    let record = &company.payouts.records[index];
    if record.payout.status == PayoutStatus::Expired || fx.now >= record.payout.expires_at {
        return Err(ApiError::unprocessable(
            codes::QUOTE_EXPIRED,
            "the quote has expired; request a new quote and initialize that",
        ));
    }
    let next = transition(&record.payout.status, PayoutEvent::Initialize).map_err(|refusal| {
        ApiError::unprocessable(
            codes::INVALID_STATE,
            format!("payout is {}; only a quote can be initialized", refusal.from),
        )
    })?;
    let corridor = corridors::find(&record.payout.country).expect("quotes are made for known corridors");
    check_beneficiary(corridor, &req.beneficiary)?;
    let reason = req.payment_reason.trim();
    if reason.is_empty() {
        return Err(ApiError::field("payment_reason", "is required, e.g. salary"));
    }
    if corridor.reasons_fixed && !corridor.reasons.contains(&reason) {
        return Err(ApiError::field(
            "payment_reason",
            format!(
                "{} payouts need one of: {}",
                corridor.country,
                corridor.reasons.join(", ")
            ),
        ));
    }
    if let Some(url) = req.callback_url.as_deref().filter(|u| !u.is_empty()) {
        webhooks::check_url(url).map_err(|reason| ApiError::field("callback_url", reason))?;
    }
    let payout = &mut company.payouts.records[index].payout;
    payout.status = next;
    let mut beneficiary = req.beneficiary.clone();
    beneficiary.destination_type = beneficiary.destination_type.to_ascii_lowercase();
    payout.beneficiary = Some(beneficiary);
    payout.payment_reason = reason.to_owned();
    payout.callback_url = req.callback_url.clone().unwrap_or_default();
    payout.trip.initialized_at = Some(fx.now);
    payout.updated_at = Some(fx.now);
    if let Some(chain) = payout_chain(payout) {
        payout.deposit_address = Some(chains::generate_address(chain, &mut rand::thread_rng()));
    }
    let payout = payout.clone();
    emit(company, &payout, events::INITIALIZED, fx);
    Ok(payout)
}

/// Commits the payout: debits the wallet (an onchain payout once its
/// deposit is confirmed) and hands it to the rail.
pub fn finalize(company: &mut Company, quote_id: &str, fx: &mut Effects<'_>) -> Result<Payout, ApiError> {
    let index = quote_index(company, quote_id)?;
    let record = company.payouts.records[index].clone();
    if record.payout.status == PayoutStatus::Expired {
        return Err(ApiError::unprocessable(
            codes::QUOTE_EXPIRED,
            "the quote expired before finalize; request a new quote and initialize it",
        ));
    }
    let next = transition(&record.payout.status, PayoutEvent::Finalize).map_err(|refusal| {
        ApiError::unprocessable(
            codes::INVALID_STATE,
            format!(
                "payout is {}; initialize the quote before finalizing",
                refusal.from
            ),
        )
    })?;
    if fx.now >= record.payout.expires_at {
        return Err(ApiError::unprocessable(
            codes::QUOTE_EXPIRED,
            "the quote expired before finalize; request a new quote and initialize it",
        ));
    }
    if let Some(address) = &record.payout.deposit_address {
        let needed = record.amount_units + record.fee_units;
        let confirmed = confirmed_deposits(company, &record.asset, address);
        if confirmed < needed {
            return Err(ApiError::unprocessable(
                codes::DEPOSIT_NOT_CONFIRMED,
                format!(
                    "this onchain payout waits for its deposit: {} base units of {} confirmed at {address}, {needed} needed (amount + fees); deposit the rest and finalize again",
                    confirmed, record.asset
                ),
            ));
        }
    }
    company.ledger.post(
        NewTransaction {
            currency: record.asset.clone(),
            kind: TransactionType::WithdrawalInitiated,
            state: TransactionState::Settled,
            amount: BaseUnits(-record.amount_units),
            fee: BaseUnits(record.fee_units),
            reference: record.payout.reference.clone(),
            idempotency_key: record.payout.quote_id.clone(),
            metadata:
                json!({"payout_id": record.payout.id, "channel": "payout", "country": record.payout.country})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
        },
        fx.now,
    )?;
    let payout = &mut company.payouts.records[index].payout;
    payout.status = next;
    payout.provider_settlement_id = format!("PSI_{}", Uuid::new_v4().simple());
    payout.updated_at = Some(fx.now);
    let payout = payout.clone();
    fx.scheduler.schedule(
        fx.now + Duration::seconds(TO_PROCESSING_SECS),
        Job::PayoutRail {
            company_id: company.id,
            payout_id: payout.id,
        },
    );
    Ok(payout)
}

/// Base units of `asset` confirmed by deposits to `address`.
fn confirmed_deposits(company: &Company, asset: &Currency, address: &str) -> i64 {
    company
        .ledger
        .entries()
        .iter()
        .map(|e| &e.tx)
        .filter(|tx| {
            tx.kind == TransactionType::DepositConfirmed
                && &tx.currency == asset
                && tx.metadata.get("address").and_then(|a| a.as_str()) == Some(address)
        })
        .map(|tx| tx.amount.value())
        .sum()
}

/// The rail's next step, when its time comes.
pub fn advance_rail(company: &mut Company, payout_id: Uuid, fx: &mut Effects<'_>) {
    let Some(index) = company.payouts.index_by_id(payout_id) else {
        return;
    };
    match company.payouts.records[index].payout.status {
        PayoutStatus::Pending => {
            start_processing(company, index, fx);
            fx.scheduler.schedule(
                fx.now + Duration::seconds(TO_SETTLED_SECS),
                Job::PayoutRail {
                    company_id: company.id,
                    payout_id,
                },
            );
        }
        PayoutStatus::Processing => {
            let failing = company.payouts.records[index]
                .payout
                .beneficiary
                .as_ref()
                .is_some_and(|b| b.account_number.trim().ends_with(FAILING_SUFFIX));
            settle(company, index, !failing, fx);
        }
        _ => {}
    }
}

fn start_processing(company: &mut Company, index: usize, fx: &mut Effects<'_>) {
    let payout = &mut company.payouts.records[index].payout;
    let Ok(next) = transition(&payout.status, PayoutEvent::StartProcessing) else {
        return;
    };
    payout.status = next;
    payout.trip.processing_start = Some(fx.now);
    payout.updated_at = Some(fx.now);
    let payout = payout.clone();
    emit(company, &payout, events::PROCESSING, fx);
}

fn settle(company: &mut Company, index: usize, success: bool, fx: &mut Effects<'_>) {
    let record = company.payouts.records[index].clone();
    let event = if success {
        PayoutEvent::Complete
    } else {
        PayoutEvent::Fail
    };
    let Ok(next) = transition(&record.payout.status, event) else {
        return;
    };
    // Both sources were debited at finalize, so a failure returns both.
    if !success {
        let reversal = company.ledger.post(
            NewTransaction {
                currency: record.asset.clone(),
                kind: TransactionType::Reversal,
                state: TransactionState::Settled,
                amount: BaseUnits(record.amount_units + record.fee_units),
                fee: BaseUnits::ZERO,
                reference: format!("{}_REVERSAL", record.payout.reference),
                idempotency_key: String::new(),
                metadata: json!({"payout_id": record.payout.id, "channel": "payout"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            },
            fx.now,
        );
        if let Err(e) = reversal {
            tracing::error!(error = %e, payout = %record.payout.id, "payout reversal could not be posted");
        }
    }
    let payout = &mut company.payouts.records[index].payout;
    payout.status = next;
    payout.trip.completion_time = Some(fx.now);
    payout.updated_at = Some(fx.now);
    if !success {
        payout.failure_reason = Some("the beneficiary's bank rejected the transfer".to_owned());
    }
    let payout = payout.clone();
    emit(
        company,
        &payout,
        if success { events::SUCCESS } else { events::FAILED },
        fx,
    );
}

/// The rail settles a payout now (`POST /sandbox/payouts/{id}/settle`).
pub fn settle_now(
    company: &mut Company,
    id: Uuid,
    success: bool,
    fx: &mut Effects<'_>,
) -> Result<Payout, ApiError> {
    let key = id.to_string();
    let index = company
        .payouts
        .records
        .iter()
        .position(|r| r.payout.id == id || r.payout.quote_id == key)
        .ok_or_else(|| ApiError::NotFound(format!("no payout {id}")))?;
    match &company.payouts.records[index].payout.status {
        PayoutStatus::Pending => start_processing(company, index, fx),
        PayoutStatus::Processing => {}
        other => {
            return Err(ApiError::unprocessable(
                codes::INVALID_STATE,
                format!("payout is {other}; only a finalized payout on the rail can settle"),
            ))
        }
    }
    settle(company, index, success, fx);
    Ok(company.payouts.records[index].payout.clone())
}

/// The quote ran out: a quote or initialized payout expires; nothing settled.
pub fn expire(company: &mut Company, payout_id: Uuid, fx: &mut Effects<'_>) {
    let Some(index) = company.payouts.index_by_id(payout_id) else {
        return;
    };
    let payout = &mut company.payouts.records[index].payout;
    let Ok(next) = transition(&payout.status, PayoutEvent::Expire) else {
        return;
    };
    let was_initialized = payout.status == PayoutStatus::Initiated;
    payout.status = next;
    payout.trip.completion_time = Some(fx.now);
    payout.updated_at = Some(fx.now);
    let payout = payout.clone();
    if was_initialized {
        emit(company, &payout, events::EXPIRED, fx);
    }
}

fn masked(account_number: &str) -> String {
    let digits: Vec<char> = account_number.chars().collect();
    let tail: String = digits[digits.len().saturating_sub(4)..].iter().collect();
    format!("****{tail}")
}

/// The payload of the spec's Events section: lowercase status and codes,
/// a masked account number, the terminal time once there is one.
pub fn event_data(p: &Payout, event: &str) -> serde_json::Value {
    let status = match event {
        events::INITIALIZED => "initiated",
        events::PROCESSING => "processing",
        events::SUCCESS => "success",
        events::FAILED => "failed",
        _ => "expired",
    };
    let mut data = json!({
        "id": p.id,
        "quote_id": p.quote_id,
        "company_id": p.company_id,
        "reference": p.reference,
        "status": status,
        "from_asset": p.from_asset.to_ascii_lowercase(),
        "to_currency": p.to_currency.to_ascii_lowercase(),
        "amount": p.amount,
        "settlement_amount": p.settlement_amount,
        "fees": p.fees,
        "destination": p.beneficiary.as_ref().map(|b| json!({
            "country": b.country,
            "bank_code": b.bank_code,
            "account_number": masked(&b.account_number),
        })),
        "payment_reason": p.payment_reason,
        "created_at": p.created_at,
        "updated_at": p.updated_at,
    });
    if let Some(done) = p.trip.completion_time {
        data["completion_time"] = json!(done);
    }
    if let Some(reason) = &p.failure_reason {
        data["failure_reason"] = json!(reason);
    }
    data
}

fn emit(company: &Company, payout: &Payout, event: &str, fx: &mut Effects<'_>) {
    let extra: Vec<&str> = Some(payout.callback_url.as_str())
        .filter(|u| !u.is_empty())
        .into_iter()
        .collect();
    fx.outbox.emit(
        company.id,
        &company.webhook_targets(&extra),
        event,
        event_data(payout, event),
        fx.now,
    );
}
