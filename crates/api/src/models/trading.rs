//! Trading: market prices, quotes and orders, scheduled orders (DCA) and
//! target orders. `quantity`, `price` and `target_price` are decimals in
//! whole units of their currency (NGN pairs: whole naira); a scheduled
//! order's `amount` is an integer of the quote currency's smallest unit.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::status::wire_status;
use crate::units::BaseUnits;

wire_status! {
    /// A spot order's status.
    pub enum OrderStatus {
        Pending = "pending",
        Filled = "filled",
        Rejected = "rejected",
        Cancelled = "cancelled",
    }
}

wire_status! {
    /// A schedule's status, of scheduled orders and of bulk schedules;
    /// cancelled and completed are final.
    pub enum ScheduleStatus {
        Active = "active",
        Paused = "paused",
        Cancelled = "cancelled",
        Completed = "completed",
    }
}

wire_status! {
    /// How one tick of a schedule went.
    pub enum ExecutionStatus {
        Completed = "completed",
        Failed = "failed",
        Skipped = "skipped",
    }
}

wire_status! {
    /// A target order's status: triggered once the price reached the
    /// target and fills are under way.
    pub enum TargetOrderStatus {
        Active = "active",
        Triggered = "triggered",
        Filled = "filled",
        Cancelled = "cancelled",
        Expired = "expired",
    }
}

/// One pair's price: units of `quote_currency` per unit of `base_currency`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Price {
    pub base_currency: String,
    pub quote_currency: String,
    pub price: Decimal,
    #[serde(with = "crate::time::millis")]
    pub as_of: DateTime<Utc>,
    /// Base units available per 10 s at this price (set with `PUT
    /// /sandbox/prices`); absent when unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub liquidity: Option<BaseUnits>,
}

/// `data` of `GET /api/trading/prices`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PriceList {
    pub prices: Vec<Price>,
}

/// Body of `PUT /sandbox/prices`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({"base": "BTC", "quote": "USDT", "price": "60000"})))]
pub struct SetPrice {
    pub base: String,
    pub quote: String,
    pub price: Decimal,
    /// Base units available per 10 s at this price (target orders fill in
    /// slices of at most this much); absent means unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub liquidity: Option<BaseUnits>,
}

/// What a trade sends and receives, in whole units.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Exchange {
    pub send_quantity: Decimal,
    pub send_currency: String,
    pub receive_quantity: Decimal,
    pub receive_currency: String,
}

/// Body of `POST /api/trading/quotes`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = TradingQuoteRequest))]
#[cfg_attr(feature = "openapi", schema(example = json!({"base_currency": "BTC", "quote_currency": "USDT", "side": "buy", "quantity": "0.001"})))]
pub struct QuoteRequest {
    pub base_currency: String,
    pub quote_currency: String,
    /// `buy` or `sell`, relative to the base.
    pub side: String,
    pub quantity: Decimal,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Quote {
    pub id: Uuid,
    pub base_currency: String,
    pub quote_currency: String,
    /// `BUY` or `SELL`.
    pub side: String,
    pub quantity: Decimal,
    /// Quote currency per unit of base, spread included.
    pub price: Decimal,
    #[serde(with = "crate::time::millis")]
    pub expires_at: DateTime<Utc>,
    #[serde(with = "crate::time::millis")]
    pub created_at: DateTime<Utc>,
    pub original_quantity: Decimal,
    pub consumed_quantity: Decimal,
    pub remaining_quantity: Decimal,
    pub is_exhausted: bool,
    pub is_expired: bool,
    /// What the whole quote sends and receives.
    pub exchange: Exchange,
    /// Orders placed against the quote (on lookup).
    #[serde(default)]
    pub orders_count: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = TradingQuoteData))]
pub struct QuoteData {
    pub quote: Quote,
}

/// Body of `POST /api/trading/orders`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OrderRequest {
    pub base_currency: String,
    pub quote_currency: String,
    pub side: String,
    /// Whole units, or base units with `quantity_in_base_units`.
    pub quantity: Decimal,
    /// Optional: the quote's price is used, unless a `limit` order's price
    /// is not marketable (then the order rests at it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<Decimal>,
    /// `market` (the default) or `limit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order_type: Option<String>,
    pub quote_id: Uuid,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantity_in_base_units: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Fill {
    pub id: Uuid,
    pub order_id: Uuid,
    pub quantity: Decimal,
    pub price: Decimal,
    #[serde(with = "crate::time::millis")]
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct QuoteConsumption {
    pub quote_id: Uuid,
    pub consumed_quantity: Decimal,
    pub remaining_quantity: Decimal,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Order {
    pub id: Uuid,
    pub base_currency: String,
    pub quote_currency: String,
    pub side: String,
    /// `market` or `limit`.
    pub order_type: String,
    pub quantity: Decimal,
    pub price: Decimal,
    pub status: OrderStatus,
    /// The venue the order filled on, by name; null for NGN pairs, which
    /// settle from the service's own liquidity.
    pub exchange: Option<String>,
    #[serde(with = "crate::time::millis")]
    pub created_at: DateTime<Utc>,
    #[serde(with = "crate::time::millis")]
    pub updated_at: DateTime<Utc>,
    pub filled_quantity: Decimal,
    pub remaining_quantity: Decimal,
    pub quote_id: Uuid,
    pub fills: Vec<Fill>,
    /// Null for NGN pairs.
    pub quote_consumption: Option<QuoteConsumption>,
    #[serde(default)]
    pub reference: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OrderData {
    pub order: Order,
    /// The order's fills and quote consumption beside it, where the
    /// official client reads them (additions).
    #[serde(default)]
    pub fills: Vec<Fill>,
    #[serde(default)]
    pub quote_consumption: Option<QuoteConsumption>,
}

impl OrderData {
    pub fn new(order: Order) -> Self {
        OrderData {
            fills: order.fills.clone(),
            quote_consumption: order.quote_consumption.clone(),
            order,
        }
    }
}

/// `data` of `GET /api/trading/orders`, newest first.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OrderPage {
    pub orders: Vec<Order>,
    pub next_cursor: String,
    pub has_more: bool,
    pub total: u64,
}

/// Body of `POST /api/trading/scheduled-orders`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NewSchedule {
    /// The base asset bought.
    pub currency: String,
    pub quote_currency: String,
    /// Spent per tick, in the quote currency's smallest unit.
    pub amount: BaseUnits,
    /// `daily`, `weekly` or `monthly`.
    pub frequency: String,
    /// 0 (Sunday) to 6; 0 when unused.
    #[serde(default)]
    pub day_of_week: u32,
    /// 1 to 31; 0 when unused.
    #[serde(default)]
    pub day_of_month: u32,
    /// `HH:MM`, UTC.
    pub execution_time: String,
    #[serde(default)]
    pub reference: String,
    /// `YYYY-MM-DD` (UTC): no tick runs after this day.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_date: Option<String>,
    /// The schedule completes after this many completed ticks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_executions: Option<u32>,
}

/// Body of `PUT /api/trading/scheduled-orders/{id}`; omitted fields keep
/// their value.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ScheduleUpdate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<BaseUnits>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frequency: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub day_of_week: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub day_of_month: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_time: Option<String>,
    /// `Paused` or `Active`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ScheduleStatus>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Schedule {
    pub id: Uuid,
    pub company_id: Uuid,
    pub currency: String,
    pub quote_currency: String,
    pub amount: BaseUnits,
    pub frequency: String,
    pub day_of_week: u32,
    pub day_of_month: u32,
    pub execution_time: String,
    pub status: ScheduleStatus,
    /// Null once the schedule is cancelled or completed.
    #[serde(default, with = "crate::time::millis_opt")]
    pub next_execution_at: Option<DateTime<Utc>>,
    /// Empty string if it never ran.
    pub last_executed_at: String,
    pub total_executions: u32,
    /// In the quote currency's smallest unit.
    pub total_amount_spent: BaseUnits,
    /// In the base currency's smallest unit.
    pub total_quantity_acquired: BaseUnits,
    pub reference: String,
    /// `YYYY-MM-DD`, null without an end date.
    #[serde(default)]
    pub end_date: Option<String>,
    /// Null without a limit.
    #[serde(default)]
    pub max_executions: Option<u32>,
    #[serde(with = "crate::time::millis")]
    pub created_at: DateTime<Utc>,
    #[serde(with = "crate::time::millis")]
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ScheduleData {
    pub schedule: Schedule,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ScheduleList {
    pub schedules: Vec<Schedule>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Execution {
    pub id: Uuid,
    /// The order the tick placed; empty when none was.
    pub order_id: String,
    pub status: ExecutionStatus,
    /// Bought, in the base currency's smallest unit.
    pub base_amount: BaseUnits,
    pub fill_price: Decimal,
    /// Spent, in the quote currency's smallest unit.
    pub quote_amount: BaseUnits,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(with = "crate::time::millis")]
    pub executed_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ExecutionList {
    pub executions: Vec<Execution>,
}

/// Body of `POST /api/trading/target-orders`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NewTargetOrder {
    pub base_currency: String,
    pub quote_currency: String,
    pub side: String,
    pub quantity: Decimal,
    pub target_price: Decimal,
    /// RFC 3339, or empty for no expiry.
    #[serde(default)]
    pub expires_at: String,
    #[serde(default)]
    pub reference: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TargetOrder {
    pub id: Uuid,
    pub company_id: Uuid,
    pub base_currency: String,
    pub quote_currency: String,
    pub side: String,
    pub quantity: Decimal,
    pub filled_quantity: Decimal,
    pub remaining_quantity: Decimal,
    pub target_price: Decimal,
    /// Empty until the first fill.
    pub average_fill_price: String,
    pub locked_amount: Decimal,
    pub remaining_locked: Decimal,
    pub locked_currency: String,
    pub status: TargetOrderStatus,
    pub expires_at: String,
    pub first_triggered_at: String,
    pub last_fill_at: String,
    pub fully_filled_at: String,
    #[serde(with = "crate::time::millis")]
    pub created_at: DateTime<Utc>,
    #[serde(with = "crate::time::millis")]
    pub updated_at: DateTime<Utc>,
    pub reference: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TargetOrderData {
    pub order: TargetOrder,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TargetOrderList {
    pub orders: Vec<TargetOrder>,
}
