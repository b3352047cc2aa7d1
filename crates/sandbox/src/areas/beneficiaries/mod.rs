//! Saved payout recipients (sandbox-rules.md, "Payouts"): `bank` and
//! `mobile_money` accounts, and `crypto` addresses checked against their
//! chain. Listing pages by limit and offset, oldest first; delete is a hard
//! delete.

pub mod book;
use actix_web::http::StatusCode;
use actix_web::web::{Data, Path};
use chrono::{DateTime, Utc};
use paydesk_api::models::beneficiaries::{
    Beneficiary, BeneficiaryPage, BeneficiaryUpdate, DeletedBeneficiary, Destination, NewBeneficiary,
};
use serde::Deserialize;
use uuid::Uuid;

use super::addresses::parse_chain;
use crate::chains;
use crate::error::ApiError;
use crate::respond::{envelope, parse_id, At, Caller, JsonAnswer, JsonBody, QueryParams};
use crate::state::{Company, Shared};
pub use book::BeneficiaryBook;

#[derive(Deserialize)]
struct AccountFields {
    account_name: String,
    account_number: String,
    bank_code: String,
    #[serde(default)]
    country: Option<String>,
}

#[derive(Deserialize)]
struct CryptoFields {
    address: String,
    chain: String,
}

fn nonblank(field: &str, value: &str) -> Result<String, ApiError> {
    let v = value.trim();
    if v.is_empty() {
        Err(ApiError::field(format!("destination.{field}"), "is required"))
    } else {
        Ok(v.to_owned())
    }
}

/// Checks a destination against its type. The official client sends the
/// destination as a string holding the JSON object; that string is read
/// as the object it holds.
fn destination(kind: &str, raw: &serde_json::Value) -> Result<Destination, ApiError> {
    let shape = |e: serde_json::Error| ApiError::field("destination", e.to_string());
    let parsed;
    let raw = match raw.as_str() {
        Some(text) => {
            parsed = serde_json::from_str::<serde_json::Value>(text).map_err(shape)?;
            &parsed
        }
        None => raw,
    };
    match kind {
        "bank" | "mobile_money" => {
            let a: AccountFields = serde_json::from_value(raw.clone()).map_err(shape)?;
            Ok(Destination::Account {
                account_name: nonblank("account_name", &a.account_name)?,
                account_number: nonblank("account_number", &a.account_number)?,
                bank_code: nonblank("bank_code", &a.bank_code)?,
                country: a
                    .country
                    .map(|c| c.trim().to_ascii_uppercase())
                    .filter(|c| !c.is_empty()),
            })
        }
        "crypto" => {
            let c: CryptoFields = serde_json::from_value(raw.clone()).map_err(shape)?;
            let chain = parse_chain("destination.chain", &c.chain)?;
            let address = c.address.trim().to_owned();
            chains::validate_address(chain, &address).map_err(|reason| {
                ApiError::field("destination.address", format!("{reason} for {}", chain.name()))
            })?;
            Ok(Destination::Crypto {
                address,
                chain: chain.name().to_owned(),
            })
        }
        _ => Err(ApiError::field("type", "must be bank, mobile_money or crypto")),
    }
}

fn check_name(name: &str) -> Result<String, ApiError> {
    let name = name.trim();
    if name.is_empty() || name.len() > 120 {
        return Err(ApiError::field("name", "must be 1 to 120 characters"));
    }
    Ok(name.to_owned())
}

/// The create body: the spec's fields, and `is_blacklisted`, which the
/// official client may send and which is kept as sent (a write never
/// drops a field it accepted).
#[derive(Debug, serde::Deserialize)]
pub struct CreateBody {
    #[serde(flatten)]
    beneficiary: NewBeneficiary,
    #[serde(default)]
    is_blacklisted: Option<bool>,
}

pub fn create(
    company: &mut Company,
    body: &CreateBody,
    created_by: Uuid,
    now: DateTime<Utc>,
) -> Result<Beneficiary, ApiError> {
    let req = &body.beneficiary;
    let b = Beneficiary {
        id: Uuid::new_v4(),
        company_id: company.id,
        kind: req.kind.clone(),
        name: check_name(&req.name)?,
        destination: destination(&req.kind, &req.destination)?,
        is_blacklisted: body.is_blacklisted.unwrap_or(false),
        is_active: true,
        created_by: created_by.to_string(),
        created_at: now,
        updated_at: now,
    };
    company.beneficiaries.records.push(b.clone());
    Ok(b)
}

pub fn update(
    company: &mut Company,
    id: Uuid,
    req: &BeneficiaryUpdate,
    now: DateTime<Utc>,
) -> Result<Beneficiary, ApiError> {
    let index = company
        .beneficiaries
        .records
        .iter()
        .position(|b| b.id == id)
        .ok_or_else(|| ApiError::NotFound(format!("no beneficiary {id}")))?;
    let current = company.beneficiaries.records[index].clone();
    let name = req.name.as_deref().map(check_name).transpose()?;
    let dest = req
        .destination
        .as_ref()
        .map(|d| destination(&current.kind, d))
        .transpose()?;
    let b = &mut company.beneficiaries.records[index];
    if let Some(name) = name {
        b.name = name;
    }
    if let Some(dest) = dest {
        b.destination = dest;
    }
    if let Some(active) = req.is_active {
        b.is_active = active;
    }
    if let Some(blacklisted) = req.is_blacklisted {
        b.is_blacklisted = blacklisted;
    }
    b.updated_at = now;
    Ok(b.clone())
}

/// `POST /api/beneficiaries`.
pub async fn create_handler(
    shared: Data<Shared>,
    caller: Caller,
    body: JsonBody<CreateBody>,
) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let b = create(company, &body.value, caller.client_id, now)?;
    Ok(envelope(
        StatusCode::CREATED,
        "Beneficiary created",
        b,
        &caller.request_id,
        now,
    ))
}

/// `GET /api/beneficiaries?limit&offset`, oldest first; `page` (from 1)
/// is an offset of whole pages of `limit`, and wins over `offset`.
pub async fn list(shared: Data<Shared>, caller: Caller, q: QueryParams) -> Result<JsonAnswer, ApiError> {
    q.only(&["limit", "offset", "page"])?;
    let limit = q.limit(20, 100)?;
    let offset = match q.at()? {
        At::Page(n) => (n - 1).saturating_mul(limit),
        At::Offset(n) => n,
        At::First | At::Cursor(_) => 0,
    };
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let all = &company.beneficiaries.records;
    let data = BeneficiaryPage {
        beneficiaries: all.iter().skip(offset).take(limit).cloned().collect(),
        total: all.len() as u64,
        limit: limit as u32,
        offset: offset as u32,
    };
    Ok(envelope(
        StatusCode::OK,
        "Beneficiaries retrieved",
        data,
        &caller.request_id,
        now,
    ))
}

/// `GET /api/beneficiaries/{id}`.
pub async fn get(shared: Data<Shared>, caller: Caller, id: Path<String>) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let b = company
        .beneficiaries
        .find(id)
        .cloned()
        .ok_or_else(|| ApiError::NotFound(format!("no beneficiary {id}")))?;
    Ok(envelope(
        StatusCode::OK,
        "Beneficiary retrieved",
        b,
        &caller.request_id,
        now,
    ))
}

/// `PUT /api/beneficiaries/{id}`: omitted fields keep their value.
pub async fn put(
    shared: Data<Shared>,
    caller: Caller,
    id: Path<String>,
    body: JsonBody<BeneficiaryUpdate>,
) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let b = update(company, id, &body.value, now)?;
    Ok(envelope(
        StatusCode::OK,
        "Beneficiary updated",
        b,
        &caller.request_id,
        now,
    ))
}

/// `DELETE /api/beneficiaries/{id}`: gone for good (404 afterwards).
pub async fn delete(shared: Data<Shared>, caller: Caller, id: Path<String>) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let records = &mut company.beneficiaries.records;
    let index = records
        .iter()
        .position(|b| b.id == id)
        .ok_or_else(|| ApiError::NotFound(format!("no beneficiary {id}")))?;
    let removed = records.remove(index);
    Ok(envelope(
        StatusCode::OK,
        "Beneficiary deleted",
        DeletedBeneficiary {
            beneficiary: removed,
            success: true,
        },
        &caller.request_id,
        now,
    ))
}
