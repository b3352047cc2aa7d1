//! Payouts: corridors, quotes, initialize, finalize, the payout record.
//! Amounts are decimal strings in the asset's or currency's own units
//! (`rust_decimal`, never floats); `cent_*` fields are integer strings of
//! the smallest fiat unit.

use crate::status::wire_status;
use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

wire_status! {
    /// A payout record's status (uppercase on the wire); an expired quote
    /// or payout reads `EXPIRED`.
    pub enum PayoutStatus {
        Quote = "QUOTE",
        Initiated = "INITIATED",
        Pending = "PENDING",
        Processing = "PROCESSING",
        Completed = "COMPLETED",
        Failed = "FAILED",
        Expired = "EXPIRED",
    }
}

/// A chain an onchain payout's deposit comes on: the quote request's
/// `chain` (uppercase), which the payout record names `CHAIN_TYPE_<NAME>`.
/// BTC comes on BITCOIN, USDT and USDC on the others (sandbox-rules.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum PayoutChain {
    Bitcoin,
    Ethereum,
    Tron,
    Polygon,
    Bsc,
    Solana,
    Base,
    Optimism,
    Avalanche,
}

impl PayoutChain {
    pub const ALL: &'static [PayoutChain] = &[
        PayoutChain::Bitcoin,
        PayoutChain::Ethereum,
        PayoutChain::Tron,
        PayoutChain::Polygon,
        PayoutChain::Bsc,
        PayoutChain::Solana,
        PayoutChain::Base,
        PayoutChain::Optimism,
        PayoutChain::Avalanche,
    ];

    /// The wire name of the quote request.
    pub fn as_str(self) -> &'static str {
        match self {
            PayoutChain::Bitcoin => "BITCOIN",
            PayoutChain::Ethereum => "ETHEREUM",
            PayoutChain::Tron => "TRON",
            PayoutChain::Polygon => "POLYGON",
            PayoutChain::Bsc => "BSC",
            PayoutChain::Solana => "SOLANA",
            PayoutChain::Base => "BASE",
            PayoutChain::Optimism => "OPTIMISM",
            PayoutChain::Avalanche => "AVALANCHE",
        }
    }

    /// The chain's name for people.
    pub fn label(self) -> &'static str {
        match self {
            PayoutChain::Bitcoin => "Bitcoin",
            PayoutChain::Ethereum => "Ethereum",
            PayoutChain::Tron => "Tron",
            PayoutChain::Polygon => "Polygon",
            PayoutChain::Bsc => "BNB Smart Chain",
            PayoutChain::Solana => "Solana",
            PayoutChain::Base => "Base",
            PayoutChain::Optimism => "Optimism",
            PayoutChain::Avalanche => "Avalanche",
        }
    }

    /// The chain a name gives, as the request (`TRON`, any case) or the
    /// record (`CHAIN_TYPE_TRON`) spells it.
    pub fn parse(name: &str) -> Option<PayoutChain> {
        let name = name.trim();
        let name = name.strip_prefix("CHAIN_TYPE_").unwrap_or(name);
        PayoutChain::ALL
            .iter()
            .copied()
            .find(|c| c.as_str().eq_ignore_ascii_case(name))
    }

    /// Whether a deposit of `asset` (BTC, USDT, USDC) can come on it.
    pub fn carries(self, asset: &str) -> bool {
        match self {
            PayoutChain::Bitcoin => asset == "BTC",
            _ => matches!(asset, "USDT" | "USDC"),
        }
    }
}

impl std::fmt::Display for PayoutChain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// One entry of `GET /api/payouts/supported-countries`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Country {
    pub country: String,
    pub name: String,
    pub currency: String,
    pub destination_types: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CountryList {
    pub countries: Vec<Country>,
}

/// `GET /api/payouts/supported-countries/{country}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Corridor {
    pub country: String,
    pub name: String,
    pub currency: String,
    pub destination_types: Vec<String>,
    /// Whether `payment_reason` must be one of `payment_reasons`.
    pub payment_reason_required_from_list: bool,
    pub payment_reasons: Vec<String>,
    pub lower_limit: Decimal,
    pub higher_limit: Decimal,
    pub from_assets: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Bank {
    pub name: String,
    pub code: String,
    #[serde(rename = "type")]
    pub kind: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BankList {
    pub country: String,
    pub banks: Vec<Bank>,
}

/// Body of `POST /api/payouts/beneficiary-lookup`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AccountLookup {
    pub country: String,
    pub account_number: String,
    pub bank_code: String,
    #[serde(rename = "type")]
    pub kind: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct AccountName {
    pub account_name: String,
    pub account_number: String,
    pub bank_code: String,
}

/// One row of `GET /api/payouts/limits`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PayoutLimit {
    pub lower_limit: Decimal,
    pub higher_limit: Decimal,
    pub currency: String,
    pub country: String,
    /// Units of `currency` per USDT.
    pub rate: Decimal,
}

/// Body of `POST /api/payouts/quotes`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = PayoutQuoteRequest))]
pub struct QuoteRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<Decimal>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settlement_amount: Option<Decimal>,
    pub country: String,
    pub from_asset: String,
    pub to_currency: String,
    pub source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chain: Option<String>,
    pub reference: String,
}

/// The payout's recipient, as sent to initialize.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PayoutBeneficiary {
    /// `bank`, `mobile_money` or `swift`; a saved beneficiary's `type`
    /// (e.g. `BANK`, as the official client sends it) is read as the same.
    #[serde(alias = "type")]
    pub destination_type: String,
    pub country: String,
    pub account_name: String,
    pub account_number: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bank_code: Option<String>,
}

/// Body of `POST /api/payouts/{quoteId}/initialize`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct InitializeRequest {
    /// Absent (the official client's form): the quote id of the path.
    #[serde(default)]
    pub quote_id: String,
    pub reference: String,
    pub payment_reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callback_url: Option<String>,
    pub beneficiary: PayoutBeneficiary,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = PayoutExchangeRate))]
pub struct ExchangeRate {
    /// Units of `currency` per unit of the source asset.
    pub rate: Decimal,
    /// Units of `currency` per BTC.
    pub btc_rate: Decimal,
    pub currency: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Trip {
    #[serde(default, with = "crate::time::millis_opt")]
    pub quote_at: Option<DateTime<Utc>>,
    #[serde(default, with = "crate::time::millis_opt")]
    pub initialized_at: Option<DateTime<Utc>>,
    #[serde(default, with = "crate::time::millis_opt")]
    pub processing_start: Option<DateTime<Utc>>,
    #[serde(default, with = "crate::time::millis_opt")]
    pub completion_time: Option<DateTime<Utc>>,
}

/// The payout record (quote, initialize, finalize, get).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Payout {
    pub id: Uuid,
    pub quote_id: String,
    pub company_id: Uuid,
    pub status: PayoutStatus,
    pub source: String,
    pub from_asset: String,
    pub chain: String,
    pub to_currency: String,
    pub amount: Decimal,
    pub settlement_amount: Decimal,
    pub sat_amount: String,
    pub btc_amount: Decimal,
    pub fees: Decimal,
    pub cent_fees: String,
    pub cent_amount: String,
    pub exchange_rate: ExchangeRate,
    pub beneficiary: Option<PayoutBeneficiary>,
    pub payment_reason: String,
    pub reference: String,
    pub country: String,
    pub callback_url: String,
    pub provider_settlement_id: String,
    pub trip: Trip,
    #[serde(with = "crate::time::millis")]
    pub expires_at: DateTime<Utc>,
    #[serde(default, with = "crate::time::millis_opt")]
    pub created_at: Option<DateTime<Utc>>,
    #[serde(default, with = "crate::time::millis_opt")]
    pub updated_at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    /// Onchain payouts only (`source` ONCHAIN), from initialize on: the
    /// address on the quote's chain that the payout's deposit (amount +
    /// fees, in `from_asset`) must reach before finalize is accepted. An
    /// addition to the spec's fields (sandbox-rules.md, Payouts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deposit_address: Option<String>,
}

impl Payout {
    /// Whether the payout is funded by a blockchain deposit.
    pub fn is_onchain(&self) -> bool {
        self.source.eq_ignore_ascii_case("onchain")
    }

    /// An initialized onchain payout waits for its deposit: finalize is
    /// refused (422 `DEPOSIT_NOT_CONFIRMED`) until a confirmed deposit of
    /// amount + fees reached `deposit_address`. A state to wait in and
    /// read back, not a failure.
    pub fn awaits_deposit(&self) -> bool {
        self.is_onchain() && self.status == PayoutStatus::Initiated && self.deposit_address.is_some()
    }
}

/// `data` of the quote answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = PayoutQuoteData))]
pub struct QuoteData {
    pub quote: Payout,
}

/// `data` of the finalize answer (and of initialize's): the payout, and
/// the same record's fields beside it, where the provider's official
/// client reads them.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PayoutData {
    pub payout: Payout,
    #[serde(flatten)]
    pub record: Payout,
}

impl PayoutData {
    pub fn new(payout: Payout) -> Self {
        PayoutData {
            record: payout.clone(),
            payout,
        }
    }
}

/// `data` of the official client's reads of one payout (`GET
/// /api/payouts/fetch/{id}`, `…/fetch/reference/{reference}`): the record,
/// and the same record in `off_ramps`, the list that client reads.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FetchedPayout {
    #[serde(flatten)]
    pub payout: Payout,
    pub off_ramps: Vec<Payout>,
}

impl FetchedPayout {
    pub fn new(payout: Payout) -> Self {
        FetchedPayout {
            off_ramps: vec![payout.clone()],
            payout,
        }
    }
}

/// `data` of `GET /api/payouts/quotes/{quoteId}`: the quote, and the same
/// record in `off_ramps`, where the official client reads it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FetchedQuote {
    pub quote: Payout,
    pub off_ramps: Vec<Payout>,
}

/// `data` of `GET /api/payouts/?order&page&take`: the list's `payouts`
/// and `total`, and the same page as `off_ramps` with `meta`, the shape
/// the official client reads.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OffRampPage {
    pub payouts: Vec<Payout>,
    pub total: u64,
    pub off_ramps: Vec<Payout>,
    pub meta: PageMeta,
}

/// Where a page of `OffRampPage` lies.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PageMeta {
    pub page: u64,
    pub take: u64,
    pub item_count: u64,
    pub page_count: u64,
    pub has_previous_page: bool,
    pub has_next_page: bool,
}

/// `data` of `GET /api/payouts/supported-countries/{country}/requirements`:
/// the corridor's details, and for the official client the country's
/// `code`, `flag`, `dial_code` and, per destination type, the fields a
/// beneficiary of that type needs.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Requirements {
    #[serde(flatten)]
    pub corridor: Corridor,
    pub code: String,
    pub flag: String,
    pub dial_code: String,
    pub destination: std::collections::BTreeMap<String, Vec<FieldSpec>>,
}

/// One field a destination type needs.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FieldSpec {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub required: bool,
    /// The one value the field takes (the destination's `type`).
    #[serde(default, rename = "const", skip_serializing_if = "Option::is_none")]
    pub fixed: Option<String>,
}

/// The initialize answer: `{success, message, payout, request_id,
/// timestamp}` as the spec shows it (the sandbox also repeats the payout
/// under `data.payout`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct InitializeAnswer {
    pub success: bool,
    pub message: String,
    pub payout: Payout,
    #[serde(default)]
    pub request_id: String,
    #[serde(with = "crate::time::millis")]
    pub timestamp: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<PayoutData>,
}

/// `data` of `GET /api/payouts`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PayoutPage {
    pub payouts: Vec<Payout>,
    pub total: u64,
}

/// Body of `POST /sandbox/payouts/{id}/settle`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SettlePayout {
    pub outcome: String,
}

/// Payout webhook event names (open-paths.md).
pub mod events {
    pub const INITIALIZED: &str = "payouts.initialized";
    pub const PROCESSING: &str = "payouts.processing";
    pub const SUCCESS: &str = "payouts.withdrawal.success";
    pub const FAILED: &str = "payouts.withdrawal.failed";
    pub const EXPIRED: &str = "payouts.withdrawal.expired";
}
