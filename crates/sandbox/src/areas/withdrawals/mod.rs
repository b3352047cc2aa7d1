//! On-chain withdrawals (open-paths.md; sandbox-rules.md). The destination
//! must pass its chain's checksum (else 400). The wallet holds amount + fee
//! at once in a WITHDRAWAL_INITIATED / PENDING transaction; 10 s later the
//! withdrawal is broadcast (IN_PROGRESS, `processing`, a `tx_hash`), and
//! 60 s after that it settles (SETTLED, `completed`, `transfer.success`).
//!
//! Decisions where the documents are silent: fees are fixed per currency
//! (BTC 1,000 sat, USDT and USDC 1.00); a `memo` of `fail` is the test
//! value for a withdrawal that fails on chain: it becomes
//! WITHDRAWAL_FAILED / REVERSED, the hold is released (nothing leaves the
//! wallet) and `transfer.failed` is emitted. Idempotent by `reference`.

pub mod book;
mod lifecycle;

use actix_web::http::StatusCode;
use actix_web::web::{Data, Path};
use chrono::Duration;
use paydesk_api::models::events::names;
use paydesk_api::models::transactions::{TransactionState, TransactionType};
use paydesk_api::models::withdrawals::WithdrawalStatus;
use paydesk_api::models::withdrawals::{CreatedWithdrawal, NewWithdrawal, Withdrawal, WithdrawalPage};
use paydesk_api::units::{BaseUnits, Currency};
use serde_json::json;
use uuid::Uuid;

use super::addresses::parse_chain;
use crate::chains::{self, Chain};
use crate::error::ApiError;
use crate::ledger::NewTransaction;
use crate::pagination::paginate;
use crate::respond::{answer, parse_id, Caller, JsonAnswer, JsonBody, QueryParams};
use crate::scheduler::Job;
use crate::state::{Company, Effects, Shared};
use book::Record;
pub use book::WithdrawalBook;
use lifecycle::{transition, WithdrawalEvent};

pub const BROADCAST_SECS: i64 = 10;
pub const SETTLE_SECS: i64 = 60;
/// Test value: a withdrawal with this memo fails on chain.
const FAILING_MEMO: &str = "fail";

/// The network fee of one withdrawal, in base units.
pub fn fee_for(currency: &str) -> i64 {
    match currency {
        "BTC" => 1_000,
        _ => 1_000_000,
    }
}

/// Checks the request and holds amount + fee in the wallet.
pub fn create(
    company: &mut Company,
    req: &NewWithdrawal,
    fx: &mut Effects<'_>,
) -> Result<Withdrawal, ApiError> {
    if req.reference.trim().is_empty() {
        return Err(ApiError::field("reference", "is required"));
    }
    let chain = parse_chain("chain", &req.chain)?;
    let currency = Currency::parse(&req.currency).map_err(|e| ApiError::field("currency", e.to_string()))?;
    let carried = match chain {
        Chain::Bitcoin => currency.code() == "BTC",
        Chain::Bsc => false,
        _ => chain.stablecoins().iter().any(|(s, _)| *s == currency.code()),
    };
    if !carried {
        return Err(ApiError::field(
            "currency",
            format!("{currency} can't be withdrawn on {}", chain.name()),
        ));
    }
    let to_address = req.to_address.trim().to_owned();
    chains::validate_address(chain, &to_address)
        .map_err(|reason| ApiError::field("to_address", format!("{reason} for {}", chain.name())))?;
    if req.amount.value() <= 0 {
        return Err(ApiError::field(
            "amount",
            "must be a positive integer in base units",
        ));
    }
    let fee = fee_for(currency.code());
    let id = Uuid::new_v4();
    let memo = req.memo.clone().unwrap_or_default();
    let tx = company
        .ledger
        .post(
            NewTransaction {
                currency: currency.clone(),
                kind: TransactionType::WithdrawalInitiated,
                state: TransactionState::Pending,
                amount: BaseUnits(-req.amount.value()),
                fee: BaseUnits(fee),
                reference: req.reference.clone(),
                idempotency_key: req.reference.clone(),
                metadata: json!({"withdrawal_id": id, "chain": chain.name(), "to_address": to_address, "channel": "blockchain"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            },
            fx.now,
        )?
        .transaction_id;
    let withdrawal = Withdrawal {
        id,
        transaction_id: tx,
        reference: req.reference.clone(),
        currency: currency.code().to_owned(),
        chain: chain.name().to_owned(),
        to_address,
        memo,
        amount: req.amount,
        fee: BaseUnits(fee),
        status: WithdrawalStatus::Pending,
        tx_hash: String::new(),
        failure_reason: None,
        created_at: fx.now,
        updated_at: fx.now,
        completed_at: None,
    };
    let seq = company.withdrawals.records.last().map_or(1, |r| r.seq + 1);
    company.withdrawals.records.push(Record {
        seq,
        withdrawal: withdrawal.clone(),
    });
    fx.scheduler.schedule(
        fx.now + Duration::seconds(BROADCAST_SECS),
        Job::AdvanceWithdrawal {
            company_id: company.id,
            withdrawal_id: id,
        },
    );
    Ok(withdrawal)
}

/// The chain's next step: broadcast, then settle or fail.
pub fn advance(company: &mut Company, id: Uuid, fx: &mut Effects<'_>) {
    let Ok(index) = company.withdrawals.index(id) else {
        return;
    };
    let w = company.withdrawals.records[index].withdrawal.clone();
    let step = match w.status {
        WithdrawalStatus::Pending => {
            let chain = Chain::parse(&w.chain).expect("stored chains parse");
            let hash = chains::random_tx_hash(chain, &mut rand::thread_rng());
            Some((
                WithdrawalEvent::Broadcast,
                TransactionType::WithdrawalInitiated,
                TransactionState::InProgress,
                Some(hash),
            ))
        }
        WithdrawalStatus::Processing if w.memo.trim().eq_ignore_ascii_case(FAILING_MEMO) => Some((
            WithdrawalEvent::Fail,
            TransactionType::WithdrawalFailed,
            TransactionState::Reversed,
            None,
        )),
        WithdrawalStatus::Processing => Some((
            WithdrawalEvent::Settle,
            TransactionType::WithdrawalInitiated,
            TransactionState::Settled,
            None,
        )),
        _ => None,
    };
    let Some((event, kind, state, hash)) = step else {
        return;
    };
    let Ok(status) = transition(&w.status, event) else {
        return;
    };
    if let Err(e) = company.ledger.transition(w.transaction_id, kind, state, fx.now) {
        tracing::error!(error = %e, withdrawal = %id, "withdrawal could not move in the ledger");
        return;
    }
    let record = &mut company.withdrawals.records[index].withdrawal;
    record.status = status.clone();
    record.updated_at = fx.now;
    if let Some(hash) = hash {
        record.tx_hash = hash;
    }
    match status {
        WithdrawalStatus::Processing => fx.scheduler.schedule(
            fx.now + Duration::seconds(SETTLE_SECS),
            Job::AdvanceWithdrawal {
                company_id: company.id,
                withdrawal_id: id,
            },
        ),
        WithdrawalStatus::Failed => {
            record.failure_reason =
                Some("the network rejected the transfer; nothing left the wallet".to_owned());
            record.completed_at = Some(fx.now);
        }
        _ => record.completed_at = Some(fx.now),
    }
    let record = record.clone();
    let event = match status {
        WithdrawalStatus::Completed => names::TRANSFER_SUCCESS,
        WithdrawalStatus::Failed => names::TRANSFER_FAILED,
        _ => return,
    };
    let data = serde_json::to_value(&record).unwrap_or_default();
    fx.outbox
        .emit(company.id, &company.webhook_targets(&[]), event, data, fx.now);
}

/// `POST /api/withdrawals`, and `POST /api/wallets/transfers`, the
/// official client's form of the same operation (its `address` is read as
/// `to_address`): one operation, one reference space, so a reference
/// sent on both paths is one withdrawal. The answer carries the
/// destination again as `address`.
pub async fn create_handler(
    shared: Data<Shared>,
    caller: Caller,
    body: JsonBody<NewWithdrawal>,
) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, mut fx) = store.company(caller.company_id, now)?;
    let reference = body.value.reference.trim().to_owned();
    company.once("withdrawal", &reference, &body.canonical, |company| {
        let w = create(company, &body.value, &mut fx)?;
        Ok(answer(
            StatusCode::CREATED,
            "Withdrawal initiated",
            CreatedWithdrawal::new(w),
            &caller,
            now,
        ))
    })
}

/// `GET /api/withdrawals` with `status`, `currency`, cursor and limit.
pub async fn list(shared: Data<Shared>, caller: Caller, q: QueryParams) -> Result<JsonAnswer, ApiError> {
    q.known(&["status", "currency"])?;
    let limit = q.limit(20, 100)?;
    let status = q.one_of("status", &["pending", "processing", "completed", "failed"])?;
    let currency = q.get("currency").map(str::to_ascii_uppercase);
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let page = paginate(
        &company.withdrawals.records,
        |r| {
            status
                .as_deref()
                .is_none_or(|s| r.withdrawal.status.as_str() == s)
                && currency.as_deref().is_none_or(|c| r.withdrawal.currency == c)
        },
        q.at()?,
        limit,
    )?;
    let data = WithdrawalPage {
        withdrawals: page.items.iter().map(|r| r.withdrawal.clone()).collect(),
        next_cursor: page.next_cursor,
        previous_cursor: page.previous_cursor,
        has_more: page.has_more,
        total_count: page.total as u64,
    };
    Ok(answer(
        StatusCode::OK,
        "Withdrawals retrieved",
        data,
        &caller,
        now,
    ))
}

/// `GET /api/withdrawals/{id}`.
pub async fn get(shared: Data<Shared>, caller: Caller, id: Path<String>) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let index = company.withdrawals.index(id)?;
    let w = company.withdrawals.records[index].withdrawal.clone();
    Ok(answer(StatusCode::OK, "Withdrawal retrieved", w, &caller, now))
}
