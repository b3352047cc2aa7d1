//! Bulk transfers as plain functions (open-paths.md; bodies are ours): a
//! batch of crypto payments in one currency, each to an address or a saved
//! crypto beneficiary. Every item is checked on its own (its errors listed
//! with it), so one bad row never stops, loses or duplicates another: at
//! confirm the invalid items are `skipped` and each valid one becomes an
//! on-chain withdrawal (`withdrawals/`: same fee, same clock, same
//! webhooks) whose status the item shows. Retry re-sends the failed items
//! only, each under a new withdrawal reference.
//!
//! Decisions where the documents are silent: confirm is refused (422,
//! nothing sent) when the wallet can't pay every valid item with its fee;
//! bank beneficiaries are refused (pay them with payouts); a batch has at
//! most 1,000 items; CSV has a header naming its columns (`address`,
//! `chain`, `beneficiary_id`, `amount`, `reference`, `memo`; any order),
//! fields without quotes.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use paydesk_api::models::beneficiaries::Destination;
use paydesk_api::models::bulk::{Batch, BatchPreview, BatchTotals, BulkItem, BulkItemInput, NewBatch};
use paydesk_api::models::bulk::{BatchStatus, BulkItemStatus};
use paydesk_api::models::withdrawals::NewWithdrawal;
use paydesk_api::units::{BaseUnits, Currency};
use paydesk_api::wire::codes;
use uuid::Uuid;

use super::book::BatchRecord;
use super::lifecycle::{batch_transition, item_transition, BatchEvent, ItemEvent, Progress};
use crate::areas::addresses::parse_chain;
use crate::areas::withdrawals;
use crate::chains::{self, Chain};
use crate::error::ApiError;
use crate::state::{Company, Effects};

pub const MAX_ITEMS: usize = 1_000;

/// An item's fields as text, from CSV or inline.
#[derive(Debug, Default)]
struct RawItem {
    address: String,
    chain: String,
    beneficiary_id: String,
    amount: String,
    reference: String,
    memo: String,
}

impl From<&BulkItemInput> for RawItem {
    fn from(i: &BulkItemInput) -> Self {
        RawItem {
            address: i.address.clone().unwrap_or_default(),
            chain: i.chain.clone().unwrap_or_default(),
            beneficiary_id: i.beneficiary_id.map(|b| b.to_string()).unwrap_or_default(),
            amount: i.amount.value().to_string(),
            reference: i.reference.clone(),
            memo: i.memo.clone().unwrap_or_default(),
        }
    }
}

fn parse_csv(text: &str) -> Result<Vec<RawItem>, ApiError> {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let header: Vec<String> = lines
        .next()
        .ok_or_else(|| ApiError::field("csv", "is empty; send a header line and one line per payment"))?
        .split(',')
        .map(|h| h.trim().to_ascii_lowercase())
        .collect();
    for needed in ["amount", "reference"] {
        if !header.iter().any(|h| h == needed) {
            return Err(ApiError::field(
                "csv",
                format!("the header must name a `{needed}` column (columns: address, chain, beneficiary_id, amount, reference, memo)"),
            ));
        }
    }
    Ok(lines
        .map(|line| {
            let cells: Vec<&str> = line.split(',').map(str::trim).collect();
            let mut item = RawItem::default();
            for (name, cell) in header.iter().zip(cells) {
                let cell = cell.to_owned();
                match name.as_str() {
                    "address" => item.address = cell,
                    "chain" => item.chain = cell,
                    "beneficiary_id" => item.beneficiary_id = cell,
                    "amount" => item.amount = cell,
                    "reference" => item.reference = cell,
                    "memo" => item.memo = cell,
                    _ => {}
                }
            }
            item
        })
        .collect())
}

/// Checks one item; its problems are listed, not raised.
fn check_item(
    company: &Company,
    currency: &Currency,
    raw: &RawItem,
    row: u32,
    seen: &mut HashMap<String, u32>,
) -> BulkItem {
    let mut errors = Vec::new();
    let reference = raw.reference.trim().to_owned();
    if reference.is_empty() {
        errors.push("reference: is required".to_owned());
    } else if let Some(first) = seen.get(&reference) {
        errors.push(format!("reference: '{reference}' repeats row {first}"));
    } else {
        seen.insert(reference.clone(), row);
    }
    let amount = match raw.amount.trim().parse::<i64>() {
        Ok(a) if a > 0 => a,
        _ => {
            errors.push(format!(
                "amount: '{}' is not a positive integer of base units",
                raw.amount.trim()
            ));
            0
        }
    };
    let mut beneficiary_id = None;
    let (address, chain_name) = match (raw.beneficiary_id.trim(), raw.address.trim()) {
        ("", "") => {
            errors.push("give an address and chain, or a beneficiary_id".to_owned());
            (String::new(), String::new())
        }
        (id, "") => match Uuid::parse_str(id)
            .ok()
            .and_then(|id| company.beneficiaries.find(id))
        {
            Some(b) if !b.is_active || b.is_blacklisted => {
                errors.push(format!("beneficiary_id: {} is inactive or blacklisted", b.id));
                (String::new(), String::new())
            }
            Some(b) => {
                beneficiary_id = Some(b.id);
                match &b.destination {
                    Destination::Crypto { address, chain } => (address.clone(), chain.clone()),
                    Destination::Account { .. } => {
                        errors.push(format!(
                            "beneficiary_id: {} is a bank account; pay it with a payout",
                            b.id
                        ));
                        (String::new(), String::new())
                    }
                }
            }
            None => {
                errors.push(format!("beneficiary_id: no saved beneficiary '{id}'"));
                (String::new(), String::new())
            }
        },
        ("", address) => (address.to_owned(), raw.chain.trim().to_owned()),
        _ => {
            errors.push("give an address or a beneficiary_id, not both".to_owned());
            (String::new(), String::new())
        }
    };
    let mut chain_shown = chain_name.clone();
    if !address.is_empty() {
        match parse_chain("chain", &chain_name) {
            Ok(chain) => {
                chain_shown = chain.name().to_owned();
                let carried = match chain {
                    Chain::Bitcoin => currency.code() == "BTC",
                    Chain::Bsc => false,
                    _ => chain.stablecoins().iter().any(|(s, _)| *s == currency.code()),
                };
                if !carried {
                    errors.push(format!("chain: {currency} can't be sent on {}", chain.name()));
                } else if let Err(reason) = chains::validate_address(chain, &address) {
                    errors.push(format!("address: {reason} for {}", chain.name()));
                }
            }
            Err(e) => errors.push(e.to_string()),
        }
    }
    BulkItem {
        id: Uuid::new_v4(),
        row,
        address,
        chain: chain_shown,
        beneficiary_id,
        amount: BaseUnits(amount),
        fee: BaseUnits(withdrawals::fee_for(currency.code())),
        reference,
        memo: raw.memo.trim().to_owned(),
        status: if errors.is_empty() {
            BulkItemStatus::Valid
        } else {
            BulkItemStatus::Invalid
        },
        errors,
        withdrawal_id: None,
        attempts: 0,
        failure_reason: None,
    }
}

fn totals(items: &[BulkItem]) -> BatchTotals {
    let valid: Vec<&BulkItem> = items.iter().filter(|i| i.errors.is_empty()).collect();
    let amount: i64 = valid.iter().map(|i| i.amount.value()).sum();
    let fees: i64 = valid.iter().map(|i| i.fee.value()).sum();
    BatchTotals {
        items: items.len() as u32,
        valid_items: valid.len() as u32,
        invalid_items: (items.len() - valid.len()) as u32,
        amount: BaseUnits(amount),
        fees: BaseUnits(fees),
        total: BaseUnits(amount + fees),
    }
}

/// Checks a batch's items; stores nothing.
pub fn preview(company: &Company, req: &NewBatch) -> Result<BatchPreview, ApiError> {
    let currency = Currency::parse(&req.currency)
        .ok()
        .filter(|c| matches!(c.code(), "BTC" | "USDT" | "USDC"))
        .ok_or_else(|| ApiError::field("currency", "must be BTC, USDT or USDC"))?;
    let raw: Vec<RawItem> = match (&req.csv, req.items.is_empty()) {
        (Some(csv), true) => parse_csv(csv)?,
        (None, false) => req.items.iter().map(RawItem::from).collect(),
        (Some(_), false) => return Err(ApiError::invalid("send items or csv, not both")),
        (None, true) => return Err(ApiError::field("items", "send at least one item, or csv")),
    };
    if raw.is_empty() {
        return Err(ApiError::field("csv", "has a header but no payments"));
    }
    if raw.len() > MAX_ITEMS {
        return Err(ApiError::field(
            "items",
            format!("a batch has at most {MAX_ITEMS} items"),
        ));
    }
    let mut seen = HashMap::new();
    let items: Vec<BulkItem> = raw
        .iter()
        .enumerate()
        .map(|(i, r)| check_item(company, &currency, r, i as u32 + 1, &mut seen))
        .collect();
    Ok(BatchPreview {
        currency: currency.code().to_owned(),
        totals: totals(&items),
        items,
    })
}

/// Stores a draft batch, invalid items and all.
pub fn create(
    company: &mut Company,
    req: &NewBatch,
    now: DateTime<Utc>,
    schedule_id: Option<Uuid>,
) -> Result<Batch, ApiError> {
    let preview = preview(company, req)?;
    let batch = Batch {
        id: Uuid::new_v4(),
        company_id: company.id,
        currency: preview.currency,
        reference: req.reference.clone(),
        description: req.description.clone().unwrap_or_default(),
        status: BatchStatus::Draft,
        items: preview.items,
        totals: preview.totals,
        schedule_id,
        created_at: now,
        updated_at: now,
        confirmed_at: None,
    };
    let seq = company.batches.records.last().map_or(1, |r| r.seq + 1);
    company.batches.records.push(BatchRecord {
        seq,
        batch: batch.clone(),
    });
    Ok(batch)
}

fn ensure_funds(company: &Company, currency: &str, needed: i64) -> Result<(), ApiError> {
    let code = Currency::parse(currency).map_err(|e| ApiError::invalid(e.to_string()))?;
    let available = company
        .ledger
        .account(&code)
        .map_or(0, |a| a.available_balance().value());
    if available < needed {
        return Err(ApiError::unprocessable(
            codes::INSUFFICIENT_BALANCE,
            format!(
                "the {code} wallet holds {} but the batch needs {} with fees; nothing was sent",
                BaseUnits(available).formatted(&code),
                BaseUnits(needed).formatted(&code)
            ),
        ));
    }
    Ok(())
}

/// Sends items (by index) as withdrawals, each under its own reference.
fn send(company: &mut Company, index: usize, items: &[usize], fx: &mut Effects<'_>) -> Result<(), ApiError> {
    for &i in items {
        let b = &company.batches.records[index].batch;
        let item = &b.items[i];
        let attempt = item.attempts + 1;
        let reference = match attempt {
            1 => format!("BULK_{}_{}", b.id.simple(), item.reference),
            n => format!("BULK_{}_{}_RETRY_{}", b.id.simple(), item.reference, n - 1),
        };
        let request = NewWithdrawal {
            to_address: item.address.clone(),
            amount: item.amount,
            currency: b.currency.clone(),
            chain: item.chain.clone(),
            reference,
            memo: Some(item.memo.clone()).filter(|m| !m.is_empty()),
        };
        let sent = item_transition(&item.status, ItemEvent::Send).map_err(|refusal| {
            ApiError::unprocessable(
                codes::INVALID_STATE,
                format!("the item is {}; it can't be sent", refusal.from),
            )
        })?;
        let w = withdrawals::create(company, &request, fx)?;
        let item = &mut company.batches.records[index].batch.items[i];
        item.withdrawal_id = Some(w.id);
        item.attempts = attempt;
        item.status = sent;
        item.failure_reason = None;
    }
    Ok(())
}

/// Confirms a draft: skips the invalid items and sends the valid ones.
pub fn confirm(company: &mut Company, id: Uuid, fx: &mut Effects<'_>) -> Result<Batch, ApiError> {
    let index = company.batches.index(id)?;
    let batch = company.batches.records[index].batch.clone();
    let confirmed = batch_transition(&batch.status, BatchEvent::Confirm).map_err(|refusal| {
        ApiError::unprocessable(
            codes::INVALID_STATE,
            format!("the batch is {}; only a draft can be confirmed", refusal.from),
        )
    })?;
    if batch.totals.valid_items == 0 {
        return Err(ApiError::unprocessable(
            codes::INVALID_STATE,
            "no item of the batch is valid; correct them in a new batch",
        ));
    }
    ensure_funds(company, &batch.currency, batch.totals.total.value())?;
    let valid: Vec<usize> = (0..batch.items.len())
        .filter(|i| batch.items[*i].errors.is_empty())
        .collect();
    send(company, index, &valid, fx)?;
    let b = &mut company.batches.records[index].batch;
    for item in b.items.iter_mut().filter(|i| !i.errors.is_empty()) {
        if let Ok(skipped) = item_transition(&item.status, ItemEvent::Skip) {
            item.status = skipped;
        }
    }
    b.status = confirmed;
    b.confirmed_at = Some(fx.now);
    b.updated_at = fx.now;
    Ok(b.clone())
}

/// Re-sends the failed items only.
pub fn retry(company: &mut Company, id: Uuid, fx: &mut Effects<'_>) -> Result<Batch, ApiError> {
    let index = company.batches.index(id)?;
    refresh(company, index);
    let batch = company.batches.records[index].batch.clone();
    let failed: Vec<usize> = (0..batch.items.len())
        .filter(|i| batch.items[*i].status == BulkItemStatus::Failed)
        .collect();
    if failed.is_empty() {
        return Err(ApiError::unprocessable(
            codes::INVALID_STATE,
            "no item of the batch has failed; there is nothing to retry",
        ));
    }
    let needed: i64 = failed
        .iter()
        .map(|i| batch.items[*i].amount.value() + batch.items[*i].fee.value())
        .sum();
    ensure_funds(company, &batch.currency, needed)?;
    send(company, index, &failed, fx)?;
    refresh(company, index);
    company.batches.records[index].batch.updated_at = fx.now;
    Ok(company.batches.records[index].batch.clone())
}

/// Brings the items' statuses up to their withdrawals' and sums up.
pub fn refresh(company: &mut Company, index: usize) {
    let Company {
        batches, withdrawals, ..
    } = company;
    let b = &mut batches.records[index].batch;
    // A draft's items have sent nothing to follow.
    if b.status == BatchStatus::Draft {
        return;
    }
    for item in b.items.iter_mut() {
        if let Some(w) = item.withdrawal_id.and_then(|id| withdrawals.get(id)) {
            if let Ok(next) = item_transition(&item.status, ItemEvent::Follow(w.status.clone())) {
                item.status = next;
            }
            item.failure_reason = w.failure_reason.clone();
        }
    }
    let sent = b
        .items
        .iter()
        .map(|i| &i.status)
        .filter(|s| **s != BulkItemStatus::Skipped);
    if let Ok(next) = batch_transition(&b.status, BatchEvent::ItemsMoved(Progress::of(sent))) {
        b.status = next;
    }
}

/// A batch as it stands now.
pub fn get(company: &mut Company, id: Uuid) -> Result<Batch, ApiError> {
    let index = company.batches.index(id)?;
    refresh(company, index);
    Ok(company.batches.records[index].batch.clone())
}
