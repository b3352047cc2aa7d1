//! Lightning invoices and payments (spec "Lightning"; sandbox-rules.md,
//! "Trading and Lightning"). Invoices are real signet BOLT11 strings signed
//! by the sandbox's node key, with payment_hash = sha256(preimage); they
//! expire on the sandbox clock. Paying an invoice of another company of
//! this sandbox settles at once (the payer's BTC wallet pays amount + a
//! routing fee of 1 sat + 0.1%, rounded up; the payee's is credited and
//! told by `btc.lightning.received.success`); any other valid invoice has
//! no route: the payment is recorded `failed` and nothing is debited.
//!
//! Test values (sandbox-rules.md): paying an invoice of this sandbox whose
//! description is `hold` answers `pending` (the payer's debit held) and
//! settles `paid` 60 s of sandbox time later; `hold fail` ends `failed`
//! and releases the hold. An invoice without an amount is paid with
//! `amount` (sats) in the send body; without it the send is a 400.
//!
//! Decisions where the documents are silent: an invoice of one's own
//! company has no route (no self-payments); the hold values apply to
//! invoices of this sandbox (others have no route and fail at once); a
//! held payment whose invoice was paid or expired meanwhile fails; an
//! `amount` that differs from the invoice's is a 400; ledger movements are P2P_TRANSFER between
//! companies and DEPOSIT_CONFIRMED for an outside payer
//! (`POST /sandbox/lightning/pay`); invoice expiry is 1 s to 30 days.

use std::collections::HashMap;

use chrono::{DateTime, Duration, TimeZone, Utc};
use paydesk_api::models::events::names;
use paydesk_api::models::lightning::{
    DecodedInvoice, Invoice, InvoicePage, InvoiceVerification, NewInvoice, Payment, PaymentPreview,
    SendPayment,
};
use paydesk_api::models::lightning::{InvoiceStatus, PaymentStatus};
use paydesk_api::models::transactions::{TransactionState, TransactionType};
use paydesk_api::time::wire;
use paydesk_api::units::{BaseUnits, Currency, Sats};
use paydesk_api::wire::codes;
use rand::RngCore;
use serde_json::json;
use uuid::Uuid;

use super::bolt11::{self, Decoded, NodeKey};
use crate::book::Book;
use crate::error::ApiError;
use crate::ledger::NewTransaction;
use crate::scheduler::Job;
use crate::state::{Company, Effects, Store};

pub const MAX_INVOICE_SATS: i64 = 20_000_000;
pub const DEFAULT_EXPIRY_SECS: u32 = 86_400;
const MAX_EXPIRY_SECS: u32 = 30 * 86_400;

/// The sandbox's node: its key and where each of its invoices lives.
#[derive(Debug)]
pub struct Node {
    pub key: NodeKey,
    by_hash: HashMap<String, (Uuid, Uuid)>,
}

impl Node {
    /// Forgets a company's invoices (its state was reset).
    pub fn forget_company(&mut self, company_id: Uuid) {
        self.by_hash.retain(|_, (company, _)| *company != company_id);
    }

    /// Routes to a company's invoices again (its state was restored).
    pub fn learn_company(&mut self, company_id: Uuid, book: &LightningBook) {
        for r in book.records.iter().filter(|r| r.invoice.direction == "incoming") {
            self.by_hash
                .insert(r.invoice.payment_hash.clone(), (company_id, r.invoice.id));
        }
    }
}

impl Default for Node {
    fn default() -> Self {
        Node {
            key: NodeKey::generate(),
            by_hash: HashMap::new(),
        }
    }
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Record {
    invoice: Invoice,
    preimage: String,
    expires: DateTime<Utc>,
    settled_at: Option<DateTime<Utc>>,
    transaction_id: Option<Uuid>,
}

impl crate::book::Record for Record {
    type Key = Uuid;

    fn key(&self) -> Uuid {
        self.invoice.id
    }
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct LightningBook {
    pub(crate) records: Book<Record>,
}

impl LightningBook {
    fn index(&self, id: Uuid) -> Option<usize> {
        self.records.iter().position(|r| r.invoice.id == id)
    }

    fn incoming_by_hash(&self, hash: &str) -> Option<usize> {
        self.records
            .iter()
            .position(|r| r.invoice.direction == "incoming" && r.invoice.payment_hash == hash)
    }

    /// A record as get and list show it: `expires_at` in Unix seconds.
    fn shown(r: &Record) -> Invoice {
        let mut i = r.invoice.clone();
        i.expires_at = r.expires.timestamp().to_string();
        i
    }

    pub fn get(&self, id: Uuid) -> Result<Invoice, ApiError> {
        self.index(id)
            .map(|i| Self::shown(&self.records[i]))
            .ok_or_else(|| ApiError::NotFound(format!("no invoice {id}")))
    }

    pub fn page(&self, page: u32, size: u32, status: Option<&str>, direction: Option<&str>) -> InvoicePage {
        let matching: Vec<&Record> = self
            .records
            .iter()
            .rev()
            .filter(|r| status.is_none_or(|s| r.invoice.status.as_str() == s))
            .filter(|r| direction.is_none_or(|d| r.invoice.direction == d))
            .collect();
        let start = (u64::from(page) - 1).saturating_mul(u64::from(size)) as usize;
        InvoicePage {
            total_count: matching.len().to_string(),
            invoices: matching
                .iter()
                .skip(start)
                .take(size as usize)
                .map(|r| Self::shown(r))
                .collect(),
            page,
            page_size: size,
        }
    }
}

fn msat(sats: i64) -> String {
    (sats * 1000).to_string()
}

/// 1 sat + 0.1% of the amount, rounded up.
pub fn routing_fee(amount_sat: i64) -> i64 {
    1 + (amount_sat + 999) / 1000
}

fn decode(request: &str) -> Result<Decoded, ApiError> {
    if request.trim().is_empty() {
        return Err(ApiError::field(
            "request",
            "is required: a BOLT11 payment request",
        ));
    }
    bolt11::decode(request)
        .map_err(|e| ApiError::field("request", format!("is not a valid BOLT11 invoice: {e}")))
}

/// Issues an invoice; it expires on the sandbox clock.
pub fn create(company: &mut Company, req: &NewInvoice, fx: &mut Effects<'_>) -> Result<Invoice, ApiError> {
    if req.reference.trim().is_empty() {
        return Err(ApiError::field("reference", "is required"));
    }
    let amount = req.amount.value();
    if !(1..=MAX_INVOICE_SATS).contains(&amount) {
        return Err(ApiError::field("amount", "must be 1 to 20,000,000 sats"));
    }
    let description = req.description.trim();
    if description.is_empty() || description.len() > 639 {
        return Err(ApiError::field("description", "is required, at most 639 bytes"));
    }
    let expiry = req.expiry.unwrap_or(DEFAULT_EXPIRY_SECS);
    if !(1..=MAX_EXPIRY_SECS).contains(&expiry) {
        return Err(ApiError::field(
            "expiry",
            "must be 1 to 2,592,000 seconds (30 days)",
        ));
    }
    if let Some(customer) = req.customer_id {
        if company.customers.find(customer).is_none() {
            return Err(ApiError::NotFound(format!("no customer {customer}")));
        }
    }
    let mut preimage = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut preimage);
    let (request, hash) = fx
        .node
        .key
        .sign(
            &preimage,
            amount as u64 * 1000,
            description,
            fx.now.timestamp() as u64,
            expiry as u64,
        )
        .map_err(ApiError::invalid)?;
    let expires = fx.now + Duration::seconds(expiry as i64);
    let invoice = Invoice {
        id: Uuid::new_v4(),
        payment_hash: hash.clone(),
        request,
        preimage: String::new(),
        amount_sat: Sats(amount),
        amount_msat: msat(amount),
        fee_sat: Sats::ZERO,
        fee_msat: "0".to_owned(),
        description: description.to_owned(),
        status: InvoiceStatus::Pending,
        direction: "incoming".to_owned(),
        company_id: company.id,
        customer_id: req.customer_id,
        reference: req.reference.clone(),
        expires_at: wire(expires),
        created_at: fx.now,
        updated_at: String::new(),
    };
    company.lightning.records.push(Record {
        invoice: invoice.clone(),
        preimage: hex::encode(preimage),
        expires,
        settled_at: None,
        transaction_id: None,
    });
    fx.node.by_hash.insert(hash, (company.id, invoice.id));
    fx.scheduler.schedule(
        expires,
        Job::ExpireInvoice {
            company_id: company.id,
            invoice_id: invoice.id,
        },
    );
    Ok(invoice)
}

pub fn expire(company: &mut Company, id: Uuid, now: DateTime<Utc>) {
    if let Some(i) = company.lightning.index(id) {
        let r = &mut company.lightning.records[i];
        if r.invoice.status == InvoiceStatus::Pending {
            r.invoice.status = InvoiceStatus::Expired;
            r.invoice.updated_at = wire(now);
        }
    }
}

pub fn decoded(request: &str, now: DateTime<Utc>) -> Result<DecodedInvoice, ApiError> {
    let d = decode(request)?;
    Ok(DecodedInvoice {
        payment_hash: d.payment_hash,
        destination: d.payee,
        amount_sat: d.amount_msat / 1000,
        amount_msat: d.amount_msat,
        description: d.description,
        expires_at: d.expires_at,
        is_expired: now.timestamp() >= d.expires_at,
        network: d.network.to_owned(),
        timestamp: d.timestamp,
    })
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
    rec.invoice.status = InvoiceStatus::Paid;
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

fn payable(r: &Record, now: DateTime<Utc>) -> Result<(), ApiError> {
    match r.invoice.status.as_str() {
        "paid" => Err(ApiError::unprocessable(
            codes::INVALID_STATE,
            "the invoice is already paid",
        )),
        "pending" if now < r.expires => Ok(()),
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
    if r.invoice.status != InvoiceStatus::Pending {
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
    rec.invoice.status = if preimage.is_some() {
        InvoiceStatus::Paid
    } else {
        InvoiceStatus::Failed
    };
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

pub fn verify(company: &Company, payment_hash: &str) -> Result<InvoiceVerification, ApiError> {
    let hash = payment_hash.trim().to_ascii_lowercase();
    if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(ApiError::field("payment_hash", "must be 64 hex characters"));
    }
    let r = company
        .lightning
        .incoming_by_hash(&hash)
        .map(|i| &company.lightning.records[i])
        .ok_or_else(|| ApiError::NotFound("no invoice of this company has that payment hash".to_owned()))?;
    let paid = r.invoice.status == InvoiceStatus::Paid;
    Ok(InvoiceVerification {
        id: r.invoice.id,
        payment_hash: r.invoice.payment_hash.clone(),
        preimage: r.invoice.preimage.clone(),
        amount_sat: r.invoice.amount_sat,
        status: r.invoice.status.clone(),
        is_paid: paid,
        ledger_credited: paid && r.transaction_id.is_some(),
        settled_at: r.settled_at.map(wire).unwrap_or_default(),
    })
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
