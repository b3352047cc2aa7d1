//! The card state machine as plain functions over the company's data
//! (spec "Cards", "States and transitions"; sandbox-rules.md, "Money" and
//! "Cards"):
//!
//! - create: the USDT wallet pays `amount` + 1% at once; the card is
//!   `pending`/`processing` with an empty `masked_pan` and balance 0 until
//!   provisioning completes `PROVISION_SECS` later, which loads `amount` and
//!   emits `virtualcard.created.completed`;
//! - fund and withdraw are pending for `TRANSFER_SECS`: a fund holds the
//!   amount and 1% in the wallet and credits the card on completion; a
//!   withdraw debits the card on completion and credits the wallet the
//!   amount less 1%; rate limited per card (1 fund per 30 s, 1 withdraw per
//!   60 s, counting accepted calls only);
//! - status moves between `active` and `frozen` only; termination needs a
//!   card at least 24 hours old and returns the whole balance, no fee;
//! - lite cards can't be funded or withdrawn from, count swipes, and end at
//!   00:00 UTC of their `terminate_date`.
//!
//! Decisions where the documents are silent: ledger movements to and from
//! cards are `P2P_TRANSFER` transactions whose metadata names the card;
//! setting the status a card already has is a no-op answer; a declined
//! spend is kept as a `failed` card transaction with its reason; a fund
//! whose card was terminated meanwhile fails and releases the wallet hold;
//! fees are rounded up to the micro-unit.

use chrono::{DateTime, Datelike, Duration, NaiveDate, Utc};
use paydesk_api::models::cards::{
    events, BalanceChange, BalanceDirection, BillingAddress, Card, CardLimits, CardStatus, CardTransaction,
    NewCard, PageInfo, SecureDetails, SimulateSpend, SpendOutcome, Termination,
};
use paydesk_api::models::cards::{CardCreatedStatus, CardState, CardTransactionStatus};
use paydesk_api::models::customers::{KycDetails, KycStatus, NewCustomer};
use paydesk_api::models::transactions::{TransactionState, TransactionType};
use paydesk_api::units::{BaseUnits, Currency, MicroUnits};
use paydesk_api::wire::codes;
use rand::Rng;
use rust_decimal::Decimal;
use serde_json::json;
use uuid::Uuid;

use crate::areas::customers;
use crate::book::Book;
use crate::error::ApiError;
use crate::ledger::NewTransaction;
use crate::pagination::{paginate, Page, Sequenced};
use crate::respond::At;
use crate::scheduler::Job;
use crate::state::{Company, Effects};
use crate::webhooks;

pub const PROVISION_SECS: i64 = 30;
pub const TRANSFER_SECS: i64 = 20;
pub const FUND_WINDOW_SECS: i64 = 30;
pub const WITHDRAW_WINDOW_SECS: i64 = 60;
pub const SECURE_WINDOW_SECS: i64 = 60;
pub const SECURE_READS_PER_WINDOW: usize = 2;
pub const MIN_AGE_TO_TERMINATE_SECS: i64 = 24 * 3600;
/// No card amount (load, fund, withdraw, spend, limit) exceeds this:
/// 1,000,000,000.00 in micro-units.
pub const MAX_AMOUNT: i64 = 1_000_000_000_000_000;
pub const LITE_MIN_AMOUNT: i64 = 2_000_000;
pub const LITE_MAX_AMOUNT: i64 = 250_000_000;
/// Cards are funded from this wallet, 1 card micro-unit = 1 base unit.
const FUNDING_WALLET: &str = "USDT";
const CARD_CURRENCY: &str = "USD";

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct TxRecord {
    seq: u64,
    tx: CardTransaction,
    /// The wallet transaction of a fund, settled or failed with it.
    wallet_tx: Option<Uuid>,
}

impl Sequenced for TxRecord {
    fn seq(&self) -> u64 {
        self.seq
    }
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct CardRecord {
    seq: u64,
    pub card: Card,
    pan: String,
    cvv: String,
    expiry: (u32, i32),
    initial_amount: i64,
    last_fund: Option<DateTime<Utc>>,
    last_withdraw: Option<DateTime<Utc>>,
    secure_reads: Vec<DateTime<Utc>>,
    transactions: Vec<TxRecord>,
}

impl Sequenced for CardRecord {
    fn seq(&self) -> u64 {
        self.seq
    }
}

impl CardRecord {
    pub fn transaction(&self, id: Uuid) -> Option<&CardTransaction> {
        self.transactions.iter().map(|r| &r.tx).find(|t| t.id == id)
    }

    /// One page of the card's transactions, newest first.
    pub fn transaction_page(
        &self,
        at: At<'_>,
        limit: usize,
    ) -> Result<(Vec<CardTransaction>, PageInfo), ApiError> {
        let page = paginate(&self.transactions, |_| true, at, limit)?;
        let info = page_info(&page);
        Ok((page.items.into_iter().map(|r| r.tx.clone()).collect(), info))
    }
}

/// The spec's `page_info` of a cursor page.
pub fn page_info<T>(page: &Page<'_, T>) -> PageInfo {
    PageInfo {
        has_next_page: page.has_more,
        has_previous_page: !page.previous_cursor.is_empty(),
        previous_cursor: page.previous_cursor.clone(),
        next_cursor: page.next_cursor.clone(),
        total: page.total as u64,
    }
}

impl crate::book::Record for CardRecord {
    type Key = Uuid;

    fn key(&self) -> Uuid {
        self.card.id
    }
}

#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct CardBook {
    pub(crate) records: Book<CardRecord>,
}

impl CardBook {
    pub fn records(&self) -> &[CardRecord] {
        &self.records
    }

    pub fn get(&self, id: Uuid) -> Result<&CardRecord, ApiError> {
        self.records
            .iter()
            .find(|r| r.card.id == id)
            .ok_or_else(|| ApiError::NotFound(format!("no card {id}")))
    }

    fn index(&self, id: Uuid) -> Result<usize, ApiError> {
        self.records
            .iter()
            .position(|r| r.card.id == id)
            .ok_or_else(|| ApiError::NotFound(format!("no card {id}")))
    }

    /// Cards of a customer that are not terminated.
    pub fn live_cards_of(&self, customer_id: Uuid) -> usize {
        self.records
            .iter()
            .filter(|r| r.card.customer_id == customer_id && r.card.status != CardState::Terminated)
            .count()
    }
}

/// 1% of `amount`, rounded up to the micro-unit.
pub fn funding_fee(amount: i64) -> i64 {
    (amount + 99) / 100
}

fn display(amount: MicroUnits) -> Decimal {
    Decimal::new(amount.value(), 6).normalize()
}

fn luhn_check_digit(digits: &str) -> u32 {
    let sum: u32 = digits
        .chars()
        .rev()
        .filter_map(|c| c.to_digit(10))
        .enumerate()
        .map(|(i, d)| {
            if i % 2 == 0 {
                let doubled = d * 2;
                if doubled > 9 {
                    doubled - 9
                } else {
                    doubled
                }
            } else {
                d
            }
        })
        .sum();
    (10 - sum % 10) % 10
}

/// Whether a card number passes the Luhn check.
pub fn passes_luhn(number: &str) -> bool {
    let (body, last) = number.split_at(number.len().saturating_sub(1));
    !body.is_empty()
        && number.bytes().all(|b| b.is_ascii_digit())
        && last.parse::<u32>().ok() == Some(luhn_check_digit(body))
}

/// A 16-digit number of the brand's range that passes Luhn.
fn new_pan(brand: &str) -> String {
    let bin = if brand == "mastercard" { "532718" } else { "459234" };
    let mut rng = rand::thread_rng();
    let middle: String = (0..9)
        .map(|_| char::from(b'0' + rng.gen_range(0..10u8)))
        .collect();
    let body = format!("{bin}{middle}");
    let check = luhn_check_digit(&body);
    format!("{body}{check}")
}

fn issuer_address() -> BillingAddress {
    BillingAddress {
        line1: "1 Sandbox Way".to_owned(),
        line2: "Suite 200".to_owned(),
        city: "San Francisco".to_owned(),
        state: "CA".to_owned(),
        postal_code: "94105".to_owned(),
        country: "US".to_owned(),
    }
}

fn check_limits(limits: &CardLimits) -> Result<(), ApiError> {
    for (key, value) in limits.entries() {
        if value.is_some_and(|v| v.value() <= 0 || v.value() > MAX_AMOUNT) {
            return Err(ApiError::field(
                key,
                "must be a positive integer of micro-units (5000000 = 5.00), or left out for no limit",
            ));
        }
    }
    Ok(())
}

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

fn new_tx(
    card: &Card,
    kind: &str,
    amount: i64,
    fee: i64,
    reference: &str,
    now: DateTime<Utc>,
) -> CardTransaction {
    CardTransaction {
        id: Uuid::new_v4(),
        card_id: card.id,
        kind: kind.to_owned(),
        status: CardTransactionStatus::Pending,
        amount: MicroUnits(amount),
        currency: card.balance_currency.clone(),
        balance_before: card.balance_amount,
        balance_after: card.balance_amount,
        fee_amount: MicroUnits(fee),
        fee_type: if kind == "spend" { "" } else { "funding_fee" }.to_owned(),
        reference: reference.to_owned(),
        merchant_name: String::new(),
        failure_reason: None,
        created_at: now,
        updated_at: now,
        completed_at: None,
    }
}

fn push_tx(record: &mut CardRecord, tx: CardTransaction, wallet_tx: Option<Uuid>) {
    let seq = record.transactions.last().map_or(1, |t| t.seq + 1);
    record.transactions.push(TxRecord { seq, tx, wallet_tx });
}

fn set_balance(card: &mut Card, balance: i64, now: DateTime<Utc>) {
    card.balance_amount = MicroUnits(balance);
    card.display_amount = display(card.balance_amount);
    card.updated_at = now;
}

fn emit(company: &Company, card: &Card, event: &str, data: serde_json::Value, fx: &mut Effects<'_>) {
    let extra: Vec<&str> = Some(card.webhook_url.as_str())
        .filter(|u| !u.is_empty())
        .into_iter()
        .collect();
    fx.outbox
        .emit(company.id, &company.webhook_targets(&extra), event, data, fx.now);
}

/// The issuer finishes provisioning: active, PAN shown, balance loaded.
pub fn provision(company: &mut Company, card_id: Uuid, fx: &mut Effects<'_>) {
    let Ok(index) = company.cards.index(card_id) else {
        return;
    };
    let record = &mut company.cards.records[index];
    if record.card.status != CardState::Pending {
        return;
    }
    let card = &mut record.card;
    card.status = CardState::Active;
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
        t.tx.status = CardTransactionStatus::Completed;
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

fn usable(card: &Card, action: &str) -> Result<(), ApiError> {
    match card.status.as_str() {
        "terminated" => Err(ApiError::unprocessable(
            codes::INVALID_STATE,
            format!("the card is terminated and can't be {action}"),
        )),
        "pending" => Err(ApiError::unprocessable(
            codes::INVALID_STATE,
            format!("the card is still being provisioned; it can be {action} once active"),
        )),
        _ => Ok(()),
    }
}

/// Seconds to wait until `at`, rounded up: a client that waits exactly
/// `Retry-After` is let through.
fn whole_seconds_until(now: DateTime<Utc>, at: DateTime<Utc>) -> u64 {
    let millis = (at - now).num_milliseconds().max(1);
    ((millis + 999) / 1000) as u64
}

fn rate_limit(
    last: Option<DateTime<Utc>>,
    window: i64,
    now: DateTime<Utc>,
    what: &str,
) -> Result<(), ApiError> {
    if let Some(last) = last {
        let open_at = last + Duration::seconds(window);
        if open_at > now {
            let wait = whole_seconds_until(now, open_at);
            return Err(ApiError::RateLimited {
                retry_after_secs: wait,
                detail: format!("{what}; try again in {wait} s"),
            });
        }
    }
    Ok(())
}

/// Starts a fund or withdraw; the transaction completes on the clock.
pub fn change_balance(
    company: &mut Company,
    card_id: Uuid,
    req: &BalanceChange,
    fx: &mut Effects<'_>,
) -> Result<CardTransaction, ApiError> {
    if req.reference.trim().is_empty() {
        return Err(ApiError::field("reference", "is required"));
    }
    let amount = req.amount.value();
    if amount <= 0 || amount > MAX_AMOUNT {
        return Err(ApiError::field(
            "amount",
            "must be a positive integer of micro-units (5000000 = 5.00)",
        ));
    }
    let index = company.cards.index(card_id)?;
    let record = &company.cards.records[index];
    let action = match req.direction {
        BalanceDirection::Fund => "funded",
        BalanceDirection::Withdraw => "withdrawn from",
    };
    usable(&record.card, action)?;
    if record.card.card_type == "lite" {
        return Err(ApiError::unprocessable(
            codes::INVALID_STATE,
            "lite cards can only be spent and terminated; they can't be funded or withdrawn from",
        ));
    }
    let fee = funding_fee(amount);
    let wallet = Currency::parse(FUNDING_WALLET).expect("a valid code");
    let (kind, wallet_tx) = match req.direction {
        BalanceDirection::Fund => {
            rate_limit(
                record.last_fund,
                FUND_WINDOW_SECS,
                fx.now,
                "a card can be funded once per 30 seconds",
            )?;
            let tx_id = company
                .ledger
                .post(
                    NewTransaction {
                        currency: wallet,
                        kind: TransactionType::P2pTransfer,
                        state: TransactionState::Pending,
                        amount: BaseUnits(-amount),
                        fee: BaseUnits(fee),
                        reference: format!("CARD_FUND_{}", Uuid::new_v4().simple()),
                        idempotency_key: req.reference.clone(),
                        metadata: json!({"channel": "card", "card_id": card_id, "purpose": "card_funding"})
                            .as_object()
                            .cloned()
                            .unwrap_or_default(),
                    },
                    fx.now,
                )?
                .transaction_id;
            ("funding", Some(tx_id))
        }
        BalanceDirection::Withdraw => {
            rate_limit(
                record.last_withdraw,
                WITHDRAW_WINDOW_SECS,
                fx.now,
                "a card allows one withdrawal per 60 seconds",
            )?;
            if record.card.balance_amount.value() < amount {
                return Err(ApiError::unprocessable(
                    codes::INSUFFICIENT_BALANCE,
                    format!(
                        "the card holds {} micro-units, less than the {amount} asked",
                        record.card.balance_amount.value()
                    ),
                ));
            }
            ("withdrawal", None)
        }
    };
    let record = &mut company.cards.records[index];
    match req.direction {
        BalanceDirection::Fund => record.last_fund = Some(fx.now),
        BalanceDirection::Withdraw => record.last_withdraw = Some(fx.now),
    }
    let tx = new_tx(&record.card, kind, amount, fee, &req.reference, fx.now);
    push_tx(record, tx.clone(), wallet_tx);
    fx.scheduler.schedule(
        fx.now + Duration::seconds(TRANSFER_SECS),
        Job::SettleCardTransfer {
            company_id: company.id,
            card_id,
            transaction_id: tx.id,
        },
    );
    Ok(tx)
}

/// A pending fund or withdraw completes (or fails when the card can no
/// longer take it).
pub fn settle_transfer(company: &mut Company, card_id: Uuid, tx_id: Uuid, fx: &mut Effects<'_>) {
    let Ok(index) = company.cards.index(card_id) else {
        return;
    };
    let record = &company.cards.records[index];
    let Some(t) = record
        .transactions
        .iter()
        .position(|t| t.tx.id == tx_id && t.tx.status == CardTransactionStatus::Pending)
    else {
        return;
    };
    let TxRecord { tx, wallet_tx, .. } = record.transactions[t].clone();
    let balance = record.card.balance_amount.value();
    let amount = tx.amount.value();
    let terminated = record.card.status == CardState::Terminated;
    let wallet = Currency::parse(FUNDING_WALLET).expect("a valid code");
    let failure = if terminated {
        Some("the card was terminated before the transfer completed")
    } else if tx.kind == "withdrawal" && balance < amount {
        Some("the card balance fell below the amount before the withdrawal completed")
    } else {
        None
    };
    let after = match (failure, tx.kind.as_str()) {
        (Some(_), _) => balance,
        (None, "funding") => balance + amount,
        (None, _) => balance - amount,
    };
    if let Some(wallet_tx) = wallet_tx {
        let state = if failure.is_some() {
            TransactionState::Failed
        } else {
            TransactionState::Settled
        };
        if let Err(e) = company
            .ledger
            .transition(wallet_tx, TransactionType::P2pTransfer, state, fx.now)
        {
            tracing::error!(error = %e, card = %card_id, "card funding could not be settled in the ledger");
        }
    } else if failure.is_none() {
        let credit = company.ledger.post(
            NewTransaction {
                currency: wallet,
                kind: TransactionType::P2pTransfer,
                state: TransactionState::Settled,
                amount: BaseUnits(amount),
                // A card micro-unit equals a USDT base unit (1 USD = 1 USDT).
                fee: BaseUnits(tx.fee_amount.value()),
                reference: format!("CARD_WITHDRAW_{}", tx.id.simple()),
                idempotency_key: tx.reference.clone(),
                metadata: json!({"channel": "card", "card_id": card_id, "purpose": "card_withdrawal"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            },
            fx.now,
        );
        if let Err(e) = credit {
            tracing::error!(error = %e, card = %card_id, "card withdrawal could not be credited");
        }
    }
    let record = &mut company.cards.records[index];
    if failure.is_none() {
        set_balance(&mut record.card, after, fx.now);
    }
    let t = &mut record.transactions[t].tx;
    t.status = if failure.is_some() {
        CardTransactionStatus::Failed
    } else {
        CardTransactionStatus::Completed
    };
    t.balance_before = MicroUnits(balance);
    t.balance_after = MicroUnits(after);
    t.failure_reason = failure.map(str::to_owned);
    t.updated_at = fx.now;
    t.completed_at = Some(fx.now);
    let t = t.clone();
    let card = record.card.clone();
    let event = if t.kind == "funding" {
        events::TOPUP
    } else {
        events::WITHDRAWAL
    };
    emit(company, &card, event, json!(t), fx);
}

/// Freezes or unfreezes.
pub fn set_status(
    company: &mut Company,
    card_id: Uuid,
    status: &str,
    now: DateTime<Utc>,
) -> Result<CardStatus, ApiError> {
    let target = match status.trim() {
        "frozen" => CardState::Frozen,
        "active" => CardState::Active,
        _ => return Err(ApiError::field("status", "must be frozen or active")),
    };
    let index = company.cards.index(card_id)?;
    let card = &mut company.cards.records[index].card;
    let verb = if target == CardState::Frozen {
        "frozen"
    } else {
        "activated"
    };
    usable(card, verb)?;
    if card.status != target {
        card.status = target;
        card.updated_at = now;
    }
    Ok(CardStatus {
        id: card.id,
        status: card.status.clone(),
        card_type: card.card_type.clone(),
        last_four_digit: card.last_four_digit.clone(),
        updated_at: card.updated_at,
    })
}

/// Ends a card and returns its whole balance to the wallet.
fn end(company: &mut Company, index: usize, reason: &str, now: DateTime<Utc>) -> Termination {
    let card = company.cards.records[index].card.clone();
    let remaining = card.balance_amount.value();
    if remaining > 0 {
        let posted = company.ledger.post(
            NewTransaction {
                currency: Currency::parse(FUNDING_WALLET).expect("a valid code"),
                kind: TransactionType::P2pTransfer,
                state: TransactionState::Settled,
                amount: BaseUnits(remaining),
                fee: BaseUnits::ZERO,
                reference: format!("CARD_TERMINATE_{}", card.id),
                idempotency_key: String::new(),
                metadata: json!({"channel": "card", "card_id": card.id, "purpose": "card_termination"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            },
            now,
        );
        if let Err(e) = posted {
            tracing::error!(error = %e, card = %card.id, "the card balance could not be returned");
        }
    }
    let card = &mut company.cards.records[index].card;
    set_balance(card, 0, now);
    card.status = CardState::Terminated;
    card.terminated_at = Some(now);
    card.termination_reason = Some(reason.to_owned());
    Termination {
        card_id: card.id,
        status: CardState::Terminated,
        remaining_balance: MicroUnits(remaining),
        balance_returned: remaining > 0,
        terminated_at: now,
        reason: reason.to_owned(),
    }
}

/// `DELETE /api/cards/{id}`: refused under 24 hours (freeze instead).
pub fn terminate(
    company: &mut Company,
    card_id: Uuid,
    reason: &str,
    now: DateTime<Utc>,
) -> Result<Termination, ApiError> {
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(ApiError::field(
            "reason",
            "is required: say why the card is terminated",
        ));
    }
    let index = company.cards.index(card_id)?;
    let card = &company.cards.records[index].card;
    if card.status == CardState::Terminated {
        return Err(ApiError::unprocessable(
            codes::INVALID_STATE,
            "the card is already terminated",
        ));
    }
    let ready_at = card.created_at + Duration::seconds(MIN_AGE_TO_TERMINATE_SECS);
    if now < ready_at {
        return Err(ApiError::unprocessable(
            codes::CARD_TOO_NEW,
            format!(
                "a card can be terminated 24 hours after creation, from {}; freeze it instead until then",
                ready_at.format("%Y-%m-%d %H:%M UTC")
            ),
        ));
    }
    Ok(end(company, index, reason, now))
}

/// A lite card reaches its terminate_date.
pub fn end_lite(company: &mut Company, card_id: Uuid, now: DateTime<Utc>) {
    if let Ok(index) = company.cards.index(card_id) {
        if company.cards.records[index].card.status != CardState::Terminated {
            end(company, index, "terminate_date reached", now);
        }
    }
}

/// The full number, CVV and expiry: 2 reads per 60 s per card.
pub fn secure_details(
    company: &mut Company,
    card_id: Uuid,
    now: DateTime<Utc>,
) -> Result<SecureDetails, ApiError> {
    let index = company.cards.index(card_id)?;
    let record = &mut company.cards.records[index];
    usable(&record.card, "read")?;
    let window = Duration::seconds(SECURE_WINDOW_SECS);
    record.secure_reads.retain(|at| *at + window > now);
    if record.secure_reads.len() >= SECURE_READS_PER_WINDOW {
        let wait = whole_seconds_until(now, record.secure_reads[0] + window);
        return Err(ApiError::RateLimited {
            retry_after_secs: wait,
            detail: format!("card details can be read twice per 60 seconds; try again in {wait} s"),
        });
    }
    record.secure_reads.push(now);
    Ok(SecureDetails {
        card_id,
        card_number: record.pan.clone(),
        cvv: record.cvv.clone(),
        expiry_month: format!("{:02}", record.expiry.0),
        expiry_year: record.expiry.1.to_string(),
        name: record.card.name.clone(),
    })
}

/// Replaces the spend limits (a key left out is no limit).
pub fn set_limits(
    company: &mut Company,
    card_id: Uuid,
    limits: &CardLimits,
    now: DateTime<Utc>,
) -> Result<Card, ApiError> {
    check_limits(limits)?;
    let index = company.cards.index(card_id)?;
    let card = &mut company.cards.records[index].card;
    if card.status == CardState::Terminated {
        return Err(ApiError::unprocessable(
            codes::INVALID_STATE,
            "the card is terminated; its limits can't change",
        ));
    }
    card.spending_limits = limits.clone();
    card.card_limits = limits.clone();
    card.updated_at = now;
    Ok(card.clone())
}

/// Completed spends within a window, for the limits.
fn spent_since(record: &CardRecord, keep: impl Fn(DateTime<Utc>) -> bool) -> i64 {
    record
        .transactions
        .iter()
        .filter(|t| {
            t.tx.kind == "spend" && t.tx.status == CardTransactionStatus::Completed && keep(t.tx.created_at)
        })
        .map(|t| t.tx.amount.value())
        .sum()
}

fn decline_reason(record: &CardRecord, amount: i64, now: DateTime<Utc>) -> Option<String> {
    let card = &record.card;
    match card.status.as_str() {
        "frozen" => return Some("the card is frozen".to_owned()),
        "pending" => return Some("the card is not active yet".to_owned()),
        "terminated" => return Some("the card is terminated".to_owned()),
        _ => {}
    }
    if card.swipes_remaining == Some(0) {
        return Some("the lite card has used all its swipes".to_owned());
    }
    if amount > card.balance_amount.value() {
        return Some("insufficient card balance".to_owned());
    }
    let l = &card.card_limits;
    let windows: [(&str, Option<MicroUnits>, i64); 6] = [
        ("transaction_limit", l.transaction_limit, 0),
        (
            "daily_limit",
            l.daily_limit,
            spent_since(record, |t| t.date_naive() == now.date_naive()),
        ),
        (
            "weekly_limit",
            l.weekly_limit,
            spent_since(record, |t| t > now - Duration::days(7)),
        ),
        (
            "monthly_limit",
            l.monthly_limit,
            spent_since(record, |t| (t.year(), t.month()) == (now.year(), now.month())),
        ),
        (
            "yearly_limit",
            l.yearly_limit,
            spent_since(record, |t| t.year() == now.year()),
        ),
        ("all_time_limit", l.all_time_limit, spent_since(record, |_| true)),
    ];
    windows.iter().find_map(|(key, limit, spent)| {
        limit
            .filter(|limit| spent + amount > limit.value())
            .map(|_| format!("the spend would exceed the card's {key}"))
    })
}

/// A card authorization (control API): approved and debited, or declined
/// with nothing moved.
pub fn spend(
    company: &mut Company,
    card_id: Uuid,
    req: &SimulateSpend,
    fx: &mut Effects<'_>,
) -> Result<SpendOutcome, ApiError> {
    let amount = req.amount.value();
    if amount <= 0 || amount > MAX_AMOUNT {
        return Err(ApiError::field(
            "amount",
            "must be a positive integer of micro-units",
        ));
    }
    let index = company.cards.index(card_id)?;
    let record = &mut company.cards.records[index];
    let reason = decline_reason(record, amount, fx.now);
    let mut tx = new_tx(&record.card, "spend", amount, 0, "", fx.now);
    tx.merchant_name = req
        .merchant
        .clone()
        .unwrap_or_else(|| "Sandbox Merchant".to_owned());
    tx.reference = format!("SPEND_{}", tx.id.simple());
    tx.completed_at = Some(fx.now);
    match &reason {
        Some(why) => {
            tx.status = CardTransactionStatus::Failed;
            tx.failure_reason = Some(why.clone());
        }
        None => {
            let after = record.card.balance_amount.value() - amount;
            set_balance(&mut record.card, after, fx.now);
            if let Some(left) = record.card.swipes_remaining.as_mut() {
                *left -= 1;
            }
            tx.status = CardTransactionStatus::Completed;
            tx.balance_after = MicroUnits(after);
        }
    }
    push_tx(record, tx.clone(), None);
    if reason.is_none() {
        let card = record.card.clone();
        emit(company, &card, events::DEBIT, json!(tx), fx);
    }
    Ok(SpendOutcome {
        approved: reason.is_none(),
        decline_reason: reason,
        transaction: tx,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_rounds_up_so_waiting_that_long_is_enough() {
        let now = Utc::now();
        assert_eq!(whole_seconds_until(now, now + Duration::milliseconds(9_001)), 10);
        assert_eq!(whole_seconds_until(now, now + Duration::seconds(9)), 9);
        assert_eq!(whole_seconds_until(now, now + Duration::milliseconds(1)), 1);
    }
}
