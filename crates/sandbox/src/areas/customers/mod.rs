//! Customers and card KYC (spec "Customers"; sandbox-rules.md, "Customers
//! and card KYC"). Emails are unique per company, compared without case.
//! Card KYC is reviewed on the clock 60 s after submission: an `id_number`
//! ending in `0000` is rejected, any other approved.
//!
//! Decisions where the documents are silent: a duplicate email is a 400
//! naming `email`; KYC may be submitted again only after a rejection;
//! `GET .../card-kyc` before any submission is a 404; blacklisting sets
//! `is_active` to false (and un-blacklisting back to true).

pub mod book;
use actix_web::http::StatusCode;
use actix_web::web::{Data, Path};
use chrono::{DateTime, Duration, NaiveDate, Utc};
use paydesk_api::models::customers::{
    Blacklist, CardKyc, Customer, CustomerPage, CustomerUpdate, KycDetails, KycStatus, ListMeta, NewCustomer,
};
use paydesk_api::wire::codes;
use uuid::Uuid;

use crate::error::ApiError;
use crate::pagination::paginate;
use crate::respond::{answer, parse_id, Caller, JsonAnswer, JsonBody, QueryParams};
use crate::scheduler::Job;
use crate::state::{Company, Effects, Shared};
pub use book::{CustomerBook, CustomerRecord};

/// Seconds from submission to the KYC decision.
pub const KYC_REVIEW_SECS: i64 = 60;
/// Test value: an `id_number` ending so is rejected.
pub const REJECTED_SUFFIX: &str = "0000";

fn valid_email(email: &str) -> bool {
    let Some((local, domain)) = email.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !email.chars().any(|c| c.is_whitespace())
        && !domain.contains('@')
}

fn customer_type(value: &str, allowed: &[&str]) -> Result<String, ApiError> {
    let v = value.trim().to_ascii_lowercase();
    if allowed.contains(&v.as_str()) {
        Ok(v)
    } else {
        Err(ApiError::field(
            "customer_type",
            format!("must be {}", allowed.join(" or ")),
        ))
    }
}

fn alpha3(field: &str, value: &str) -> Result<String, ApiError> {
    let v = value.trim().to_ascii_uppercase();
    if v.len() == 3 && v.bytes().all(|b| b.is_ascii_uppercase()) {
        Ok(v)
    } else {
        Err(ApiError::field(
            field,
            "must be a three-letter ISO 3166-1 alpha-3 code, e.g. NGA",
        ))
    }
}

fn name_part(field: &str, value: Option<&str>) -> Result<String, ApiError> {
    let v = value.unwrap_or("").trim();
    if v.len() > 100 {
        return Err(ApiError::field(field, "must be at most 100 characters"));
    }
    Ok(v.to_owned())
}

/// Creates a customer; the email must be valid and unused in the company.
pub fn create(
    company: &mut Company,
    req: &NewCustomer,
    created_by: Uuid,
    now: DateTime<Utc>,
) -> Result<Customer, ApiError> {
    let email = req.email.trim().to_owned();
    if !valid_email(&email) {
        return Err(ApiError::field("email", "must be a valid email address"));
    }
    if company.customers.by_email(&email).is_some() {
        return Err(ApiError::field(
            "email",
            format!("a customer with the email '{email}' already exists; use that customer"),
        ));
    }
    let customer_type = customer_type(&req.customer_type, &["individual", "business"])?;
    let phone_number = match req
        .phone_number
        .as_deref()
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        None => None,
        Some(p) => {
            let digits = p.strip_prefix('+').unwrap_or("");
            if !(8..=15).contains(&digits.len()) || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(ApiError::field(
                    "phone_number",
                    "must be in international format: + and 8 to 15 digits, e.g. +2348012345678",
                ));
            }
            Some(p.to_owned())
        }
    };
    let country_code = req
        .country_code
        .as_deref()
        .filter(|c| !c.trim().is_empty())
        .map(|c| alpha3("country_code", c))
        .transpose()?;
    let customer = Customer {
        id: Uuid::new_v4(),
        first_name: name_part("first_name", req.first_name.as_deref())?,
        last_name: name_part("last_name", req.last_name.as_deref())?,
        email,
        customer_type,
        company_id: company.id,
        created_by,
        is_active: true,
        blacklist: false,
        metadata: "{}".to_owned(),
        reference: req.reference.clone().unwrap_or_default(),
        phone_number,
        country_code,
        country: None,
        date_of_birth: None,
        id_type: None,
        id_number: None,
        dial_code: None,
        line1: None,
        city: None,
        state: None,
        postal_code: None,
        created_at: now,
        updated_at: now,
    };
    let seq = company.customers.records.last().map_or(1, |r| r.seq + 1);
    company.customers.records.push(CustomerRecord {
        seq,
        customer: customer.clone(),
        kyc: None,
    });
    Ok(customer)
}

pub fn update(
    company: &mut Company,
    id: Uuid,
    req: &CustomerUpdate,
    now: DateTime<Utc>,
) -> Result<Customer, ApiError> {
    let first = req
        .first_name
        .as_deref()
        .map(|v| name_part("first_name", Some(v)))
        .transpose()?;
    let last = req
        .last_name
        .as_deref()
        .map(|v| name_part("last_name", Some(v)))
        .transpose()?;
    let c = &mut company.customers.find_mut(id)?.customer;
    if let Some(first) = first {
        c.first_name = first;
    }
    if let Some(last) = last {
        c.last_name = last;
    }
    if let Some(active) = req.is_active {
        c.is_active = active;
        c.blacklist = !active;
    }
    c.updated_at = now;
    Ok(c.clone())
}

/// Checks the full-KYC fields.
pub fn check_kyc(d: &KycDetails, today: NaiveDate) -> Result<KycDetails, ApiError> {
    let required = |field: &str, value: &str| -> Result<String, ApiError> {
        let v = value.trim();
        if v.is_empty() {
            Err(ApiError::field(field, "is required"))
        } else {
            Ok(v.to_owned())
        }
    };
    let dob_text = required("date_of_birth", &d.date_of_birth)?;
    let dob = NaiveDate::parse_from_str(&dob_text, "%Y-%m-%d")
        .map_err(|_| ApiError::field("date_of_birth", "must be a date written YYYY-MM-DD"))?;
    if dob >= today {
        return Err(ApiError::field("date_of_birth", "must be in the past"));
    }
    let id_type = required("id_type", &d.id_type)?.to_ascii_lowercase();
    if !matches!(id_type.as_str(), "national_id" | "passport" | "drivers_license") {
        return Err(ApiError::field(
            "id_type",
            "must be national_id, passport or drivers_license",
        ));
    }
    let dial_code = required("dial_code", &d.dial_code)?;
    if !dial_code.starts_with('+') || !(2..=5).contains(&dial_code.len()) {
        return Err(ApiError::field(
            "dial_code",
            "must be + and 1 to 4 digits, e.g. +234",
        ));
    }
    let phone = required("phone_number", &d.phone_number)?;
    if !phone.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ApiError::field(
            "phone_number",
            "must be the local number in digits, without the dial code",
        ));
    }
    Ok(KycDetails {
        country: alpha3("country", &d.country)?,
        date_of_birth: dob_text,
        id_type,
        id_number: required("id_number", &d.id_number)?,
        dial_code,
        phone_number: phone,
        line1: required("line1", &d.line1)?,
        city: required("city", &d.city)?,
        state: required("state", &d.state)?,
        postal_code: required("postal_code", &d.postal_code)?,
    })
}

/// Submits card KYC; the review falls due `KYC_REVIEW_SECS` later.
pub fn submit_kyc(
    company: &mut Company,
    id: Uuid,
    details: &KycDetails,
    fx: &mut Effects<'_>,
) -> Result<CardKyc, ApiError> {
    let details = check_kyc(details, fx.now.date_naive())?;
    let company_id = company.id;
    let record = company.customers.find_mut(id)?;
    match record.kyc.as_ref().map(|k| k.status) {
        Some(KycStatus::Pending) => {
            return Err(ApiError::unprocessable(
                codes::INVALID_STATE,
                "card KYC for this customer is already under review; wait for the decision",
            ))
        }
        Some(KycStatus::Approved) => {
            return Err(ApiError::unprocessable(
                codes::INVALID_STATE,
                "card KYC for this customer is already approved",
            ))
        }
        Some(KycStatus::Rejected) | None => {}
    }
    record.customer.apply_kyc(&details);
    record.customer.updated_at = fx.now;
    let kyc = CardKyc {
        customer_id: id,
        status: KycStatus::Pending,
        submitted_at: Some(fx.now),
        reviewed_at: None,
    };
    record.kyc = Some(kyc.clone());
    fx.scheduler.schedule(
        fx.now + Duration::seconds(KYC_REVIEW_SECS),
        Job::ReviewKyc {
            company_id,
            customer_id: id,
        },
    );
    Ok(kyc)
}

/// The review's decision, when its time comes.
pub fn review_kyc(company: &mut Company, id: Uuid, now: DateTime<Utc>) {
    let Ok(record) = company.customers.find_mut(id) else {
        return;
    };
    let rejected = record
        .customer
        .id_number
        .as_deref()
        .is_some_and(|n| n.ends_with(REJECTED_SUFFIX));
    if let Some(kyc) = record.kyc.as_mut().filter(|k| k.status == KycStatus::Pending) {
        kyc.status = if rejected {
            KycStatus::Rejected
        } else {
            KycStatus::Approved
        };
        kyc.reviewed_at = Some(now);
    }
}

/// Records KYC approved at once, for the older card-create form whose
/// customer object carries the full details.
pub fn approve_inline(company: &mut Company, id: Uuid, details: KycDetails, now: DateTime<Utc>) {
    if let Ok(record) = company.customers.find_mut(id) {
        record.customer.apply_kyc(&details);
        record.kyc = Some(CardKyc {
            customer_id: id,
            status: KycStatus::Approved,
            submitted_at: Some(now),
            reviewed_at: Some(now),
        });
    }
}

/// `POST /api/customers`.
pub async fn create_handler(
    shared: Data<Shared>,
    caller: Caller,
    body: JsonBody<NewCustomer>,
) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let reference = body.value.reference.clone().unwrap_or_default();
    company.once("create_customer", &reference, &body.canonical, |company| {
        let c = create(company, &body.value, caller.client_id, now)?;
        Ok(answer(StatusCode::CREATED, "Customer created", c, &caller, now))
    })
}

/// `GET /api/customers` with the spec's filters.
pub async fn list(shared: Data<Shared>, caller: Caller, q: QueryParams) -> Result<JsonAnswer, ApiError> {
    q.known(&[
        "id",
        "reference",
        "email",
        "customer_type",
        "is_active",
        "blacklist",
        "blacklisted",
        "is_blacklisted",
    ])?;
    let limit = q.limit(20, 100)?;
    let id = q.get("id").map(parse_id).transpose()?;
    let customer_type = q.one_of("customer_type", &["individual", "business"])?;
    let is_active = q.parse_opt("is_active", "true, false", |v| v.parse::<bool>().ok())?;
    // Blacklisting is what makes a customer inactive, so the blacklist
    // filters (the official client's `blacklist`, also `blacklisted` and
    // `is_blacklisted`) are the inverse of `is_active`.
    let blacklisted = ["blacklist", "blacklisted", "is_blacklisted"]
        .iter()
        .map(|key| q.parse_opt(key, "true, false", |v| v.parse::<bool>().ok()))
        .collect::<Result<Vec<_>, _>>()?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let page = paginate(
        &company.customers.records,
        |r| {
            let c = &r.customer;
            id.is_none_or(|id| c.id == id)
                && q.get("reference").is_none_or(|v| c.reference == v)
                && q.get("email").is_none_or(|v| c.email.eq_ignore_ascii_case(v))
                && customer_type.as_deref().is_none_or(|v| c.customer_type == v)
                && is_active.is_none_or(|v| c.is_active == v)
                && blacklisted.iter().flatten().all(|b| c.is_active != *b)
        },
        q.at()?,
        limit,
    )?;
    let page_count = page.total.div_ceil(limit) as u64;
    let meta = ListMeta {
        page: (page.start / limit + 1) as u64,
        limit: limit as u64,
        total: page.total as u64,
        page_count,
        has_previous_page: page.start > 0,
        has_next_page: page.has_more,
    };
    let data = CustomerPage {
        customers: page.items.iter().map(|r| r.customer.clone()).collect(),
        has_more: page.has_more,
        next_cursor: page.next_cursor,
        prev_cursor: page.previous_cursor,
        page_size: limit as u32,
        total: page.total as u64,
        meta: Some(meta),
    };
    Ok(answer(StatusCode::OK, "Customers retrieved", data, &caller, now))
}

/// `GET /api/customers/{id}`: the customer directly at `data`.
pub async fn get(shared: Data<Shared>, caller: Caller, id: Path<String>) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let c = company.customers.get(id)?.customer.clone();
    Ok(answer(StatusCode::OK, "Customer retrieved", c, &caller, now))
}

/// `PUT /api/customers/{id}`.
pub async fn put(
    shared: Data<Shared>,
    caller: Caller,
    id: Path<String>,
    body: JsonBody<CustomerUpdate>,
) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let c = update(company, id, &body.value, now)?;
    Ok(answer(StatusCode::OK, "Customer updated", c, &caller, now))
}

/// `POST /api/customers/blacklist/{id}` `{blacklist}`.
pub async fn blacklist(
    shared: Data<Shared>,
    caller: Caller,
    id: Path<String>,
    body: JsonBody<Blacklist>,
) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let update_body = CustomerUpdate {
        is_active: Some(!body.value.blacklist),
        ..CustomerUpdate::default()
    };
    let c = update(company, id, &update_body, now)?;
    let message = if body.value.blacklist {
        "Customer blacklisted"
    } else {
        "Customer removed from the blacklist"
    };
    Ok(answer(StatusCode::OK, message, c, &caller, now))
}

/// `DELETE /api/customers/{id}`: a hard delete, refused while the
/// customer holds a card that is not terminated.
pub async fn delete(shared: Data<Shared>, caller: Caller, id: Path<String>) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    company.customers.get(id)?;
    if company.cards.live_cards_of(id) > 0 {
        return Err(ApiError::unprocessable(
            codes::INVALID_STATE,
            "the customer holds cards that are not terminated; terminate them first",
        ));
    }
    let records = &mut company.customers.records;
    let index = records
        .iter()
        .position(|r| r.customer.id == id)
        .expect("found above");
    let removed = records.remove(index);
    Ok(answer(
        StatusCode::OK,
        "Customer deleted",
        removed.customer,
        &caller,
        now,
    ))
}

/// `POST /api/customers/{id}/card-kyc`.
pub async fn submit_kyc_handler(
    shared: Data<Shared>,
    caller: Caller,
    id: Path<String>,
    body: JsonBody<KycDetails>,
) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, mut fx) = store.company(caller.company_id, now)?;
    let kyc = submit_kyc(company, id, &body.value, &mut fx)?;
    Ok(answer(
        StatusCode::CREATED,
        "Card KYC submitted for review",
        kyc,
        &caller,
        now,
    ))
}

/// `GET /api/customers/{id}/card-kyc`.
pub async fn kyc_status(
    shared: Data<Shared>,
    caller: Caller,
    id: Path<String>,
) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let kyc = company.customers.get(id)?.kyc.clone().ok_or_else(|| {
        ApiError::NotFound(format!(
            "no card KYC was submitted for customer {id}; submit it with POST /api/customers/{id}/card-kyc"
        ))
    })?;
    Ok(answer(StatusCode::OK, "Card KYC status", kyc, &caller, now))
}
