//! A merchant's authorization: declined (nothing moves) when the card is
//! not active, over its balance or a limit, or out of swipes.

use chrono::{DateTime, Datelike, Duration, Utc};
use paydesk_api::models::cards::{events, CardTransactionStatus, SimulateSpend, SpendOutcome};
use paydesk_api::units::MicroUnits;
use serde_json::json;
use uuid::Uuid;

use super::lifecycle::{tx_transition, TxEvent};
use super::model::*;
use crate::error::ApiError;
use crate::state::{Company, Effects};

/// Completed spends within a window, for the limits.
fn spent_since(record: &CardRecord, keep: impl Fn(DateTime<Utc>) -> bool) -> i64 {
    record
        .transactions
        .iter()
        .filter(|t| {
            t.tx.kind == "spend" && t.tx.status == CardTransactionStatus::Completed && keep(t.tx.created_at)
        })
        .map(|t| t.tx.amount.value())
        .sum()
}

fn decline_reason(record: &CardRecord, amount: i64, now: DateTime<Utc>) -> Option<String> {
    let card = &record.card;
    match card.status.as_str() {
        "frozen" => return Some("the card is frozen".to_owned()),
        "pending" => return Some("the card is not active yet".to_owned()),
        "terminated" => return Some("the card is terminated".to_owned()),
        _ => {}
    }
    if card.swipes_remaining == Some(0) {
        return Some("the lite card has used all its swipes".to_owned());
    }
    if amount > card.balance_amount.value() {
        return Some("insufficient card balance".to_owned());
    }
    let l = &card.card_limits;
    let windows: [(&str, Option<MicroUnits>, i64); 6] = [
        ("transaction_limit", l.transaction_limit, 0),
        (
            "daily_limit",
            l.daily_limit,
            spent_since(record, |t| t.date_naive() == now.date_naive()),
        ),
        (
            "weekly_limit",
            l.weekly_limit,
            spent_since(record, |t| t > now - Duration::days(7)),
        ),
        (
            "monthly_limit",
            l.monthly_limit,
            spent_since(record, |t| (t.year(), t.month()) == (now.year(), now.month())),
        ),
        (
            "yearly_limit",
            l.yearly_limit,
            spent_since(record, |t| t.year() == now.year()),
        ),
        ("all_time_limit", l.all_time_limit, spent_since(record, |_| true)),
    ];
    windows.iter().find_map(|(key, limit, spent)| {
        limit
            .filter(|limit| spent + amount > limit.value())
            .map(|_| format!("the spend would exceed the card's {key}"))
    })
}

/// A card authorization (control API): approved and debited, or declined
/// with nothing moved.
pub fn spend(
    company: &mut Company,
    card_id: Uuid,
    req: &SimulateSpend,
    fx: &mut Effects<'_>,
) -> Result<SpendOutcome, ApiError> {
    let amount = req.amount.value();
    if amount <= 0 || amount > MAX_AMOUNT {
        return Err(ApiError::field(
            "amount",
            "must be a positive integer of micro-units",
        ));
    }
    let index = company.cards.index(card_id)?;
    let record = &mut company.cards.records[index];
    let reason = decline_reason(record, amount, fx.now);
    let mut tx = new_tx(&record.card, "spend", amount, 0, "", fx.now);
    tx.merchant_name = req
        .merchant
        .clone()
        .unwrap_or_else(|| "Sandbox Merchant".to_owned());
    tx.reference = format!("SPEND_{}", tx.id.simple());
    tx.completed_at = Some(fx.now);
    let event = if reason.is_some() {
        TxEvent::Fail
    } else {
        TxEvent::Complete
    };
    if let Ok(next) = tx_transition(&tx.status, event) {
        tx.status = next;
    }
    match &reason {
        Some(why) => {
            tx.failure_reason = Some(why.clone());
        }
        None => {
            let after = record.card.balance_amount.value() - amount;
            set_balance(&mut record.card, after, fx.now);
            if let Some(left) = record.card.swipes_remaining.as_mut() {
                *left -= 1;
            }
            tx.balance_after = MicroUnits(after);
        }
    }
    push_tx(record, tx.clone(), None);
    if reason.is_none() {
        let card = record.card.clone();
        emit(company, &card, events::DEBIT, json!(tx), fx);
    }
    Ok(SpendOutcome {
        approved: reason.is_none(),
        decline_reason: reason,
        transaction: tx,
    })
}
