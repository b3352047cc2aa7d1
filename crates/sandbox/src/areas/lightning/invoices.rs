//! Invoices: issued as signet BOLT11 strings signed by the sandbox's node
//! key, expiring on the sandbox clock, and verified by payment hash.

use chrono::{DateTime, Duration, Utc};
use paydesk_api::models::lightning::{
    DecodedInvoice, Invoice, InvoiceStatus, InvoiceVerification, NewInvoice,
};
use paydesk_api::time::wire;
use paydesk_api::units::Sats;
use rand::RngCore;
use uuid::Uuid;

use super::bolt11::{self, Decoded};
use super::book::Record;
use super::lifecycle::{transition, InvoiceEvent};
use crate::error::ApiError;
use crate::scheduler::Job;
use crate::state::{Company, Effects};

pub const MAX_INVOICE_SATS: i64 = 20_000_000;
pub const DEFAULT_EXPIRY_SECS: u32 = 86_400;
const MAX_EXPIRY_SECS: u32 = 30 * 86_400;

pub(super) fn msat(sats: i64) -> String {
    (sats * 1000).to_string()
}

pub(super) fn decode(request: &str) -> Result<Decoded, ApiError> {
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
        if let Ok(next) = transition(&r.invoice.status, InvoiceEvent::Expire) {
            r.invoice.status = next;
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
