//! Payouts: corridors, banks, account lookup, limits, quote, initialize,
//! finalize, reads, and the rail (see `model.rs`; its moves in
//! `lifecycle.rs`).

pub mod book;
pub mod corridors;
mod lifecycle;
pub mod model;
mod quote;

use actix_web::http::StatusCode;
use actix_web::web::{Data, Path};
use chrono::{DateTime, Utc};
use paydesk_api::models::payouts::{
    AccountLookup, AccountName, Bank, BankList, Corridor, Country, CountryList, FetchedPayout, FetchedQuote,
    FieldSpec, InitializeAnswer, InitializeRequest, OffRampPage, PageMeta, Payout, PayoutData, PayoutLimit,
    PayoutPage, QuoteData, QuoteRequest, Requirements, SettlePayout,
};
use rust_decimal::Decimal;
use sha2::{Digest, Sha256};

use crate::error::ApiError;
use crate::pagination::paginate;
use crate::respond::{envelope, json, parse_id, Caller, JsonAnswer, JsonBody, QueryParams};
use crate::state::Shared;

pub use book::PayoutBook;

fn corridor_or_404(country: &str) -> Result<&'static corridors::Corridor, ApiError> {
    corridors::find(country).ok_or_else(|| {
        ApiError::NotFound(format!(
            "'{country}' is not a payout country; the sandbox serves NG, KE and GH"
        ))
    })
}

fn details(c: &corridors::Corridor) -> Corridor {
    Corridor {
        country: c.country.to_owned(),
        name: c.name.to_owned(),
        currency: c.currency.to_owned(),
        destination_types: c.destination_types(),
        payment_reason_required_from_list: c.reasons_fixed,
        payment_reasons: c.reasons.iter().map(|r| (*r).to_owned()).collect(),
        lower_limit: Decimal::from(c.lower_limit),
        higher_limit: Decimal::from(c.higher_limit),
        from_assets: vec!["BTC".into(), "USDT".into(), "USDC".into()],
    }
}

/// `GET /api/payouts/supported-countries`.
pub async fn countries(shared: Data<Shared>, caller: Caller) -> Result<JsonAnswer, ApiError> {
    let countries = corridors::CORRIDORS
        .iter()
        .map(|c| Country {
            country: c.country.to_owned(),
            name: c.name.to_owned(),
            currency: c.currency.to_owned(),
            destination_types: c.destination_types(),
        })
        .collect();
    let now = shared.clock.now();
    Ok(envelope(
        StatusCode::OK,
        "Supported countries",
        CountryList { countries },
        &caller.request_id,
        now,
    ))
}

/// `GET /api/payouts/supported-countries/{country}`.
pub async fn corridor(
    shared: Data<Shared>,
    caller: Caller,
    country: Path<String>,
) -> Result<JsonAnswer, ApiError> {
    let c = corridor_or_404(&country)?;
    Ok(envelope(
        StatusCode::OK,
        "Corridor details",
        details(c),
        &caller.request_id,
        shared.clock.now(),
    ))
}

/// A corridor's requirements: its details, and the fields a beneficiary of
/// each destination type needs, in the shape the official client reads.
fn requirements_of(c: &corridors::Corridor) -> Requirements {
    let field = |name: &str, fixed: Option<&str>| FieldSpec {
        name: name.to_owned(),
        kind: "string".to_owned(),
        required: name != "account_name",
        fixed: fixed.map(str::to_owned),
    };
    let destination = c
        .destination_types()
        .into_iter()
        .map(|kind| {
            let fields = vec![
                field("type", Some(&kind)),
                field("account_number", None),
                field("bank_code", None),
                field("account_name", None),
            ];
            (kind, fields)
        })
        .collect();
    Requirements {
        corridor: details(c),
        code: c.country.to_owned(),
        flag: c.flag.to_owned(),
        dial_code: c.dial_code.to_owned(),
        destination,
    }
}

/// `GET /api/payouts/supported-countries/{country}/requirements` (the
/// official client's path).
pub async fn requirements(
    shared: Data<Shared>,
    caller: Caller,
    country: Path<String>,
) -> Result<JsonAnswer, ApiError> {
    let c = corridor_or_404(&country)?;
    Ok(envelope(
        StatusCode::OK,
        "Corridor requirements",
        requirements_of(c),
        &caller.request_id,
        shared.clock.now(),
    ))
}

/// `GET /api/payouts/banks/{countryCode}`.
pub async fn banks(
    shared: Data<Shared>,
    caller: Caller,
    country: Path<String>,
) -> Result<JsonAnswer, ApiError> {
    let c = corridor_or_404(&country)?;
    let list = BankList {
        country: c.country.to_owned(),
        banks: c
            .banks
            .iter()
            .map(|(name, code, kind)| Bank {
                name: (*name).to_owned(),
                code: (*code).to_owned(),
                kind: (*kind).to_owned(),
            })
            .collect(),
    };
    Ok(envelope(
        StatusCode::OK,
        "Banks retrieved",
        list,
        &caller.request_id,
        shared.clock.now(),
    ))
}

/// A stable made-up holder name for an account number.
fn holder_name(account_number: &str) -> String {
    const FIRST: &[&str] = &[
        "Ada", "Kwame", "Wanjiru", "Chidi", "Ama", "Otieno", "Ngozi", "Kofi",
    ];
    const LAST: &[&str] = &[
        "Okafor", "Mensah", "Kamau", "Adeyemi", "Owusu", "Mwangi", "Eze", "Boateng",
    ];
    let h = Sha256::digest(account_number.as_bytes());
    format!(
        "{} {}",
        FIRST[h[0] as usize % FIRST.len()],
        LAST[h[1] as usize % LAST.len()]
    )
}

/// `POST /api/payouts/beneficiary-lookup`; `0000000000` is never found.
pub async fn lookup(
    shared: Data<Shared>,
    caller: Caller,
    body: JsonBody<AccountLookup>,
) -> Result<JsonAnswer, ApiError> {
    let req = body.value;
    let c =
        corridors::find(&req.country).ok_or_else(|| ApiError::field("country", "must be NG, KE or GH"))?;
    // The official client's README sends `bank_account` for `bank`.
    if !matches!(req.kind.as_str(), "bank" | "bank_account" | "mobile_money") {
        return Err(ApiError::field(
            "type",
            "must be bank (or bank_account) or mobile_money",
        ));
    }
    if c.bank(&req.bank_code).is_none() {
        return Err(ApiError::field(
            "bank_code",
            format!("not a provider code of {}", c.country),
        ));
    }
    let number = req.account_number.trim();
    if number.is_empty() || !number.chars().all(|ch| ch.is_ascii_digit()) {
        return Err(ApiError::field("account_number", "must be digits"));
    }
    if number == "0000000000" {
        return Err(ApiError::NotFound(
            "no account with this number at this bank".to_owned(),
        ));
    }
    let found = AccountName {
        account_name: holder_name(number),
        account_number: number.to_owned(),
        bank_code: req.bank_code,
    };
    Ok(envelope(
        StatusCode::OK,
        "Account found",
        found,
        &caller.request_id,
        shared.clock.now(),
    ))
}

/// `GET /api/payouts/limits`.
pub async fn limits(shared: Data<Shared>, caller: Caller) -> Result<JsonAnswer, ApiError> {
    let market = &shared.store().market;
    let rows: Vec<PayoutLimit> = corridors::CORRIDORS
        .iter()
        .map(|c| PayoutLimit {
            lower_limit: Decimal::from(c.lower_limit),
            higher_limit: Decimal::from(c.higher_limit),
            currency: c.currency.to_owned(),
            country: c.country.to_owned(),
            rate: market.price("USDT", c.currency).unwrap_or_default(),
        })
        .collect();
    Ok(envelope(
        StatusCode::OK,
        "Payout limits",
        rows,
        &caller.request_id,
        shared.clock.now(),
    ))
}

/// `POST /api/payouts/quotes` (idempotent by reference).
pub async fn create_quote(
    shared: Data<Shared>,
    caller: Caller,
    body: JsonBody<QuoteRequest>,
) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, mut fx) = store.company(caller.company_id, now)?;
    let reference = body.value.reference.clone();
    company.once("payouts.quote", &reference, &body.canonical, |company| {
        let quote = model::quote(company, &body.value, &mut fx)?;
        Ok(envelope(
            StatusCode::CREATED,
            "Quote created",
            QuoteData { quote },
            &caller.request_id,
            now,
        ))
    })
}

/// `GET /api/payouts/quotes/{quoteId}`.
pub async fn get_quote(
    shared: Data<Shared>,
    caller: Caller,
    id: Path<String>,
) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let quote = company
        .payouts
        .find(id)
        .cloned()
        .ok_or_else(|| ApiError::NotFound(format!("no payout quote {id}")))?;
    Ok(envelope(
        StatusCode::OK,
        "Quote retrieved",
        FetchedQuote {
            off_ramps: vec![quote.clone()],
            quote,
        },
        &caller.request_id,
        now,
    ))
}

/// `POST /api/payouts/{quoteId}/initialize` (idempotent by reference).
pub async fn initialize(
    shared: Data<Shared>,
    caller: Caller,
    quote_id: Path<String>,
    body: JsonBody<InitializeRequest>,
) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, mut fx) = store.company(caller.company_id, now)?;
    let reference = body.value.reference.clone();
    company.once("payouts.initialize", &reference, &body.canonical, |company| {
        let payout = model::initialize(company, &quote_id, &body.value, &mut fx)?;
        let answer = InitializeAnswer {
            success: true,
            message: "Payout initialized".to_owned(),
            data: Some(PayoutData::new(payout.clone())),
            payout,
            request_id: caller.request_id.clone(),
            timestamp: now,
        };
        Ok(json(StatusCode::OK, &answer))
    })
}

/// `POST /api/payouts/{quoteId}/finalize`: runs once per quote; a repeat
/// gets the first answer.
pub async fn finalize(
    shared: Data<Shared>,
    caller: Caller,
    quote_id: Path<String>,
) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, mut fx) = store.company(caller.company_id, now)?;
    company.once("payouts.finalize", &quote_id, "", |company| {
        let payout = model::finalize(company, &quote_id, &mut fx)?;
        Ok(envelope(
            StatusCode::OK,
            "Payout finalized",
            PayoutData::new(payout),
            &caller.request_id,
            now,
        ))
    })
}

/// The caller's payout by its id (or its quote id), and the clock's now.
fn payout_by_id(shared: &Shared, caller: &Caller, id: &str) -> Result<(Payout, DateTime<Utc>), ApiError> {
    let id = parse_id(id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let payout = company
        .payouts
        .find(id)
        .cloned()
        .ok_or_else(|| ApiError::NotFound(format!("no payout {id}")))?;
    Ok((payout, now))
}

/// `GET /api/payouts/{id}` (the payout id; its quote id works too).
pub async fn get(shared: Data<Shared>, caller: Caller, id: Path<String>) -> Result<JsonAnswer, ApiError> {
    let (payout, now) = payout_by_id(&shared, &caller, &id)?;
    Ok(envelope(
        StatusCode::OK,
        "Payout retrieved",
        payout,
        &caller.request_id,
        now,
    ))
}

/// `GET /api/payouts/fetch/{id}` (the official client's path): as `GET
/// /api/payouts/{id}`, the record also in `off_ramps`.
pub async fn fetch(shared: Data<Shared>, caller: Caller, id: Path<String>) -> Result<JsonAnswer, ApiError> {
    let (payout, now) = payout_by_id(&shared, &caller, &id)?;
    Ok(envelope(
        StatusCode::OK,
        "Payout retrieved",
        FetchedPayout::new(payout),
        &caller.request_id,
        now,
    ))
}

const STATUSES: &str = "QUOTE, INITIATED, PENDING, PROCESSING, COMPLETED, FAILED, EXPIRED";

/// `GET /api/payouts?status&limit&cursor`, newest first.
pub async fn list(shared: Data<Shared>, caller: Caller, q: QueryParams) -> Result<JsonAnswer, ApiError> {
    q.known(&["status"])?;
    let status = q.parse_opt("status", STATUSES, |v| {
        let upper = v.to_ascii_uppercase();
        STATUSES.split(", ").any(|s| s == upper).then_some(upper)
    })?;
    let limit = q.limit(20, 100)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let page = paginate(
        company.payouts.records(),
        |r| status.as_ref().is_none_or(|s| r.payout.status.as_str() == s),
        q.at()?,
        limit,
    )?;
    let data = PayoutPage {
        payouts: page.items.iter().map(|r| r.payout.clone()).collect(),
        total: page.total as u64,
    };
    Ok(envelope(
        StatusCode::OK,
        "Payouts retrieved",
        data,
        &caller.request_id,
        now,
    ))
}

/// `GET /api/payouts/fetch/reference/{reference}` (the official client's
/// path): the newest payout with that reference.
pub async fn get_by_reference(
    shared: Data<Shared>,
    caller: Caller,
    reference: Path<String>,
) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let payout = company
        .payouts
        .by_reference(&reference)
        .cloned()
        .ok_or_else(|| ApiError::NotFound(format!("no payout with the reference '{}'", *reference)))?;
    Ok(envelope(
        StatusCode::OK,
        "Payout retrieved",
        FetchedPayout::new(payout),
        &caller.request_id,
        now,
    ))
}

/// Page `page` (from 1) of `take` payouts of `matching`, with where it
/// lies.
fn off_ramp_page(matching: &[&Payout], page: usize, take: usize) -> OffRampPage {
    let total = matching.len();
    let skip = (page - 1).saturating_mul(take);
    let payouts: Vec<Payout> = matching
        .iter()
        .skip(skip)
        .take(take)
        .map(|p| (*p).clone())
        .collect();
    let page_count = total.div_ceil(take);
    OffRampPage {
        meta: PageMeta {
            page: page as u64,
            take: take as u64,
            item_count: total as u64,
            page_count: page_count as u64,
            has_previous_page: page > 1,
            has_next_page: page < page_count,
        },
        off_ramps: payouts.clone(),
        payouts,
        total: total as u64,
    }
}

/// `GET /api/payouts/?order&page&take` (the official client's list):
/// `take` 1..100 (default 20), `page` from 1, `order` `desc` (newest
/// first, the default) or `asc`; same answer shape as the cursor list.
pub async fn list_paged(
    shared: Data<Shared>,
    caller: Caller,
    q: QueryParams,
) -> Result<JsonAnswer, ApiError> {
    q.only(&["take", "page", "order", "status"])?;
    let take = q.parse_opt("take", "the integers 1 to 100", |v| {
        v.parse::<usize>().ok().filter(|n| (1..=100).contains(n))
    })?;
    let page = q.parse_opt("page", "the integers from 1", |v| {
        v.parse::<usize>().ok().filter(|n| *n >= 1)
    })?;
    let oldest_first = q
        .parse_opt("order", "asc or desc", |v| {
            match v.to_ascii_lowercase().as_str() {
                "asc" => Some(true),
                "desc" => Some(false),
                _ => None,
            }
        })?
        .unwrap_or(false);
    let status = q.parse_opt("status", STATUSES, |v| {
        let upper = v.to_ascii_uppercase();
        STATUSES.split(", ").any(|s| s == upper).then_some(upper)
    })?;
    let take = take.unwrap_or(20);
    let page = page.unwrap_or(1);
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let mut matching: Vec<&Payout> = company
        .payouts
        .records()
        .iter()
        .map(|r| &r.payout)
        .filter(|p| status.as_ref().is_none_or(|s| p.status.as_str() == s))
        .collect();
    if !oldest_first {
        matching.reverse();
    }
    let data = off_ramp_page(&matching, page, take);
    Ok(envelope(
        StatusCode::OK,
        "Payouts retrieved",
        data,
        &caller.request_id,
        now,
    ))
}

/// `POST /sandbox/payouts/{id}/settle {outcome}`.
pub async fn settle(
    shared: Data<Shared>,
    caller: Caller,
    id: Path<String>,
    body: JsonBody<SettlePayout>,
) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let success = match body.value.outcome.as_str() {
        "completed" => true,
        "failed" => false,
        _ => return Err(ApiError::field("outcome", "must be completed or failed")),
    };
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, mut fx) = store.company(caller.company_id, now)?;
    let payout = model::settle_now(company, id, success, &mut fx)?;
    Ok(envelope(
        StatusCode::OK,
        "Payout settled",
        payout,
        &caller.request_id,
        now,
    ))
}
