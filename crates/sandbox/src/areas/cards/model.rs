//! The card state machine as plain functions over the company's data
//! (spec "Cards", "States and transitions"; sandbox-rules.md, "Money" and
//! "Cards"):
//!
//! - create: the USDT wallet pays `amount` + 1% at once; the card is
//!   `pending`/`processing` with an empty `masked_pan` and balance 0 until
//!   provisioning completes `PROVISION_SECS` later, which loads `amount` and
//!   emits `virtualcard.created.completed`;
//! - fund and withdraw are pending for `TRANSFER_SECS`: a fund holds the
//!   amount and 1% in the wallet and credits the card on completion; a
//!   withdraw debits the card on completion and credits the wallet the
//!   amount less 1%; rate limited per card (1 fund per 30 s, 1 withdraw per
//!   60 s, counting accepted calls only);
//! - status moves between `active` and `frozen` only; termination needs a
//!   card at least 24 hours old and returns the whole balance, no fee;
//! - lite cards can't be funded or withdrawn from, count swipes, and end at
//!   00:00 UTC of their `terminate_date`.
//!
//! Decisions where the documents are silent: ledger movements to and from
//! cards are `P2P_TRANSFER` transactions whose metadata names the card;
//! setting the status a card already has is a no-op answer; a declined
//! spend is kept as a `failed` card transaction with its reason; a fund
//! whose card was terminated meanwhile fails and releases the wallet hold;
//! fees are rounded up to the micro-unit.

use chrono::{DateTime, Duration, Utc};
use paydesk_api::models::cards::{
    BillingAddress, Card, CardLimits, CardStatus, CardTransaction, CardTransactionStatus, SecureDetails,
    Termination,
};
use paydesk_api::models::transactions::{TransactionState, TransactionType};
use paydesk_api::units::{BaseUnits, Currency, MicroUnits};
use paydesk_api::wire::codes;
use rand::Rng;
use rust_decimal::Decimal;
use serde_json::json;
use uuid::Uuid;

pub use super::book::*;
pub use super::issue::{create, provision};
use super::lifecycle::{transition, CardEvent, CardState};
pub use super::spend::spend;
pub use super::transfers::{change_balance, settle_transfer};
use crate::error::ApiError;
use crate::ledger::NewTransaction;
use crate::state::{Company, Effects};

pub const PROVISION_SECS: i64 = 30;
pub const TRANSFER_SECS: i64 = 20;
pub const FUND_WINDOW_SECS: i64 = 30;
pub const WITHDRAW_WINDOW_SECS: i64 = 60;
pub const SECURE_WINDOW_SECS: i64 = 60;
pub const SECURE_READS_PER_WINDOW: usize = 2;
pub const MIN_AGE_TO_TERMINATE_SECS: i64 = 24 * 3600;
/// No card amount (load, fund, withdraw, spend, limit) exceeds this:
/// 1,000,000,000.00 in micro-units.
pub const MAX_AMOUNT: i64 = 1_000_000_000_000_000;
pub const LITE_MIN_AMOUNT: i64 = 2_000_000;
pub const LITE_MAX_AMOUNT: i64 = 250_000_000;
/// Cards are funded from this wallet, 1 card micro-unit = 1 base unit.
pub(super) const FUNDING_WALLET: &str = "USDT";
pub(super) const CARD_CURRENCY: &str = "USD";

/// 1% of `amount`, rounded up to the micro-unit.
pub fn funding_fee(amount: i64) -> i64 {
    (amount + 99) / 100
}

pub(super) fn display(amount: MicroUnits) -> Decimal {
    Decimal::new(amount.value(), 6).normalize()
}

pub(super) fn luhn_check_digit(digits: &str) -> u32 {
    let sum: u32 = digits
        .chars()
        .rev()
        .filter_map(|c| c.to_digit(10))
        .enumerate()
        .map(|(i, d)| {
            if i % 2 == 0 {
                let doubled = d * 2;
                if doubled > 9 {
                    doubled - 9
                } else {
                    doubled
                }
            } else {
                d
            }
        })
        .sum();
    (10 - sum % 10) % 10
}

/// Whether a card number passes the Luhn check.
pub fn passes_luhn(number: &str) -> bool {
    let (body, last) = number.split_at(number.len().saturating_sub(1));
    !body.is_empty()
        && number.bytes().all(|b| b.is_ascii_digit())
        && last.parse::<u32>().ok() == Some(luhn_check_digit(body))
}

/// A 16-digit number of the brand's range that passes Luhn.
pub(super) fn new_pan(brand: &str) -> String {
    let bin = if brand == "mastercard" { "532718" } else { "459234" };
    let mut rng = rand::thread_rng();
    let middle: String = (0..9)
        .map(|_| char::from(b'0' + rng.gen_range(0..10u8)))
        .collect();
    let body = format!("{bin}{middle}");
    let check = luhn_check_digit(&body);
    format!("{body}{check}")
}

pub(super) fn issuer_address() -> BillingAddress {
    BillingAddress {
        line1: "1 Sandbox Way".to_owned(),
        line2: "Suite 200".to_owned(),
        city: "San Francisco".to_owned(),
        state: "CA".to_owned(),
        postal_code: "94105".to_owned(),
        country: "US".to_owned(),
    }
}

pub(super) fn check_limits(limits: &CardLimits) -> Result<(), ApiError> {
    for (key, value) in limits.entries() {
        if value.is_some_and(|v| v.value() <= 0 || v.value() > MAX_AMOUNT) {
            return Err(ApiError::field(
                key,
                "must be a positive integer of micro-units (5000000 = 5.00), or left out for no limit",
            ));
        }
    }
    Ok(())
}

pub(super) fn new_tx(
    card: &Card,
    kind: &str,
    amount: i64,
    fee: i64,
    reference: &str,
    now: DateTime<Utc>,
) -> CardTransaction {
    CardTransaction {
        id: Uuid::new_v4(),
        card_id: card.id,
        kind: kind.to_owned(),
        status: CardTransactionStatus::Pending,
        amount: MicroUnits(amount),
        currency: card.balance_currency.clone(),
        balance_before: card.balance_amount,
        balance_after: card.balance_amount,
        fee_amount: MicroUnits(fee),
        fee_type: if kind == "spend" { "" } else { "funding_fee" }.to_owned(),
        reference: reference.to_owned(),
        merchant_name: String::new(),
        failure_reason: None,
        created_at: now,
        updated_at: now,
        completed_at: None,
    }
}

pub(super) fn push_tx(record: &mut CardRecord, tx: CardTransaction, wallet_tx: Option<Uuid>) {
    let seq = record.transactions.last().map_or(1, |t| t.seq + 1);
    record.transactions.push(TxRecord { seq, tx, wallet_tx });
}

pub(super) fn set_balance(card: &mut Card, balance: i64, now: DateTime<Utc>) {
    card.balance_amount = MicroUnits(balance);
    card.display_amount = display(card.balance_amount);
    card.updated_at = now;
}

pub(super) fn emit(
    company: &Company,
    card: &Card,
    event: &str,
    data: serde_json::Value,
    fx: &mut Effects<'_>,
) {
    let extra: Vec<&str> = Some(card.webhook_url.as_str())
        .filter(|u| !u.is_empty())
        .into_iter()
        .collect();
    fx.outbox
        .emit(company.id, &company.webhook_targets(&extra), event, data, fx.now);
}

/// A card in this state can't be `action` (funded, read, frozen…).
fn unusable(state: &CardState, action: &str) -> Option<ApiError> {
    match state {
        CardState::Terminated => Some(ApiError::unprocessable(
            codes::INVALID_STATE,
            format!("the card is terminated and can't be {action}"),
        )),
        CardState::Pending => Some(ApiError::unprocessable(
            codes::INVALID_STATE,
            format!("the card is still being provisioned; it can be {action} once active"),
        )),
        CardState::Active | CardState::Frozen | CardState::Unknown(_) => None,
    }
}

pub(super) fn usable(card: &Card, action: &str) -> Result<(), ApiError> {
    unusable(&card.status, action).map_or(Ok(()), Err)
}

/// Freezes or unfreezes.
pub fn set_status(
    company: &mut Company,
    card_id: Uuid,
    status: &str,
    now: DateTime<Utc>,
) -> Result<CardStatus, ApiError> {
    let (event, verb) = match status.trim() {
        "frozen" => (CardEvent::Freeze, "frozen"),
        "active" => (CardEvent::Unfreeze, "activated"),
        _ => return Err(ApiError::field("status", "must be frozen or active")),
    };
    let index = company.cards.index(card_id)?;
    let card = &mut company.cards.records[index].card;
    let next = transition(&card.status, event).map_err(|refusal| {
        unusable(&refusal.from, verb).unwrap_or_else(|| {
            ApiError::unprocessable(codes::INVALID_STATE, format!("the card can't be {verb} now"))
        })
    })?;
    if next != card.status {
        card.status = next;
        card.updated_at = now;
    }
    Ok(CardStatus {
        id: card.id,
        status: card.status.clone(),
        card_type: card.card_type.clone(),
        last_four_digit: card.last_four_digit.clone(),
        updated_at: card.updated_at,
    })
}

/// Ends a card and returns its whole balance to the wallet.
fn end(company: &mut Company, index: usize, reason: &str, now: DateTime<Utc>) -> Termination {
    let card = company.cards.records[index].card.clone();
    let remaining = card.balance_amount.value();
    if remaining > 0 {
        let posted = company.ledger.post(
            NewTransaction {
                currency: Currency::parse(FUNDING_WALLET).expect("a valid code"),
                kind: TransactionType::P2pTransfer,
                state: TransactionState::Settled,
                amount: BaseUnits(remaining),
                fee: BaseUnits::ZERO,
                reference: format!("CARD_TERMINATE_{}", card.id),
                idempotency_key: String::new(),
                metadata: json!({"channel": "card", "card_id": card.id, "purpose": "card_termination"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            },
            now,
        );
        if let Err(e) = posted {
            tracing::error!(error = %e, card = %card.id, "the card balance could not be returned");
        }
    }
    let card = &mut company.cards.records[index].card;
    set_balance(card, 0, now);
    card.status = CardState::Terminated;
    card.terminated_at = Some(now);
    card.termination_reason = Some(reason.to_owned());
    Termination {
        card_id: card.id,
        status: CardState::Terminated,
        remaining_balance: MicroUnits(remaining),
        balance_returned: remaining > 0,
        terminated_at: now,
        reason: reason.to_owned(),
    }
}

/// `DELETE /api/cards/{id}`: refused under 24 hours (freeze instead).
pub fn terminate(
    company: &mut Company,
    card_id: Uuid,
    reason: &str,
    now: DateTime<Utc>,
) -> Result<Termination, ApiError> {
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(ApiError::field(
            "reason",
            "is required: say why the card is terminated",
        ));
    }
    let index = company.cards.index(card_id)?;
    let card = &company.cards.records[index].card;
    if transition(&card.status, CardEvent::Terminate).is_err() {
        return Err(ApiError::unprocessable(
            codes::INVALID_STATE,
            "the card is already terminated",
        ));
    }
    let ready_at = card.created_at + Duration::seconds(MIN_AGE_TO_TERMINATE_SECS);
    if now < ready_at {
        return Err(ApiError::unprocessable(
            codes::CARD_TOO_NEW,
            format!(
                "a card can be terminated 24 hours after creation, from {}; freeze it instead until then",
                ready_at.format("%Y-%m-%d %H:%M UTC")
            ),
        ));
    }
    Ok(end(company, index, reason, now))
}

/// A lite card reaches its terminate_date.
pub fn end_lite(company: &mut Company, card_id: Uuid, now: DateTime<Utc>) {
    if let Ok(index) = company.cards.index(card_id) {
        if transition(&company.cards.records[index].card.status, CardEvent::Terminate).is_ok() {
            end(company, index, "terminate_date reached", now);
        }
    }
}

/// The full number, CVV and expiry: 2 reads per 60 s per card.
pub fn secure_details(
    company: &mut Company,
    card_id: Uuid,
    now: DateTime<Utc>,
) -> Result<SecureDetails, ApiError> {
    let index = company.cards.index(card_id)?;
    let record = &mut company.cards.records[index];
    usable(&record.card, "read")?;
    let window = Duration::seconds(SECURE_WINDOW_SECS);
    record.secure_reads.retain(|at| *at + window > now);
    if record.secure_reads.len() >= SECURE_READS_PER_WINDOW {
        let wait = whole_seconds_until(now, record.secure_reads[0] + window);
        return Err(ApiError::RateLimited {
            retry_after_secs: wait,
            detail: format!("card details can be read twice per 60 seconds; try again in {wait} s"),
        });
    }
    record.secure_reads.push(now);
    Ok(SecureDetails {
        card_id,
        card_number: record.pan.clone(),
        cvv: record.cvv.clone(),
        expiry_month: format!("{:02}", record.expiry.0),
        expiry_year: record.expiry.1.to_string(),
        name: record.card.name.clone(),
    })
}

/// Replaces the spend limits (a key left out is no limit).
pub fn set_limits(
    company: &mut Company,
    card_id: Uuid,
    limits: &CardLimits,
    now: DateTime<Utc>,
) -> Result<Card, ApiError> {
    check_limits(limits)?;
    let index = company.cards.index(card_id)?;
    let card = &mut company.cards.records[index].card;
    if card.status == CardState::Terminated {
        return Err(ApiError::unprocessable(
            codes::INVALID_STATE,
            "the card is terminated; its limits can't change",
        ));
    }
    card.spending_limits = limits.clone();
    card.card_limits = limits.clone();
    card.updated_at = now;
    Ok(card.clone())
}

/// Seconds to wait until `at`, rounded up: a client that waits exactly
/// `Retry-After` is let through.
pub(super) fn whole_seconds_until(now: DateTime<Utc>, at: DateTime<Utc>) -> u64 {
    let millis = (at - now).num_milliseconds().max(1);
    ((millis + 999) / 1000) as u64
}
