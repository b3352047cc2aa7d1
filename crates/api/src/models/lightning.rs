//! Lightning (spec "Lightning invoice / payment"): amounts in satoshis
//! ([`Sats`]); invoices are BOLT11 strings.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::status::wire_status;
use crate::units::Sats;

wire_status! {
    /// An invoice's (or an outgoing payment's record's) status.
    pub enum InvoiceStatus {
        Pending = "pending",
        Paid = "paid",
        Expired = "expired",
        Failed = "failed",
    }
}

wire_status! {
    /// A payment's status: `paid` is settled and final, `pending` in
    /// flight, `failed` could not route or settle.
    pub enum PaymentStatus {
        Paid = "paid",
        Pending = "pending",
        Failed = "failed",
    }
}

/// Body of `POST /api/lightning/invoices`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({"amount": "1000", "description": "Coffee", "reference": "invoice-0001"})))]
pub struct NewInvoice {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customer_id: Option<Uuid>,
    /// 1 to 20,000,000 sats.
    pub amount: Sats,
    pub description: String,
    /// Seconds; 86,400 when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expiry: Option<u32>,
    pub reference: String,
}

/// An invoice we issued (`incoming`) or a payment we made (`outgoing`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Invoice {
    pub id: Uuid,
    pub payment_hash: String,
    pub request: String,
    /// Empty while pending.
    pub preimage: String,
    pub amount_sat: Sats,
    pub amount_msat: String,
    pub fee_sat: Sats,
    pub fee_msat: String,
    pub description: String,
    pub status: InvoiceStatus,
    /// `incoming` or `outgoing`.
    pub direction: String,
    pub company_id: Uuid,
    pub customer_id: Option<Uuid>,
    pub reference: String,
    /// RFC 3339 when created; Unix seconds (a string) on get and list.
    pub expires_at: String,
    #[serde(with = "crate::time::millis")]
    pub created_at: DateTime<Utc>,
    /// Empty if never updated.
    pub updated_at: String,
}

/// `data` of `GET /api/lightning/invoices`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct InvoicePage {
    pub invoices: Vec<Invoice>,
    /// A string, as the spec shows it.
    pub total_count: String,
    pub page: u32,
    pub page_size: u32,
}

/// Body of decode, initiate, and `POST /sandbox/lightning/pay`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PaymentRequest {
    pub request: String,
}

/// `data` of `POST /api/lightning/decode`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DecodedInvoice {
    pub payment_hash: String,
    /// The payee's node key, 66 hex characters.
    pub destination: String,
    pub amount_sat: u64,
    pub amount_msat: u64,
    pub description: String,
    /// Unix seconds.
    pub expires_at: i64,
    pub is_expired: bool,
    /// `bitcoin`, `testnet`, `signet`, `regtest` or `simnet`.
    pub network: String,
    /// Unix seconds.
    pub timestamp: i64,
}

/// `data` of `POST /api/lightning/payments/initiate` (a preview).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PaymentPreview {
    pub payment_hash: String,
    pub destination: String,
    pub amount_sat: Sats,
    pub fee_sat: Sats,
    pub total_sat: Sats,
    pub description: String,
    /// Unix seconds as a string, as on invoice get and list (the spec says
    /// "Unix timestamp"; the official client reads a string).
    pub expires_at: String,
    pub is_expired: bool,
    /// False: the payment can't be completed.
    pub route_found: bool,
}

/// Body of `POST /api/lightning/payments/send`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SendPayment {
    pub request: String,
    pub reference: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customer_id: Option<Uuid>,
    /// Sats; the payment aborts before sending if the fee would exceed it.
    /// 0 or absent: no cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_fee: Option<u64>,
    /// Sats, for an invoice that carries no amount (required then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<u64>,
}

/// `data` of `POST /api/lightning/payments/send`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Payment {
    pub id: Uuid,
    pub payment_hash: String,
    pub preimage: String,
    pub amount_sat: Sats,
    pub fee_sat: Sats,
    pub status: PaymentStatus,
    #[serde(with = "crate::time::millis")]
    pub created_at: DateTime<Utc>,
    pub reference: String,
    /// The ledger transaction; empty when nothing was debited.
    pub transaction_id: String,
}

/// Body of `POST /api/lightning/invoices/verify`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct VerifyInvoice {
    pub payment_hash: String,
}

/// `data` of `POST /api/lightning/invoices/verify`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct InvoiceVerification {
    pub id: Uuid,
    pub payment_hash: String,
    pub preimage: String,
    pub amount_sat: Sats,
    pub status: InvoiceStatus,
    pub is_paid: bool,
    pub ledger_credited: bool,
    /// Empty until paid.
    pub settled_at: String,
}
