//! Customers and their card KYC (spec "Customer"; sandbox-rules.md,
//! "Customers and card KYC").

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Customer {
    pub id: Uuid,
    #[serde(default)]
    pub first_name: String,
    #[serde(default)]
    pub last_name: String,
    pub email: String,
    pub customer_type: String,
    pub company_id: Uuid,
    pub created_by: Uuid,
    pub is_active: bool,
    /// Whether the customer is blacklisted, as the official client reads
    /// it (an addition): blacklisting is what makes a customer inactive,
    /// so it is `!is_active`.
    #[serde(default)]
    pub blacklist: bool,
    /// A string of JSON, `{}` when empty.
    #[serde(default)]
    pub metadata: String,
    #[serde(default)]
    pub reference: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub country_code: Option<String>,
    /// The full-KYC fields below are present once card KYC was submitted
    /// (`phone_number` is then the local number, after `dial_code`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub country: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date_of_birth: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dial_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line1: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub city: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub postal_code: Option<String>,
    #[serde(with = "crate::time::millis")]
    pub created_at: DateTime<Utc>,
    #[serde(with = "crate::time::millis")]
    pub updated_at: DateTime<Utc>,
}

impl Customer {
    pub fn full_name(&self) -> String {
        format!("{} {}", self.first_name, self.last_name)
            .trim()
            .to_owned()
    }

    /// Records the verified identity details on the customer.
    pub fn apply_kyc(&mut self, d: &KycDetails) {
        self.country = Some(d.country.clone());
        self.date_of_birth = Some(d.date_of_birth.clone());
        self.id_type = Some(d.id_type.clone());
        self.id_number = Some(d.id_number.clone());
        self.dial_code = Some(d.dial_code.clone());
        self.phone_number = Some(d.phone_number.clone());
        self.line1 = Some(d.line1.clone());
        self.city = Some(d.city.clone());
        self.state = Some(d.state.clone());
        self.postal_code = Some(d.postal_code.clone());
    }
}

/// Body of `POST /api/customers`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({"email": "ada@example.com", "customer_type": "individual", "first_name": "Ada", "last_name": "Lovelace", "reference": "customer-0001"})))]
pub struct NewCustomer {
    pub email: String,
    pub customer_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub country_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
}

/// Body of `PUT /api/customers/{id}`; omitted fields keep their value.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CustomerUpdate {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_active: Option<bool>,
}

/// Body of `POST /api/customers/blacklist/{id}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Blacklist {
    pub blacklist: bool,
}

/// Filters of `GET /api/customers`.
#[derive(Debug, Clone, Default)]
pub struct CustomerQuery {
    pub id: Option<String>,
    pub reference: Option<String>,
    pub email: Option<String>,
    pub customer_type: Option<String>,
    pub is_active: Option<bool>,
    pub cursor: Option<String>,
    pub limit: Option<u32>,
}

/// `data` of `GET /api/customers`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CustomerPage {
    pub customers: Vec<Customer>,
    pub has_more: bool,
    pub next_cursor: String,
    pub prev_cursor: String,
    pub page_size: u32,
    pub total: u64,
    /// Where the page lies, as the official client reads it (an
    /// addition beside the paging fields above).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ListMeta>,
}

/// `meta` of the customers list: the 1-based page of `limit` records it
/// is, and the pages in all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ListMeta {
    pub page: u64,
    pub limit: u64,
    pub total: u64,
    pub page_count: u64,
    pub has_previous_page: bool,
    pub has_next_page: bool,
}

/// The identity details card KYC verifies (the spec's full-KYC fields).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct KycDetails {
    /// ISO 3166-1 alpha-3.
    pub country: String,
    /// YYYY-MM-DD.
    pub date_of_birth: String,
    /// `national_id`, `passport` or `drivers_license`.
    pub id_type: String,
    pub id_number: String,
    pub dial_code: String,
    pub phone_number: String,
    pub line1: String,
    pub city: String,
    pub state: String,
    pub postal_code: String,
}

/// `pending`, then `approved` or `rejected`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum KycStatus {
    Pending,
    Approved,
    Rejected,
}

impl KycStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            KycStatus::Pending => "pending",
            KycStatus::Approved => "approved",
            KycStatus::Rejected => "rejected",
        }
    }
}

/// `data` of the card KYC calls.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CardKyc {
    pub customer_id: Uuid,
    pub status: KycStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(with = "crate::time::millis_opt")]
    pub submitted_at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(with = "crate::time::millis_opt")]
    pub reviewed_at: Option<DateTime<Utc>>,
}
