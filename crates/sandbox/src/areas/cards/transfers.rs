//! Funding and withdrawing: pending for `TRANSFER_SECS`, rate limited
//! per card, settled on the clock.

use chrono::{DateTime, Duration, Utc};
use paydesk_api::models::cards::{
    events, BalanceChange, BalanceDirection, CardState, CardTransaction, CardTransactionStatus,
};
use paydesk_api::models::transactions::{TransactionState, TransactionType};
use paydesk_api::units::{BaseUnits, Currency, MicroUnits};
use paydesk_api::wire::codes;
use serde_json::json;
use uuid::Uuid;

use super::lifecycle::{tx_transition, TxEvent};
use super::model::*;
use crate::error::ApiError;
use crate::ledger::NewTransaction;
use crate::scheduler::Job;
use crate::state::{Company, Effects};

pub(super) fn rate_limit(
    last: Option<DateTime<Utc>>,
    window: i64,
    now: DateTime<Utc>,
    what: &str,
) -> Result<(), ApiError> {
    if let Some(last) = last {
        let open_at = last + Duration::seconds(window);
        if open_at > now {
            let wait = whole_seconds_until(now, open_at);
            return Err(ApiError::RateLimited {
                retry_after_secs: wait,
                detail: format!("{what}; try again in {wait} s"),
            });
        }
    }
    Ok(())
}

/// Starts a fund or withdraw; the transaction completes on the clock.
pub fn change_balance(
    company: &mut Company,
    card_id: Uuid,
    req: &BalanceChange,
    fx: &mut Effects<'_>,
) -> Result<CardTransaction, ApiError> {
    if req.reference.trim().is_empty() {
        return Err(ApiError::field("reference", "is required"));
    }
    let amount = req.amount.value();
    if amount <= 0 || amount > MAX_AMOUNT {
        return Err(ApiError::field(
            "amount",
            "must be a positive integer of micro-units (5000000 = 5.00)",
        ));
    }
    let index = company.cards.index(card_id)?;
    let record = &company.cards.records[index];
    let action = match req.direction {
        BalanceDirection::Fund => "funded",
        BalanceDirection::Withdraw => "withdrawn from",
    };
    usable(&record.card, action)?;
    if record.card.card_type == "lite" {
        return Err(ApiError::unprocessable(
            codes::INVALID_STATE,
            "lite cards can only be spent and terminated; they can't be funded or withdrawn from",
        ));
    }
    let fee = funding_fee(amount);
    let wallet = Currency::parse(FUNDING_WALLET).expect("a valid code");
    let (kind, wallet_tx) = match req.direction {
        BalanceDirection::Fund => {
            rate_limit(
                record.last_fund,
                FUND_WINDOW_SECS,
                fx.now,
                "a card can be funded once per 30 seconds",
            )?;
            let tx_id = company
                .ledger
                .post(
                    NewTransaction {
                        currency: wallet,
                        kind: TransactionType::P2pTransfer,
                        state: TransactionState::Pending,
                        amount: BaseUnits(-amount),
                        fee: BaseUnits(fee),
                        reference: format!("CARD_FUND_{}", Uuid::new_v4().simple()),
                        idempotency_key: req.reference.clone(),
                        metadata: json!({"channel": "card", "card_id": card_id, "purpose": "card_funding"})
                            .as_object()
                            .cloned()
                            .unwrap_or_default(),
                    },
                    fx.now,
                )?
                .transaction_id;
            ("funding", Some(tx_id))
        }
        BalanceDirection::Withdraw => {
            rate_limit(
                record.last_withdraw,
                WITHDRAW_WINDOW_SECS,
                fx.now,
                "a card allows one withdrawal per 60 seconds",
            )?;
            if record.card.balance_amount.value() < amount {
                return Err(ApiError::unprocessable(
                    codes::INSUFFICIENT_BALANCE,
                    format!(
                        "the card holds {} micro-units, less than the {amount} asked",
                        record.card.balance_amount.value()
                    ),
                ));
            }
            ("withdrawal", None)
        }
    };
    let record = &mut company.cards.records[index];
    match req.direction {
        BalanceDirection::Fund => record.last_fund = Some(fx.now),
        BalanceDirection::Withdraw => record.last_withdraw = Some(fx.now),
    }
    let tx = new_tx(&record.card, kind, amount, fee, &req.reference, fx.now);
    push_tx(record, tx.clone(), wallet_tx);
    fx.scheduler.schedule(
        fx.now + Duration::seconds(TRANSFER_SECS),
        Job::SettleCardTransfer {
            company_id: company.id,
            card_id,
            transaction_id: tx.id,
        },
    );
    Ok(tx)
}

/// A pending fund or withdraw completes (or fails when the card can no
/// longer take it).
pub fn settle_transfer(company: &mut Company, card_id: Uuid, tx_id: Uuid, fx: &mut Effects<'_>) {
    let Ok(index) = company.cards.index(card_id) else {
        return;
    };
    let record = &company.cards.records[index];
    let Some(t) = record
        .transactions
        .iter()
        .position(|t| t.tx.id == tx_id && t.tx.status == CardTransactionStatus::Pending)
    else {
        return;
    };
    let TxRecord { tx, wallet_tx, .. } = record.transactions[t].clone();
    let balance = record.card.balance_amount.value();
    let amount = tx.amount.value();
    let terminated = record.card.status == CardState::Terminated;
    let wallet = Currency::parse(FUNDING_WALLET).expect("a valid code");
    let failure = if terminated {
        Some("the card was terminated before the transfer completed")
    } else if tx.kind == "withdrawal" && balance < amount {
        Some("the card balance fell below the amount before the withdrawal completed")
    } else {
        None
    };
    let after = match (failure, tx.kind.as_str()) {
        (Some(_), _) => balance,
        (None, "funding") => balance + amount,
        (None, _) => balance - amount,
    };
    if let Some(wallet_tx) = wallet_tx {
        let state = if failure.is_some() {
            TransactionState::Failed
        } else {
            TransactionState::Settled
        };
        if let Err(e) = company
            .ledger
            .transition(wallet_tx, TransactionType::P2pTransfer, state, fx.now)
        {
            tracing::error!(error = %e, card = %card_id, "card funding could not be settled in the ledger");
        }
    } else if failure.is_none() {
        let credit = company.ledger.post(
            NewTransaction {
                currency: wallet,
                kind: TransactionType::P2pTransfer,
                state: TransactionState::Settled,
                amount: BaseUnits(amount),
                // A card micro-unit equals a USDT base unit (1 USD = 1 USDT).
                fee: BaseUnits(tx.fee_amount.value()),
                reference: format!("CARD_WITHDRAW_{}", tx.id.simple()),
                idempotency_key: tx.reference.clone(),
                metadata: json!({"channel": "card", "card_id": card_id, "purpose": "card_withdrawal"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            },
            fx.now,
        );
        if let Err(e) = credit {
            tracing::error!(error = %e, card = %card_id, "card withdrawal could not be credited");
        }
    }
    let record = &mut company.cards.records[index];
    if failure.is_none() {
        set_balance(&mut record.card, after, fx.now);
    }
    let t = &mut record.transactions[t].tx;
    let event = if failure.is_some() {
        TxEvent::Fail
    } else {
        TxEvent::Complete
    };
    if let Ok(next) = tx_transition(&t.status, event) {
        t.status = next;
    }
    t.balance_before = MicroUnits(balance);
    t.balance_after = MicroUnits(after);
    t.failure_reason = failure.map(str::to_owned);
    t.updated_at = fx.now;
    t.completed_at = Some(fx.now);
    let t = t.clone();
    let card = record.card.clone();
    let event = if t.kind == "funding" {
        events::TOPUP
    } else {
        events::WITHDRAWAL
    };
    emit(company, &card, event, json!(t), fx);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_rounds_up_so_waiting_that_long_is_enough() {
        let now = Utc::now();
        assert_eq!(whole_seconds_until(now, now + Duration::milliseconds(9_001)), 10);
        assert_eq!(whole_seconds_until(now, now + Duration::seconds(9)), 9);
        assert_eq!(whole_seconds_until(now, now + Duration::milliseconds(1)), 1);
    }
}
