//! Issuing a card: who may hold it (an approved customer, or one made
//! and approved inline), the lite card's rules, the wallet payment, and
//! provisioning on the clock.

use chrono::{Datelike, Duration, NaiveDate};
use paydesk_api::models::cards::{events, Card, CardCreatedStatus, CardTransactionStatus, NewCard};
use paydesk_api::models::customers::{KycDetails, KycStatus, NewCustomer};
use paydesk_api::models::transactions::{TransactionState, TransactionType};
use paydesk_api::units::{BaseUnits, Currency, MicroUnits};
use paydesk_api::wire::codes;
use rand::Rng;
use rust_decimal::Decimal;
use serde_json::json;
use uuid::Uuid;

use super::lifecycle::{transition, tx_transition, CardEvent, CardState, TxEvent};
use super::model::*;
use crate::areas::customers;
use crate::error::ApiError;
use crate::ledger::NewTransaction;
use crate::scheduler::Job;
use crate::state::{Company, Effects};
use crate::webhooks;

fn brand(value: Option<&str>, required: bool) -> Result<String, ApiError> {
    match value
        .map(|b| b.trim().to_ascii_lowercase())
        .filter(|b| !b.is_empty())
    {
        Some(b) if b == "visa" || b == "mastercard" => Ok(b),
        Some(_) => Err(ApiError::field("card_brand", "must be visa or mastercard")),
        None if required => Err(ApiError::field(
            "card_brand",
            "is required for lite cards: visa or mastercard",
        )),
        None => Ok("visa".to_owned()),
    }
}

/// Whose card it is: an existing customer (by id, or for lite cards by
/// email), or, in the older form, a new customer with inline KYC.
enum Holder {
    Existing(Uuid),
    New(Box<(NewCustomer, KycDetails)>),
}

fn kyc_refusal(status: Option<KycStatus>) -> ApiError {
    let detail = match status {
        Some(KycStatus::Pending) => "the customer's card KYC is still under review; wait for approval",
        Some(KycStatus::Rejected) => "the customer's card KYC was rejected; submit corrected details",
        _ => "the customer has no card KYC; submit it with POST /api/customers/{id}/card-kyc",
    };
    ApiError::unprocessable(codes::KYC_NOT_APPROVED, detail)
}

fn existing_holder(company: &Company, id: Uuid) -> Result<Holder, ApiError> {
    let record = company
        .customers
        .find(id)
        .ok_or_else(|| ApiError::NotFound(format!("no customer {id}")))?;
    if !record.customer.is_active {
        return Err(ApiError::unprocessable(
            codes::INVALID_STATE,
            "the customer is blacklisted or inactive; reactivate them before issuing a card",
        ));
    }
    let status = record.kyc.as_ref().map(|k| k.status);
    if status != Some(KycStatus::Approved) {
        return Err(kyc_refusal(status));
    }
    Ok(Holder::Existing(id))
}

fn holder(company: &Company, req: &NewCard, lite: bool, today: NaiveDate) -> Result<Holder, ApiError> {
    if let Some(id) = req.customer_id {
        return existing_holder(company, id);
    }
    let Some(c) = &req.customer else {
        return Err(ApiError::field(
            "customer_id",
            "is required: the id of a customer whose card KYC is approved",
        ));
    };
    if let Some(found) = company.customers.by_email(&c.email) {
        return existing_holder(company, found.customer.id);
    }
    if lite {
        return Err(kyc_refusal(None));
    }
    let opt = |v: &Option<String>| v.clone().unwrap_or_default();
    let details = customers::check_kyc(
        &KycDetails {
            country: opt(&c.country),
            date_of_birth: opt(&c.date_of_birth),
            id_type: opt(&c.id_type),
            id_number: opt(&c.id_number),
            dial_code: c.dial_code.clone(),
            phone_number: c.phone_number.clone(),
            line1: opt(&c.line1),
            city: opt(&c.city),
            state: opt(&c.state),
            postal_code: opt(&c.postal_code),
        },
        today,
    )
    .map_err(|e| match e {
        ApiError::Validation { errors, detail } => ApiError::Validation {
            detail: format!("customer.{detail}"),
            errors: errors
                .into_iter()
                .map(|mut f| {
                    f.field = format!("customer.{}", f.field);
                    f
                })
                .collect(),
        },
        other => other,
    })?;
    if details.id_number.ends_with(customers::REJECTED_SUFFIX) {
        return Err(kyc_refusal(Some(KycStatus::Rejected)));
    }
    let new = NewCustomer {
        email: c.email.clone(),
        customer_type: if c.customer_type.is_empty() {
            "individual".to_owned()
        } else {
            c.customer_type.clone()
        },
        first_name: Some(c.first_name.clone()),
        last_name: Some(c.last_name.clone()),
        phone_number: Some(format!("{}{}", details.dial_code, details.phone_number)),
        country_code: Some(details.country.clone()),
        reference: None,
    };
    Ok(Holder::New(Box::new((new, details))))
}

/// Lite card rules: returns (swipe_count, terminate_date, expiry).
fn lite_rules(req: &NewCard, today: NaiveDate) -> Result<(u32, NaiveDate, (u32, i32)), ApiError> {
    let amount = req.amount.value();
    if !(LITE_MIN_AMOUNT..=LITE_MAX_AMOUNT).contains(&amount) {
        return Err(ApiError::field(
            "amount",
            "lite cards take 2000000 to 250000000 micro-units (2.00 to 250.00)",
        ));
    }
    let swipes = match req.swipe_count {
        None => return Err(ApiError::field("swipe_count", "is required for lite cards")),
        Some(n) if n <= 0 => return Err(ApiError::field("swipe_count", "must be greater than 0")),
        Some(n) => u32::try_from(n).map_err(|_| ApiError::field("swipe_count", "is too large"))?,
    };
    let date_text = req
        .terminate_date
        .as_deref()
        .filter(|d| !d.trim().is_empty())
        .ok_or_else(|| ApiError::field("terminate_date", "is required for lite cards (YYYY-MM-DD)"))?;
    let date = NaiveDate::parse_from_str(date_text.trim(), "%Y-%m-%d")
        .map_err(|_| ApiError::field("terminate_date", "must be a date written YYYY-MM-DD"))?;
    if date <= today {
        return Err(ApiError::field(
            "terminate_date",
            format!("must be after today ({today})"),
        ));
    }
    let expiry = match req.expiry_date.as_deref().filter(|d| !d.trim().is_empty()) {
        None => (date.month(), date.year() + 1),
        Some(text) => {
            let first = NaiveDate::parse_from_str(&format!("{}-01", text.trim()), "%Y-%m-%d")
                .map_err(|_| ApiError::field("expiry_date", "must be a month written YYYY-MM"))?;
            if (first.year(), first.month()) < (date.year(), date.month()) {
                return Err(ApiError::field(
                    "expiry_date",
                    "must not be before the terminate_date's month",
                ));
            }
            (first.month(), first.year())
        }
    };
    Ok((swipes, date, expiry))
}

/// Issues a card. Every rule is checked, and the wallet's balance too,
/// before anything is created or moved.
pub fn create(
    company: &mut Company,
    req: &NewCard,
    caller: Uuid,
    fx: &mut Effects<'_>,
) -> Result<Card, ApiError> {
    let today = fx.now.date_naive();
    let lite = req.is_lite();
    let card_type = if lite {
        "lite".to_owned()
    } else {
        match req.card_type.as_deref().map(str::trim) {
            Some("virtual") => "virtual".to_owned(),
            Some("physical") if req.customer.is_some() => "physical".to_owned(),
            Some("physical") => {
                return Err(ApiError::field(
                    "card_type",
                    "physical cards exist only in the older form with a customer object; use virtual",
                ))
            }
            None => return Err(ApiError::field("card_type", "is required: virtual or lite")),
            Some(_) => return Err(ApiError::field("card_type", "must be virtual or lite")),
        }
    };
    if !req.currency.trim().eq_ignore_ascii_case(CARD_CURRENCY) {
        return Err(ApiError::field("currency", "cards are issued in USD"));
    }
    let amount = req.amount.value();
    if amount > MAX_AMOUNT {
        return Err(ApiError::field("amount", "is too large"));
    }
    if !lite && amount <= 0 {
        return Err(ApiError::field(
            "amount",
            "must be a positive integer of micro-units (5000000 = 5.00)",
        ));
    }
    let card_brand = brand(req.card_brand.as_deref(), lite)?;
    let lite_terms = if lite { Some(lite_rules(req, today)?) } else { None };
    let webhook_url = req.webhook_url.clone().unwrap_or_default();
    if !webhook_url.is_empty() {
        webhooks::check_url(&webhook_url).map_err(|reason| ApiError::field("webhook_url", reason))?;
    }
    let limits = req.card_limits.clone().unwrap_or_default();
    check_limits(&limits)?;
    let metadata = req.user_metadata.clone().unwrap_or_else(|| "{}".to_owned());
    if serde_json::from_str::<serde_json::Value>(&metadata).is_err() {
        return Err(ApiError::field("user_metadata", "must be a string of JSON"));
    }
    let holder = holder(company, req, lite, today)?;
    let name = match (
        req.name.as_deref().map(str::trim).filter(|n| !n.is_empty()),
        &holder,
    ) {
        (Some(n), _) => n.to_owned(),
        (None, Holder::Existing(id)) => company
            .customers
            .find(*id)
            .map(|r| {
                let name = r.customer.full_name();
                if name.is_empty() {
                    // A customer without a name is known by their email.
                    r.customer.email.split('@').next().unwrap_or_default().to_owned()
                } else {
                    name
                }
            })
            .unwrap_or_default(),
        (None, Holder::New(..)) => return Err(ApiError::field("name", "is required in the older form")),
    };
    let wallet = Currency::parse(FUNDING_WALLET).expect("a valid code");
    let fee = funding_fee(amount);
    let available = company
        .ledger
        .account(&wallet)
        .map_or(0, |a| a.available_balance().value());
    if available < amount + fee {
        return Err(ApiError::unprocessable(
            codes::INSUFFICIENT_BALANCE,
            format!(
                "the USDT wallet holds {} but the card needs {} (amount and 1% fee)",
                BaseUnits(available).formatted(&wallet),
                BaseUnits(amount + fee).formatted(&wallet)
            ),
        ));
    }

    let customer_id = match holder {
        Holder::Existing(id) => id,
        Holder::New(new) => {
            let (new, details) = *new;
            let c = customers::create(company, &new, caller, fx.now)?;
            customers::approve_inline(company, c.id, details, fx.now);
            c.id
        }
    };
    let id = Uuid::new_v4();
    company.ledger.post(
        NewTransaction {
            currency: wallet,
            kind: TransactionType::P2pTransfer,
            state: TransactionState::Settled,
            amount: BaseUnits(-amount),
            fee: BaseUnits(fee),
            reference: format!("CARD_CREATE_{id}"),
            idempotency_key: req.reference.clone().unwrap_or_default(),
            metadata: json!({"channel": "card", "card_id": id, "purpose": "card_issue"})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        },
        fx.now,
    )?;
    let pan = new_pan(&card_brand);
    let expiry = match lite_terms {
        Some((_, _, expiry)) => expiry,
        None => (fx.now.month(), fx.now.year() + 3),
    };
    let card = Card {
        id,
        company_id: company.id,
        customer_id,
        created_by: req.created_by.unwrap_or(caller),
        card_type,
        status: CardState::Pending,
        created_status: CardCreatedStatus::Processing,
        card_brand,
        preferred_name: name.clone(),
        name,
        first_six_digit: String::new(),
        last_four_digit: String::new(),
        masked_pan: String::new(),
        balance_amount: MicroUnits::ZERO,
        balance_currency: CARD_CURRENCY.to_owned(),
        display_amount: Decimal::ZERO,
        contactless_payment: req.contactless_payment.unwrap_or(false),
        spending_limits: limits.clone(),
        card_limits: limits,
        reference: format!("CARD_CREATE_{id}"),
        webhook_url,
        user_metadata: metadata,
        billing_address: issuer_address(),
        swipe_count: lite_terms.map(|(n, _, _)| n),
        swipes_remaining: lite_terms.map(|(n, _, _)| n),
        terminate_date: lite_terms.map(|(_, d, _)| d),
        terminated_at: None,
        termination_reason: None,
        created_at: fx.now,
        updated_at: fx.now,
    };
    let seq = company.cards.records.last().map_or(1, |r| r.seq + 1);
    let mut record = CardRecord {
        seq,
        card: card.clone(),
        pan,
        cvv: format!("{:03}", rand::thread_rng().gen_range(0..1000)),
        expiry,
        initial_amount: amount,
        last_fund: None,
        last_withdraw: None,
        secure_reads: Vec::new(),
        transactions: Vec::new(),
    };
    push_tx(
        &mut record,
        new_tx(
            &card,
            "funding",
            amount,
            fee,
            &format!("CARD_CREATE_{id}"),
            fx.now,
        ),
        None,
    );
    company.cards.records.push(record);
    fx.scheduler.schedule(
        fx.now + Duration::seconds(PROVISION_SECS),
        Job::ProvisionCard {
            company_id: company.id,
            card_id: id,
        },
    );
    if let Some((_, date, _)) = lite_terms {
        let at = date.and_hms_opt(0, 0, 0).expect("midnight exists").and_utc();
        fx.scheduler.schedule(
            at,
            Job::EndLiteCard {
                company_id: company.id,
                card_id: id,
            },
        );
    }
    Ok(card)
}

/// The issuer finishes provisioning: active, PAN shown, balance loaded.
pub fn provision(company: &mut Company, card_id: Uuid, fx: &mut Effects<'_>) {
    let Ok(index) = company.cards.index(card_id) else {
        return;
    };
    let record = &mut company.cards.records[index];
    let Ok(next) = transition(&record.card.status, CardEvent::Provisioned) else {
        return;
    };
    let card = &mut record.card;
    card.status = next;
    card.created_status = CardCreatedStatus::Completed;
    card.first_six_digit = record.pan[..6].to_owned();
    card.last_four_digit = record.pan[record.pan.len() - 4..].to_owned();
    card.masked_pan = format!("{}******{}", card.first_six_digit, card.last_four_digit);
    let before = card.balance_amount;
    set_balance(card, record.initial_amount, fx.now);
    let card_after = card.balance_amount;
    if let Some(t) = record
        .transactions
        .iter_mut()
        .find(|t| t.tx.status == CardTransactionStatus::Pending)
    {
        if let Ok(completed) = tx_transition(&t.tx.status, TxEvent::Complete) {
            t.tx.status = completed;
        }
        t.tx.balance_before = before;
        t.tx.balance_after = card_after;
        t.tx.updated_at = fx.now;
        t.tx.completed_at = Some(fx.now);
    }
    let card = record.card.clone();
    let mut data = serde_json::to_value(&card).expect("cards serialize");
    data["card_id"] = json!(card.id);
    emit(company, &card, events::CREATED, data, fx);
}
