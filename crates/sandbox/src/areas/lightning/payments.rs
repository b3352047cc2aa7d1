//! Paying invoices: an invoice of another company of this sandbox settles
//! (at once, or after a hold for the test values), any other has no route
//! and fails; an outside payer settles one of ours.

use chrono::{DateTime, Duration, TimeZone, Utc};
use paydesk_api::models::events::names;
use paydesk_api::models::lightning::{
    Invoice, InvoiceStatus, Payment, PaymentPreview, PaymentStatus, SendPayment,
};
use paydesk_api::models::transactions::{TransactionState, TransactionType};
use paydesk_api::time::wire;
use paydesk_api::units::{BaseUnits, Currency, Sats};
use paydesk_api::wire::codes;
use serde_json::json;
use uuid::Uuid;

use super::bolt11::Decoded;
use super::book::{LightningBook, Record};
use super::invoices::{decode, msat};
use super::lifecycle::{transition, InvoiceEvent, Refusal};
use crate::error::ApiError;
use crate::ledger::NewTransaction;
use crate::scheduler::Job;
use crate::state::{Company, Store};

/// 1 sat + 0.1% of the amount, rounded up.
pub fn routing_fee(amount_sat: i64) -> i64 {
    1 + (amount_sat + 999) / 1000
}

/// The company and invoice an invoice of this sandbox belongs to, when
/// another company of it could settle it.
fn route(store: &Store, payer: Uuid, d: &Decoded) -> Option<(Uuid, Uuid)> {
    if d.payee != store.node.key.id() {
        return None;
    }
    store
        .node
        .by_hash
        .get(&d.payment_hash)
        .copied()
        .filter(|(company, _)| *company != payer)
}

fn sats_of(d: &Decoded) -> i64 {
    (d.amount_msat.div_ceil(1000)) as i64
}

pub fn preview(
    store: &Store,
    payer: Uuid,
    request: &str,
    now: DateTime<Utc>,
) -> Result<PaymentPreview, ApiError> {
    let d = decode(request)?;
    let amount = sats_of(&d);
    let routed = amount > 0
        && route(store, payer, &d).is_some_and(|(company, invoice)| {
            store.companies.get(&company).is_some_and(|c| {
                c.lightning
                    .index(invoice)
                    .is_some_and(|i| payable(&c.lightning.records[i], now).is_ok())
            })
        });
    let fee = if routed { routing_fee(amount) } else { 0 };
    Ok(PaymentPreview {
        amount_sat: Sats(amount),
        fee_sat: Sats(fee),
        total_sat: Sats(amount + fee),
        is_expired: now.timestamp() >= d.expires_at,
        route_found: routed,
        payment_hash: d.payment_hash,
        destination: d.payee,
        description: d.description,
        expires_at: d.expires_at.to_string(),
    })
}

/// How a payment ended: its status, fee, preimage and ledger transaction.
struct Outcome<'a> {
    status: &'a str,
    fee: i64,
    preimage: &'a str,
    tx: Option<Uuid>,
}

fn record_outgoing(
    company: &mut Company,
    d: &Decoded,
    req: &SendPayment,
    o: Outcome<'_>,
    now: DateTime<Utc>,
) -> Payment {
    let Outcome {
        status,
        fee,
        preimage,
        tx,
    } = o;
    let amount = sats_of(d);
    let invoice = Invoice {
        id: Uuid::new_v4(),
        payment_hash: d.payment_hash.clone(),
        request: req.request.trim().to_owned(),
        preimage: preimage.to_owned(),
        amount_sat: Sats(amount),
        amount_msat: d.amount_msat.to_string(),
        fee_sat: Sats(fee),
        fee_msat: msat(fee),
        description: d.description.clone(),
        status: InvoiceStatus::from(status),
        direction: "outgoing".to_owned(),
        company_id: company.id,
        customer_id: req.customer_id,
        reference: req.reference.clone(),
        expires_at: wire(Utc.timestamp_opt(d.expires_at, 0).single().unwrap_or(now)),
        created_at: now,
        updated_at: String::new(),
    };
    company.lightning.records.push(Record {
        expires: Utc.timestamp_opt(d.expires_at, 0).single().unwrap_or(now),
        invoice: invoice.clone(),
        preimage: preimage.to_owned(),
        settled_at: (status == "paid").then_some(now),
        transaction_id: tx,
    });
    Payment {
        id: invoice.id,
        payment_hash: invoice.payment_hash,
        preimage: invoice.preimage,
        amount_sat: invoice.amount_sat,
        fee_sat: invoice.fee_sat,
        status: PaymentStatus::from(invoice.status.as_str()),
        created_at: now,
        reference: invoice.reference,
        transaction_id: tx.map(|t| t.to_string()).unwrap_or_default(),
    }
}

fn btc() -> Currency {
    Currency::parse(Currency::BTC).expect("a valid code")
}

/// Marks an incoming invoice paid, credits its company and tells it.
fn settle_incoming(
    store: &mut Store,
    company_id: Uuid,
    index: usize,
    kind: TransactionType,
    now: DateTime<Utc>,
) -> Result<String, ApiError> {
    // The payee is another company than the caller's: mark it for the
    // data directory.
    store.touch(company_id);
    let Store {
        companies, outbox, ..
    } = store;
    let company = companies
        .get_mut(&company_id)
        .ok_or_else(|| ApiError::NotFound("the payee no longer exists".to_owned()))?;
    let r = company.lightning.records[index].clone();
    let paid = payable(&r, now)?;
    let tx = company
        .ledger
        .post(
            NewTransaction {
                currency: btc(),
                kind,
                state: TransactionState::Settled,
                amount: BaseUnits(r.invoice.amount_sat.value()),
                fee: BaseUnits::ZERO,
                reference: format!("LN_IN_{}", r.invoice.id.simple()),
                idempotency_key: r.invoice.reference.clone(),
                metadata: json!({"channel": "lightning", "invoice_id": r.invoice.id, "payment_hash": r.invoice.payment_hash})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            },
            now,
        )?
        .transaction_id;
    let rec = &mut company.lightning.records[index];
    rec.invoice.status = paid;
    rec.invoice.preimage = rec.preimage.clone();
    rec.invoice.updated_at = wire(now);
    rec.settled_at = Some(now);
    rec.transaction_id = Some(tx);
    let data = serde_json::to_value(LightningBook::shown(rec)).unwrap_or_default();
    let preimage = rec.preimage.clone();
    outbox.emit(
        company_id,
        &company.webhook_targets(&[]),
        names::LIGHTNING_RECEIVED,
        data,
        now,
    );
    Ok(preimage)
}

/// The status an incoming invoice moves to when paid now: only a pending
/// one before its expiry can be.
fn payable(r: &Record, now: DateTime<Utc>) -> Result<InvoiceStatus, ApiError> {
    match transition(&r.invoice.status, InvoiceEvent::Pay) {
        Ok(paid) if now < r.expires => Ok(paid),
        Err(Refusal {
            from: InvoiceStatus::Paid,
            ..
        }) => Err(ApiError::unprocessable(
            codes::INVALID_STATE,
            "the invoice is already paid",
        )),
        _ => Err(ApiError::unprocessable(
            codes::INVALID_STATE,
            "the invoice has expired and can no longer be paid",
        )),
    }
}

/// Pays an invoice: settled inside the sandbox, or `failed` with no route.
pub fn pay(
    store: &mut Store,
    payer: Uuid,
    req: &SendPayment,
    now: DateTime<Utc>,
) -> Result<Payment, ApiError> {
    if req.reference.trim().is_empty() {
        return Err(ApiError::field("reference", "is required"));
    }
    let mut d = decode(&req.request)?;
    match (d.amount_msat, req.amount) {
        (0, None | Some(0)) => {
            return Err(ApiError::field(
                "amount",
                "the invoice carries no amount: send the amount (sats) to pay",
            ))
        }
        (0, Some(sats)) => d.amount_msat = sats.saturating_mul(1000),
        (msat, Some(sats)) if msat.div_ceil(1000) != sats => {
            return Err(ApiError::field(
                "amount",
                format!(
                    "the invoice is for {} sats; omit amount or send that",
                    msat.div_ceil(1000)
                ),
            ))
        }
        _ => {}
    }
    let amount = sats_of(&d);
    if now.timestamp() >= d.expires_at {
        return Err(ApiError::unprocessable(
            codes::INVALID_STATE,
            "the invoice has expired and can no longer be paid",
        ));
    }
    let Some((payee, invoice_id)) = route(store, payer, &d) else {
        let company = store
            .companies
            .get_mut(&payer)
            .ok_or_else(|| ApiError::Unauthorized("the client's company no longer exists".to_owned()))?;
        return Ok(record_outgoing(
            company,
            &d,
            req,
            Outcome {
                status: "failed",
                fee: 0,
                preimage: "",
                tx: None,
            },
            now,
        ));
    };
    let fee = routing_fee(amount);
    if let Some(max) = req.max_fee.filter(|m| *m > 0) {
        if fee as u64 > max {
            return Err(ApiError::unprocessable(
                codes::INVALID_STATE,
                format!("the routing fee of {fee} sats is above max_fee ({max} sats); nothing was sent"),
            ));
        }
    }
    let index = {
        let payee_company = store
            .companies
            .get(&payee)
            .ok_or_else(|| ApiError::NotFound("the payee no longer exists".to_owned()))?;
        let index = payee_company
            .lightning
            .index(invoice_id)
            .ok_or_else(|| ApiError::NotFound("the invoice no longer exists".to_owned()))?;
        payable(&payee_company.lightning.records[index], now)?;
        index
    };
    let held = hold_outcome(&d.description).is_some();
    let payer_company = store
        .companies
        .get_mut(&payer)
        .ok_or_else(|| ApiError::Unauthorized("the client's company no longer exists".to_owned()))?;
    let tx = payer_company
        .ledger
        .post(
            NewTransaction {
                currency: btc(),
                kind: TransactionType::P2pTransfer,
                state: if held {
                    TransactionState::Pending
                } else {
                    TransactionState::Settled
                },
                amount: BaseUnits(-amount),
                fee: BaseUnits(fee),
                reference: format!("LN_OUT_{}", Uuid::new_v4().simple()),
                idempotency_key: req.reference.clone(),
                metadata: json!({"channel": "lightning", "payment_hash": d.payment_hash})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            },
            now,
        )?
        .transaction_id;
    if held {
        let payment = record_outgoing(
            payer_company,
            &d,
            req,
            Outcome {
                status: "pending",
                fee,
                preimage: "",
                tx: Some(tx),
            },
            now,
        );
        store.scheduler.schedule(
            now + Duration::seconds(HOLD_SECS),
            Job::SettleHeldPayment {
                company_id: payer,
                payment_id: payment.id,
            },
        );
        return Ok(payment);
    }
    let preimage = settle_incoming(store, payee, index, TransactionType::P2pTransfer, now)?;
    let payer_company = store.companies.get_mut(&payer).expect("found above");
    Ok(record_outgoing(
        payer_company,
        &d,
        req,
        Outcome {
            status: "paid",
            fee,
            preimage: &preimage,
            tx: Some(tx),
        },
        now,
    ))
}

/// Seconds of sandbox time a held payment (test value `hold`) stays pending.
pub const HOLD_SECS: i64 = 60;

/// Whether an invoice's description is a hold test value, and how the
/// held payment ends: `hold` settles paid, `hold fail` fails.
fn hold_outcome(description: &str) -> Option<bool> {
    match description.trim() {
        "hold" => Some(true),
        "hold fail" => Some(false),
        _ => None,
    }
}

/// A held payment's time came: `hold` pays the invoice (the payer's held
/// debit settles, the payee is credited) if it can still be paid, else
/// the payment fails and the hold is released, as with `hold fail`.
pub fn settle_held(store: &mut Store, payer: Uuid, payment_id: Uuid, now: DateTime<Utc>) {
    let Some(company) = store.companies.get(&payer) else {
        return;
    };
    let Some(pi) = company.lightning.index(payment_id) else {
        return;
    };
    let r = &company.lightning.records[pi];
    // Only a payment still held has a time to come.
    if transition(&r.invoice.status, InvoiceEvent::Fail).is_err() {
        return;
    }
    let (hash, tx, request) = (
        r.invoice.payment_hash.clone(),
        r.transaction_id,
        r.invoice.request.clone(),
    );
    let payee = decode(&request)
        .ok()
        .filter(|d| hold_outcome(&d.description) == Some(true))
        .and_then(|d| route(store, payer, &d))
        .and_then(|(company_id, invoice_id)| {
            let c = store.companies.get(&company_id)?;
            let index = c.lightning.index(invoice_id)?;
            payable(&c.lightning.records[index], now).ok()?;
            Some((company_id, index))
        });
    let preimage = payee.and_then(|(company_id, index)| {
        settle_incoming(store, company_id, index, TransactionType::P2pTransfer, now).ok()
    });
    let Some(company) = store.companies.get_mut(&payer) else {
        return;
    };
    let state = if preimage.is_some() {
        TransactionState::Settled
    } else {
        TransactionState::Failed
    };
    if let Some(tx) = tx {
        if let Err(e) = company
            .ledger
            .transition(tx, TransactionType::P2pTransfer, state, now)
        {
            tracing::error!(error = %e, payment = %payment_id, hash = %hash, "held payment could not move in the ledger");
        }
    }
    let rec = &mut company.lightning.records[pi];
    let event = if preimage.is_some() {
        InvoiceEvent::Pay
    } else {
        InvoiceEvent::Fail
    };
    if let Ok(next) = transition(&rec.invoice.status, event) {
        rec.invoice.status = next;
    }
    rec.invoice.updated_at = wire(now);
    if let Some(preimage) = preimage {
        rec.invoice.preimage = preimage.clone();
        rec.preimage = preimage;
        rec.settled_at = Some(now);
    }
}

/// `POST /sandbox/lightning/pay`: someone outside pays an invoice of ours.
pub fn pay_from_outside(
    store: &mut Store,
    company_id: Uuid,
    request: &str,
    now: DateTime<Utc>,
) -> Result<Invoice, ApiError> {
    let d = decode(request)?;
    let company = store
        .companies
        .get(&company_id)
        .ok_or_else(|| ApiError::Unauthorized("the client's company no longer exists".to_owned()))?;
    let index = company
        .lightning
        .incoming_by_hash(&d.payment_hash)
        .ok_or_else(|| ApiError::NotFound("no invoice of this company has that payment hash".to_owned()))?;
    payable(&company.lightning.records[index], now)?;
    settle_incoming(store, company_id, index, TransactionType::DepositConfirmed, now)?;
    Ok(LightningBook::shown(
        &store.companies[&company_id].lightning.records[index],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_routing_fee_is_one_sat_and_a_tenth_of_a_percent_rounded_up() {
        assert_eq!(routing_fee(1), 2);
        assert_eq!(routing_fee(1000), 2);
        assert_eq!(routing_fee(1001), 3);
        assert_eq!(routing_fee(20_000_000), 20_001);
    }
}
