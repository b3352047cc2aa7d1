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
//!
//! Invoices in `invoices.rs`, paying them in `payments.rs`, the records
//! in `book.rs`, their statuses' moves in `lifecycle.rs`, BOLT11 in
//! `bolt11.rs`; thin handlers here.

pub mod bolt11;
pub mod book;
pub mod invoices;
mod lifecycle;
pub mod payments;

use actix_web::http::StatusCode;
use actix_web::web::{Data, Path};
use paydesk_api::models::lightning::PaymentStatus;
use paydesk_api::models::lightning::{NewInvoice, PaymentRequest, SendPayment, VerifyInvoice};

use crate::error::ApiError;
use crate::respond::{answer, json, parse_id, Caller, JsonAnswer, JsonBody, QueryParams};
use crate::state::Shared;

pub use book::{LightningBook, Node};
pub use lifecycle::{transition, InvoiceEvent, Refusal};

/// `POST /api/lightning/invoices`: idempotent by `reference`.
pub async fn create_invoice(
    shared: Data<Shared>,
    caller: Caller,
    body: JsonBody<NewInvoice>,
) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, mut fx) = store.company(caller.company_id, now)?;
    let reference = body.value.reference.trim().to_owned();
    company.once("lightning_invoice", &reference, &body.canonical, |company| {
        let invoice = invoices::create(company, &body.value, &mut fx)?;
        Ok(answer(
            StatusCode::CREATED,
            "Invoice created",
            invoice,
            &caller,
            now,
        ))
    })
}

/// `GET /api/lightning/invoices?page&page_size&status&direction`.
pub async fn list(shared: Data<Shared>, caller: Caller, q: QueryParams) -> Result<JsonAnswer, ApiError> {
    q.only(&["page", "page_size", "status", "direction"])?;
    let page = match q.get("page") {
        None => 1,
        Some(v) => v
            .parse::<u32>()
            .ok()
            .filter(|p| *p >= 1)
            .ok_or_else(|| ApiError::field("page", "must be a whole number from 1"))?,
    };
    let size = match q.get("page_size") {
        None => 20,
        Some(v) => v
            .parse::<u32>()
            .ok()
            .filter(|s| (1..=100).contains(s))
            .ok_or_else(|| ApiError::field("page_size", "must be 1 to 100"))?,
    };
    let status = q.one_of("status", &["pending", "paid", "expired", "failed"])?;
    let direction = q.one_of("direction", &["incoming", "outgoing"])?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let data = company
        .lightning
        .page(page, size, status.as_deref(), direction.as_deref());
    Ok(answer(StatusCode::OK, "Invoices retrieved", data, &caller, now))
}

/// `GET /api/lightning/invoices/{id}`.
pub async fn get(shared: Data<Shared>, caller: Caller, id: Path<String>) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let invoice = company.lightning.get(id)?;
    Ok(answer(StatusCode::OK, "Invoice retrieved", invoice, &caller, now))
}

/// `POST /api/lightning/invoices/verify {payment_hash}`.
pub async fn verify(
    shared: Data<Shared>,
    caller: Caller,
    body: JsonBody<VerifyInvoice>,
) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let data = invoices::verify(company, &body.value.payment_hash)?;
    Ok(answer(StatusCode::OK, "Invoice verified", data, &caller, now))
}

/// `POST /api/lightning/decode {request}`.
pub async fn decode(
    shared: Data<Shared>,
    caller: Caller,
    body: JsonBody<PaymentRequest>,
) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let data = invoices::decoded(&body.value.request, now)?;
    Ok(answer(StatusCode::OK, "Invoice decoded", data, &caller, now))
}

/// `POST /api/lightning/payments/initiate {request}`: a preview.
pub async fn initiate(
    shared: Data<Shared>,
    caller: Caller,
    body: JsonBody<PaymentRequest>,
) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let data = payments::preview(&shared.store(), caller.company_id, &body.value.request, now)?;
    Ok(answer(StatusCode::OK, "Payment preview", data, &caller, now))
}

/// `POST /api/lightning/payments/send`: idempotent by `reference`.
pub async fn send(
    shared: Data<Shared>,
    caller: Caller,
    body: JsonBody<SendPayment>,
) -> Result<JsonAnswer, ApiError> {
    const OPERATION: &str = "lightning_pay";
    let now = shared.clock.now();
    let mut store = shared.store();
    let reference = body.value.reference.trim().to_owned();
    let (company, _) = store.company(caller.company_id, now)?;
    if let Some(stored) = company
        .idempotency
        .replay(OPERATION, &reference, &body.canonical)?
    {
        return Ok(stored);
    }
    let payment = payments::pay(&mut store, caller.company_id, &body.value, now)?;
    let message = if payment.status == PaymentStatus::Paid {
        "Payment sent"
    } else {
        "No route to the payee; the payment failed and nothing was debited"
    };
    let answer = json(
        StatusCode::CREATED,
        &serde_json::json!({
            "success": true,
            "message": message,
            "data": payment,
            "metadata": {"request_id": caller.request_id},
            "timestamp": now,
        }),
    );
    let (company, _) = store.company(caller.company_id, now)?;
    company
        .idempotency
        .save(OPERATION, &reference, &body.canonical, &answer);
    Ok(answer)
}

/// `POST /sandbox/lightning/pay {request}`: an outside payer pays an
/// invoice of the caller's company.
pub async fn pay_from_outside(
    shared: Data<Shared>,
    caller: Caller,
    body: JsonBody<PaymentRequest>,
) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let invoice =
        payments::pay_from_outside(&mut shared.store(), caller.company_id, &body.value.request, now)?;
    Ok(answer(StatusCode::OK, "Invoice paid", invoice, &caller, now))
}
