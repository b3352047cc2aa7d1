//! Cards (spec "Card record", "Card transaction", "Cards"): every amount is
//! in micro-units of the card's currency ([`MicroUnits`]).

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::status::wire_status;
use crate::units::MicroUnits;

wire_status! {
    /// A card's status (named so beside the slim [`CardStatus`] record).
    pub enum CardState {
        Pending = "pending",
        Active = "active",
        Frozen = "frozen",
        Terminated = "terminated",
    }
}

wire_status! {
    /// Whether the issuer has finished provisioning a card.
    pub enum CardCreatedStatus {
        Processing = "processing",
        Completed = "completed",
    }
}

wire_status! {
    /// A card transaction's status; funding and withdrawal are pending
    /// until the issuer settles them.
    pub enum CardTransactionStatus {
        Pending = "pending",
        Completed = "completed",
        Failed = "failed",
    }
}

/// Card events (open-paths.md, "Webhook event names").
pub mod events {
    pub const CREATED: &str = "virtualcard.created.completed";
    pub const TOPUP: &str = "virtualcard.topup.completed";
    pub const WITHDRAWAL: &str = "virtualcard.withdrawal.completed";
    pub const DEBIT: &str = "virtualcard.transaction.debit";
}

/// Spend limits; an absent key is no limit.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CardLimits {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_limit: Option<MicroUnits>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daily_limit: Option<MicroUnits>,
    /// Over the last 7 days.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weekly_limit: Option<MicroUnits>,
    /// Over the calendar month.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub monthly_limit: Option<MicroUnits>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub yearly_limit: Option<MicroUnits>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all_time_limit: Option<MicroUnits>,
}

impl CardLimits {
    /// Each limit with its key, in the spec's order.
    pub fn entries(&self) -> [(&'static str, Option<MicroUnits>); 6] {
        [
            ("transaction_limit", self.transaction_limit),
            ("daily_limit", self.daily_limit),
            ("weekly_limit", self.weekly_limit),
            ("monthly_limit", self.monthly_limit),
            ("yearly_limit", self.yearly_limit),
            ("all_time_limit", self.all_time_limit),
        ]
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BillingAddress {
    pub line1: String,
    #[serde(default)]
    pub line2: String,
    pub city: String,
    pub state: String,
    pub postal_code: String,
    pub country: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Card {
    pub id: Uuid,
    pub company_id: Uuid,
    pub customer_id: Uuid,
    pub created_by: Uuid,
    /// `virtual`, `physical` or `lite`.
    pub card_type: String,
    pub status: CardState,
    pub created_status: CardCreatedStatus,
    pub card_brand: String,
    pub name: String,
    pub preferred_name: String,
    #[serde(default)]
    pub first_six_digit: String,
    #[serde(default)]
    pub last_four_digit: String,
    /// Empty while provisioning.
    #[serde(default)]
    pub masked_pan: String,
    pub balance_amount: MicroUnits,
    pub balance_currency: String,
    /// `balance_amount` in whole units, a JSON number for display.
    #[serde(with = "rust_decimal::serde::float")]
    #[cfg_attr(feature = "openapi", schema(value_type = f64))]
    pub display_amount: rust_decimal::Decimal,
    pub contactless_payment: bool,
    #[serde(default)]
    pub spending_limits: CardLimits,
    #[serde(default)]
    pub card_limits: CardLimits,
    pub reference: String,
    #[serde(default)]
    pub webhook_url: String,
    #[serde(default)]
    pub user_metadata: String,
    #[serde(default)]
    pub billing_address: BillingAddress,
    /// Lite cards: swipes allowed in all, and how many are left.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swipe_count: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swipes_remaining: Option<u32>,
    /// Lite cards end on this day.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminate_date: Option<NaiveDate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(with = "crate::time::millis_opt")]
    pub terminated_at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub termination_reason: Option<String>,
    #[serde(with = "crate::time::millis")]
    pub created_at: DateTime<Utc>,
    #[serde(with = "crate::time::millis")]
    pub updated_at: DateTime<Utc>,
}

/// The older form's customer object (creates a customer) or, for lite
/// cards, one matched to an existing customer by email.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CardCustomer {
    #[serde(default)]
    pub customer_type: String,
    #[serde(default)]
    pub first_name: String,
    #[serde(default)]
    pub last_name: String,
    pub email: String,
    #[serde(default)]
    pub phone_number: String,
    #[serde(default)]
    pub dial_code: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date_of_birth: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line1: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub city: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub postal_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub country: Option<String>,
}

/// Body of `POST /api/cards`: a virtual card (current form with
/// `customer_id`, or the older form with `customer`), or a lite card
/// (`card_type: "lite"`, or the older `type: "lite"`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NewCard {
    pub amount: MicroUnits,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card_type: Option<String>,
    /// The older lite form's `type: "lite"`.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub legacy_type: Option<String>,
    pub currency: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customer_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customer: Option<CardCustomer>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contactless_payment: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook_url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card_brand: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card_limits: Option<CardLimits>,
    /// Lite cards: how many spends the card allows (> 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swipe_count: Option<i64>,
    /// Lite cards: the day the card ends, after today (YYYY-MM-DD).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminate_date: Option<String>,
    /// Lite cards: the requested expiry month, YYYY-MM (the spec leaves
    /// the name open; assigned when omitted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expiry_date: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_metadata: Option<String>,
}

impl NewCard {
    pub fn is_lite(&self) -> bool {
        self.card_type.as_deref() == Some("lite") || self.legacy_type.as_deref() == Some("lite")
    }
}

/// `data` of the calls that answer one card.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CardData {
    pub card: Card,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PageInfo {
    pub has_next_page: bool,
    pub has_previous_page: bool,
    pub previous_cursor: String,
    pub next_cursor: String,
    pub total: u64,
}

/// `data` of `GET /api/cards` and `GET /api/customers/{id}/cards`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CardPage {
    pub cards: Vec<Card>,
    pub page_info: PageInfo,
}

/// Filters of `GET /api/cards`.
#[derive(Debug, Clone, Default)]
pub struct CardQuery {
    pub card_type: Option<String>,
    pub status: Option<String>,
    /// Last four digits or cardholder name.
    pub search: Option<String>,
    pub cursor: Option<String>,
    pub limit: Option<u32>,
}

/// `fund` or `withdraw`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum BalanceDirection {
    Fund,
    Withdraw,
}

/// Body of `POST /api/cards/{id}/balance`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BalanceChange {
    pub amount: MicroUnits,
    #[serde(rename = "type")]
    pub direction: BalanceDirection,
    pub reference: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CardTransaction {
    pub id: Uuid,
    pub card_id: Uuid,
    /// `funding`, `withdrawal` or `spend`.
    #[serde(rename = "type")]
    pub kind: String,
    pub status: CardTransactionStatus,
    pub amount: MicroUnits,
    pub currency: String,
    pub balance_before: MicroUnits,
    pub balance_after: MicroUnits,
    pub fee_amount: MicroUnits,
    /// `funding_fee` for funding and withdrawal, empty for spends.
    pub fee_type: String,
    #[serde(default)]
    pub reference: String,
    #[serde(default)]
    pub merchant_name: String,
    /// Why a spend was declined or a transfer failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    #[serde(with = "crate::time::millis")]
    pub created_at: DateTime<Utc>,
    #[serde(with = "crate::time::millis")]
    pub updated_at: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(with = "crate::time::millis_opt")]
    pub completed_at: Option<DateTime<Utc>>,
}

/// `data` of `POST /api/cards/{id}/balance`: the provider's own success
/// flag and message (false and "processing" while pending) and the
/// transaction.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BalanceAnswer {
    pub success: bool,
    pub message: String,
    pub transaction: CardTransaction,
}

/// `data` of `GET /api/cards/{id}/transactions`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CardTransactionPage {
    pub transactions: Vec<CardTransaction>,
    pub page_info: PageInfo,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CardTransactionData {
    pub transaction: CardTransaction,
}

/// Body of `POST /api/cards/{id}/status`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StatusChange {
    /// `Frozen` or `Active`; the service refuses any other.
    pub status: CardState,
}

/// The slim card of the status answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CardStatus {
    pub id: Uuid,
    pub status: CardState,
    pub card_type: String,
    pub last_four_digit: String,
    #[serde(with = "crate::time::millis")]
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CardStatusData {
    pub card: CardStatus,
}

/// Body of `DELETE /api/cards/{id}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Terminate {
    pub reason: String,
}

/// `data` of `DELETE /api/cards/{id}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Termination {
    pub card_id: Uuid,
    pub status: CardState,
    pub remaining_balance: MicroUnits,
    pub balance_returned: bool,
    #[serde(with = "crate::time::millis")]
    pub terminated_at: DateTime<Utc>,
    pub reason: String,
}

/// The card's full number, CVV and expiry. Debug hides them, so they can't
/// reach a log by accident.
#[derive(Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SecureDetails {
    pub card_id: Uuid,
    pub card_number: String,
    pub cvv: String,
    /// Two digits, "04".
    pub expiry_month: String,
    /// Four digits, "2029".
    pub expiry_year: String,
    pub name: String,
}

impl std::fmt::Debug for SecureDetails {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecureDetails")
            .field("card_id", &self.card_id)
            .finish_non_exhaustive()
    }
}

/// `data` of `GET /api/cards/{id}/secure`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SecureData {
    pub details: SecureDetails,
}

/// Body of `POST /sandbox/cards/{id}/spend`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SimulateSpend {
    pub amount: MicroUnits,
    #[serde(default, alias = "merchant_name", skip_serializing_if = "Option::is_none")]
    pub merchant: Option<String>,
}

/// `data` of `POST /sandbox/cards/{id}/spend`: approved, or declined with
/// the reason (nothing moves).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SpendOutcome {
    pub approved: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decline_reason: Option<String>,
    pub transaction: CardTransaction,
}
