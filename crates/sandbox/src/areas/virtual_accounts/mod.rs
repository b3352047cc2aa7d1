//! Virtual accounts (open-paths.md; bodies are ours): a ten-digit NGN
//! account number issued against a customer of the company. A bank
//! transfer into it (`POST /sandbox/virtual-accounts/{id}/transfers`)
//! credits the company's NGN wallet at once with a settled
//! DEPOSIT_CONFIRMED transaction naming the account and the sender, and
//! emits `deposit.success`.
//!
//! Decisions where the documents are silent: one account per customer (a
//! second is a 422 naming the first); the customer must be active; the
//! account is named after the customer; idempotent by `reference`.

pub mod book;
use actix_web::http::StatusCode;
use actix_web::web::{Data, Path};
use chrono::{DateTime, Utc};
use paydesk_api::models::events::names;
use paydesk_api::models::transactions::{TransactionState, TransactionType};
use paydesk_api::models::virtual_accounts::VirtualAccountStatus;
use paydesk_api::models::virtual_accounts::{
    NewVirtualAccount, SimulateBankTransfer, VirtualAccount, VirtualAccountPage,
};
use paydesk_api::units::{BaseUnits, Currency};
use paydesk_api::wire::codes;
use rand::Rng;
use serde_json::json;
use uuid::Uuid;

use crate::error::ApiError;
use crate::ledger::NewTransaction;
use crate::pagination::paginate;
use crate::respond::{envelope, parse_id, Caller, JsonAnswer, JsonBody, QueryParams};
use crate::state::{Company, Effects, Shared};
use book::Record;
pub use book::VirtualAccountBook;

const BANK_NAME: &str = "Sandbox Microfinance Bank";
const BANK_CODE: &str = "090999";

pub fn create(
    company: &mut Company,
    req: &NewVirtualAccount,
    now: DateTime<Utc>,
) -> Result<VirtualAccount, ApiError> {
    let customer = company
        .customers
        .find(req.customer_id)
        .ok_or_else(|| ApiError::field("customer_id", format!("no customer {}", req.customer_id)))?
        .customer
        .clone();
    if !customer.is_active {
        return Err(ApiError::unprocessable(
            codes::INVALID_STATE,
            "the customer is inactive; reactivate them first",
        ));
    }
    if let Some(existing) = company
        .virtual_accounts
        .records
        .iter()
        .find(|r| r.account.customer_id == customer.id)
    {
        return Err(ApiError::unprocessable(
            codes::INVALID_STATE,
            format!("the customer already has virtual account {}", existing.account.id),
        ));
    }
    let account = VirtualAccount {
        id: Uuid::new_v4(),
        company_id: company.id,
        customer_id: customer.id,
        account_number: format!(
            "{:010}",
            rand::thread_rng().gen_range(1_000_000_000u64..10_000_000_000)
        ),
        account_name: if customer.full_name().is_empty() {
            customer.email.clone()
        } else {
            customer.full_name()
        },
        bank_name: BANK_NAME.to_owned(),
        bank_code: BANK_CODE.to_owned(),
        currency: Currency::NGN.to_owned(),
        status: VirtualAccountStatus::Active,
        reference: req.reference.clone(),
        total_received: BaseUnits::ZERO,
        created_at: now,
    };
    let seq = company.virtual_accounts.records.last().map_or(1, |r| r.seq + 1);
    company.virtual_accounts.records.push(Record {
        seq,
        account: account.clone(),
    });
    Ok(account)
}

/// A bank transfer arrives in the account and credits the NGN wallet.
pub fn receive(
    company: &mut Company,
    id: Uuid,
    req: &SimulateBankTransfer,
    fx: &mut Effects<'_>,
) -> Result<paydesk_api::models::transactions::Transaction, ApiError> {
    let index = company.virtual_accounts.index(id)?;
    if req.amount.value() <= 0 {
        return Err(ApiError::field("amount", "must be a positive integer of kobo"));
    }
    let account = company.virtual_accounts.records[index].account.clone();
    let tx = company
        .ledger
        .post(
            NewTransaction {
                currency: Currency::parse(Currency::NGN).expect("a valid code"),
                kind: TransactionType::DepositConfirmed,
                state: TransactionState::Settled,
                amount: req.amount,
                fee: BaseUnits::ZERO,
                reference: format!("VA_{}", Uuid::new_v4().simple()),
                idempotency_key: String::new(),
                metadata: json!({
                    "channel": "bank_transfer",
                    "deposit_type": "virtual_account",
                    "virtual_account_id": account.id,
                    "account_number": account.account_number,
                    "customer_id": account.customer_id,
                    "sender_name": req.sender_name.clone().unwrap_or_default(),
                    "sender_bank": req.sender_bank.clone().unwrap_or_default(),
                    "narration": req.narration.clone().unwrap_or_default(),
                    "is_simulated": true,
                })
                .as_object()
                .cloned()
                .unwrap_or_default(),
            },
            fx.now,
        )?
        .clone();
    let a = &mut company.virtual_accounts.records[index].account;
    a.total_received = BaseUnits(a.total_received.value() + req.amount.value());
    let data = serde_json::to_value(&tx).unwrap_or_default();
    fx.outbox.emit(
        company.id,
        &company.webhook_targets(&[]),
        names::DEPOSIT_SUCCESS,
        data,
        fx.now,
    );
    Ok(tx)
}

/// `POST /api/virtual-accounts`.
pub async fn create_handler(
    shared: Data<Shared>,
    caller: Caller,
    body: JsonBody<NewVirtualAccount>,
) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let reference = body.value.reference.trim().to_owned();
    company.once("virtual_account", &reference, &body.canonical, |company| {
        let account = create(company, &body.value, now)?;
        Ok(envelope(
            StatusCode::CREATED,
            "Virtual account created",
            account,
            &caller.request_id,
            now,
        ))
    })
}

/// `GET /api/virtual-accounts` with `customer_id`, cursor and limit.
pub async fn list(shared: Data<Shared>, caller: Caller, q: QueryParams) -> Result<JsonAnswer, ApiError> {
    q.known(&["customer_id"])?;
    let limit = q.limit(20, 100)?;
    let customer = q.get("customer_id").map(parse_id).transpose()?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let page = paginate(
        &company.virtual_accounts.records,
        |r| customer.is_none_or(|c| r.account.customer_id == c),
        q.at()?,
        limit,
    )?;
    let data = VirtualAccountPage {
        virtual_accounts: page.items.iter().map(|r| r.account.clone()).collect(),
        next_cursor: page.next_cursor,
        has_more: page.has_more,
        total: page.total as u64,
    };
    Ok(envelope(
        StatusCode::OK,
        "Virtual accounts retrieved",
        data,
        &caller.request_id,
        now,
    ))
}

/// `GET /api/virtual-accounts/{id}`.
pub async fn get(shared: Data<Shared>, caller: Caller, id: Path<String>) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let index = company.virtual_accounts.index(id)?;
    let account = company.virtual_accounts.records[index].account.clone();
    Ok(envelope(
        StatusCode::OK,
        "Virtual account retrieved",
        account,
        &caller.request_id,
        now,
    ))
}

/// `POST /sandbox/virtual-accounts/{id}/transfers`.
pub async fn simulate_transfer(
    shared: Data<Shared>,
    caller: Caller,
    id: Path<String>,
    body: JsonBody<SimulateBankTransfer>,
) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, mut fx) = store.company(caller.company_id, now)?;
    let tx = receive(company, id, &body.value, &mut fx)?;
    Ok(envelope(
        StatusCode::CREATED,
        "Bank transfer received",
        tx,
        &caller.request_id,
        now,
    ))
}
