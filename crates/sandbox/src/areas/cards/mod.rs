//! Cards: issue (virtual and lite), reads, fund and withdraw, freeze,
//! terminate, secure details, spend limits, card transactions, and spends
//! through the control API. The rules live in `model.rs` (status, reads and
//! limits), `lifecycle.rs` (the status moves), `issue.rs`, `transfers.rs` and `spend.rs`, the records in
//! `book.rs`.

pub mod book;
mod issue;
mod lifecycle;
pub mod model;
mod spend;
mod transfers;

use actix_web::http::StatusCode;
use actix_web::web::{Data, Path};
use paydesk_api::models::cards::CardState;
use paydesk_api::models::cards::{
    BalanceAnswer, BalanceChange, BalanceDirection, CardData, CardLimits, CardPage, CardStatusData,
    CardTransactionData, CardTransactionPage, NewCard, SecureData, SimulateSpend, StatusChange, Terminate,
};

use crate::error::ApiError;
use crate::official;
use crate::pagination::paginate;
use crate::respond::{answer, json, parse_id, Caller, JsonAnswer, JsonBody, QueryParams};
use crate::state::Shared;

pub use model::CardBook;

/// `POST /api/cards`: a virtual or lite card; `reference` makes it
/// idempotent.
pub async fn create(
    shared: Data<Shared>,
    caller: Caller,
    body: JsonBody<NewCard>,
) -> Result<JsonAnswer, ApiError> {
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, mut fx) = store.company(caller.company_id, now)?;
    let reference = body.value.reference.clone().unwrap_or_default();
    company.once("create_card", &reference, &body.canonical, |company| {
        let card = model::create(company, &body.value, caller.client_id, &mut fx)?;
        let message = if card.card_type == "lite" {
            "Lite card creation in progress"
        } else {
            "Card creation in progress"
        };
        Ok(answer(
            StatusCode::CREATED,
            message,
            official::card_data(CardData { card }),
            &caller,
            now,
        ))
    })
}

const CARD_STATUSES: &[&str] = &["active", "pending", "frozen", "terminated"];
const CARD_TYPES: &[&str] = &["virtual", "physical", "lite"];

/// `GET /api/cards` with card_type, status, search (last four digits or
/// cardholder name), customer_id, cursor, page, offset and limit.
pub async fn list(shared: Data<Shared>, caller: Caller, q: QueryParams) -> Result<JsonAnswer, ApiError> {
    q.known(&["card_type", "status", "search", "customer_id", "offset"])?;
    let limit = q.limit(20, 100)?;
    let card_type = q.one_of("card_type", CARD_TYPES)?;
    let status = q.one_of("status", CARD_STATUSES)?;
    let search = q.get("search").map(|s| s.trim().to_lowercase());
    let customer = q.get("customer_id").map(parse_id).transpose()?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let page = paginate(
        company.cards.records(),
        |r| {
            let c = &r.card;
            customer.is_none_or(|id| c.customer_id == id)
                && card_type.as_deref().is_none_or(|t| c.card_type == t)
                && status.as_deref().is_none_or(|s| c.status.as_str() == s)
                && search.as_deref().is_none_or(|s| {
                    (s.bytes().all(|b| b.is_ascii_digit())
                        && !c.last_four_digit.is_empty()
                        && c.last_four_digit.ends_with(s))
                        || c.name.to_lowercase().contains(s)
                        || c.preferred_name.to_lowercase().contains(s)
                })
        },
        q.at()?,
        limit,
    )?;
    let data = official::card_page(CardPage {
        page_info: model::page_info(&page),
        cards: page.items.iter().map(|r| r.card.clone()).collect(),
    });
    Ok(answer(StatusCode::OK, "Cards retrieved", data, &caller, now))
}

/// `GET /api/customers/{id}/cards`.
pub async fn of_customer(
    shared: Data<Shared>,
    caller: Caller,
    id: Path<String>,
    q: QueryParams,
) -> Result<JsonAnswer, ApiError> {
    q.known(&["offset"])?;
    let id = parse_id(&id)?;
    let limit = q.limit(20, 100)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    company.customers.get(id)?;
    let page = paginate(
        company.cards.records(),
        |r| r.card.customer_id == id,
        q.at()?,
        limit,
    )?;
    let data = official::card_page(CardPage {
        page_info: model::page_info(&page),
        cards: page.items.iter().map(|r| r.card.clone()).collect(),
    });
    Ok(answer(
        StatusCode::OK,
        "Customer cards retrieved",
        data,
        &caller,
        now,
    ))
}

/// `GET /api/cards/{id}`: the record, never the PAN or CVV.
pub async fn get(shared: Data<Shared>, caller: Caller, id: Path<String>) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let card = company.cards.get(id)?.card.clone();
    Ok(answer(
        StatusCode::OK,
        "Card retrieved",
        official::card_data(CardData { card }),
        &caller,
        now,
    ))
}

/// `POST /api/cards/{id}/balance`: fund or withdraw, pending until the
/// provider settles; the same reference returns the original transaction.
pub async fn balance(
    shared: Data<Shared>,
    caller: Caller,
    id: Path<String>,
    body: JsonBody<BalanceChange>,
) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, mut fx) = store.company(caller.company_id, now)?;
    let req = &body.value;
    let reference = req.reference.trim().to_owned();
    // Fund and withdraw are one operation, and the card is part of the request.
    let canonical = format!("{id}:{}", body.canonical);
    company.once("card_balance", &reference, &canonical, |company| {
        let transaction = model::change_balance(company, id, req, &mut fx)?;
        let message = match req.direction {
            BalanceDirection::Fund => "Card funding initiated",
            BalanceDirection::Withdraw => "Card withdrawal initiated",
        };
        // The spec's shape: the envelope, the provider's own flag and
        // message inside `data`, and a top-level request_id.
        Ok(json(
            StatusCode::OK,
            &serde_json::json!({
                "success": true,
                "message": message,
                "data": BalanceAnswer {
                    success: false,
                    message: "Transaction is processing".to_owned(),
                    transaction,
                },
                "request_id": caller.request_id,
                "metadata": {"request_id": caller.request_id},
                "timestamp": now,
            }),
        ))
    })
}

/// `POST /api/cards/{id}/status`: `frozen` or `active` only.
pub async fn status(
    shared: Data<Shared>,
    caller: Caller,
    id: Path<String>,
    body: JsonBody<StatusChange>,
) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let card = model::set_status(company, id, body.value.status.as_str(), now)?;
    let message = if card.status == CardState::Frozen {
        "Card frozen successfully"
    } else {
        "Card activated successfully"
    };
    Ok(answer(
        StatusCode::OK,
        message,
        CardStatusData { card },
        &caller,
        now,
    ))
}

/// `DELETE /api/cards/{id}` with `{reason}`.
pub async fn terminate(
    shared: Data<Shared>,
    caller: Caller,
    id: Path<String>,
    body: JsonBody<Terminate>,
) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let done = model::terminate(company, id, &body.value.reason, now)?;
    Ok(answer(StatusCode::OK, "Card terminated", done, &caller, now))
}

/// `GET /api/cards/{id}/secure`.
pub async fn secure(shared: Data<Shared>, caller: Caller, id: Path<String>) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let details = model::secure_details(company, id, now)?;
    Ok(answer(
        StatusCode::OK,
        "Card details retrieved",
        SecureData { details },
        &caller,
        now,
    ))
}

/// `PUT /api/cards/{id}/spend-limits`: answers the updated card.
pub async fn spend_limits(
    shared: Data<Shared>,
    caller: Caller,
    id: Path<String>,
    body: JsonBody<CardLimits>,
) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let card = model::set_limits(company, id, &body.value, now)?;
    Ok(answer(
        StatusCode::OK,
        "Spend limits updated",
        official::card_data(CardData { card }),
        &caller,
        now,
    ))
}

/// `GET /api/cards/{id}/transactions`.
pub async fn transactions(
    shared: Data<Shared>,
    caller: Caller,
    id: Path<String>,
    q: QueryParams,
) -> Result<JsonAnswer, ApiError> {
    q.known(&["offset"])?;
    let id = parse_id(&id)?;
    let limit = q.limit(20, 100)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let (transactions, page_info) = company.cards.get(id)?.transaction_page(q.at()?, limit)?;
    Ok(answer(
        StatusCode::OK,
        "Card transactions retrieved",
        CardTransactionPage {
            transactions,
            page_info,
        },
        &caller,
        now,
    ))
}

/// `GET /api/cards/{id}/transactions/{transactionId}`.
pub async fn transaction(
    shared: Data<Shared>,
    caller: Caller,
    path: Path<(String, String)>,
) -> Result<JsonAnswer, ApiError> {
    let (card_id, tx_id) = path.into_inner();
    let (card_id, tx_id) = (parse_id(&card_id)?, parse_id(&tx_id)?);
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, _) = store.company(caller.company_id, now)?;
    let transaction = company
        .cards
        .get(card_id)?
        .transaction(tx_id)
        .cloned()
        .ok_or_else(|| ApiError::NotFound(format!("no transaction {tx_id} on card {card_id}")))?;
    Ok(answer(
        StatusCode::OK,
        "Card transaction retrieved",
        CardTransactionData { transaction },
        &caller,
        now,
    ))
}

/// `POST /sandbox/cards/{id}/spend`: a merchant authorization.
pub async fn simulate_spend(
    shared: Data<Shared>,
    caller: Caller,
    id: Path<String>,
    body: JsonBody<SimulateSpend>,
) -> Result<JsonAnswer, ApiError> {
    let id = parse_id(&id)?;
    let now = shared.clock.now();
    let mut store = shared.store();
    let (company, mut fx) = store.company(caller.company_id, now)?;
    let outcome = model::spend(company, id, &body.value, &mut fx)?;
    let message = if outcome.approved {
        "Spend approved"
    } else {
        "Spend declined"
    };
    Ok(answer(StatusCode::OK, message, outcome, &caller, now))
}
