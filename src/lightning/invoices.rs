//! Receiving: an invoice for an amount in sats, its request as a QR code,
//! and how long it has left. Creating one moves no money, so it needs no
//! approval; it is audited.

use chrono::{DateTime, TimeZone, Utc};
use paydesk_api::models::lightning::{Invoice, NewInvoice};
use paydesk_api::units::Sats;
use serde::{Deserialize, Serialize};
use serde_json::json;
use uuid::Uuid;

use crate::access::permissions::Permission;
use crate::access::Member;
use crate::audit::{self, Event};
use crate::state::AppState;
use crate::web::error::user_fixable;
use crate::web::form::{bounded, Failure, Refusal};

/// The most an invoice may ask for, in sats (the service's limit).
pub const MAX_SATS: i64 = 20_000_000;
/// The longest an invoice may stay open, in minutes (the service's default).
pub const MAX_EXPIRY_MINUTES: u32 = 24 * 60;

/// The invoice form as typed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InvoiceForm {
    #[serde(default)]
    pub amount: String,
    #[serde(default)]
    pub description: String,
    /// Minutes.
    #[serde(default)]
    pub expiry: String,
    /// Fixed when the form was shown, so a double submit creates one.
    #[serde(default)]
    pub reference: String,
}

impl Default for InvoiceForm {
    fn default() -> Self {
        InvoiceForm {
            amount: String::new(),
            description: String::new(),
            expiry: "60".to_owned(),
            reference: format!("paydesk-invoice-{}", Uuid::new_v4().simple()),
        }
    }
}

impl InvoiceForm {
    /// The invoice to ask for, or what is wrong with the form.
    pub fn parse(&self) -> Result<NewInvoice, Refusal> {
        let amount = self
            .amount
            .trim()
            .replace([',', '_', ' '], "")
            .parse::<i64>()
            .ok()
            .filter(|a| (1..=MAX_SATS).contains(a))
            .ok_or_else(|| Refusal::field("amount", "Give a whole number of sats from 1 to 20,000,000."))?;
        let description = bounded(&self.description, "description", "a description", 200)?;
        let minutes = self
            .expiry
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|m| (1..=MAX_EXPIRY_MINUTES).contains(m))
            .ok_or_else(|| Refusal::field("expiry", "Give the minutes it stays open, 1 to 1440."))?;
        let reference = match self.reference.trim() {
            "" => format!("paydesk-invoice-{}", Uuid::new_v4().simple()),
            r => r.chars().take(100).collect(),
        };
        Ok(NewInvoice {
            customer_id: None,
            amount: Sats(amount),
            description,
            expiry: Some(minutes * 60),
            reference,
        })
    }
}

/// Creates the invoice and records who asked for it.
#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id))]
pub async fn create(state: &AppState, member: &Member, form: &InvoiceForm) -> Result<Invoice, Failure> {
    let new = form.parse()?;
    let client = state.client_for(member, Permission::LightningRequest).await?;
    let invoice = match client.create_invoice(&new).await {
        Ok(invoice) => invoice,
        Err(e) => return Err(Refusal::form(user_fixable(e)?).into()),
    };
    let details = json!({ "amount_sat": invoice.amount_sat.0, "reference": invoice.reference });
    audit::member_did(
        &state.pool,
        member,
        Event::LightningInvoiceCreated,
        format!("lightning_invoice:{}", invoice.id),
        details,
    )
    .await?;
    Ok(invoice)
}

/// When an invoice expires: the service gives RFC 3339 on create and Unix
/// seconds (a string) on get and list.
pub fn expires_at(invoice: &Invoice) -> Option<DateTime<Utc>> {
    let text = invoice.expires_at.trim();
    match text.parse::<i64>() {
        Ok(seconds) => Utc.timestamp_opt(seconds, 0).single(),
        Err(_) => DateTime::parse_from_rfc3339(text)
            .ok()
            .map(|t| t.with_timezone(&Utc)),
    }
}

/// Seconds left until `invoice` expires (0 once it has).
pub fn seconds_left(invoice: &Invoice, now: DateTime<Utc>) -> i64 {
    expires_at(invoice).map_or(0, |at| (at - now).num_seconds().max(0))
}

/// "1h 02m 03s", "4m 05s", "6s".
pub fn countdown(seconds: i64) -> String {
    let (h, m, s) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    match (h, m) {
        (0, 0) => format!("{s}s"),
        (0, _) => format!("{m}m {s:02}s"),
        _ => format!("{h}h {m:02}m {s:02}s"),
    }
}

/// The request as a QR code. Upper case keeps the code small
/// (alphanumeric mode); wallets read BOLT11 in either case.
pub fn qr_svg(request: &str) -> String {
    crate::web::qr::svg(&request.to_uppercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(amount: &str, expiry: &str) -> InvoiceForm {
        InvoiceForm {
            amount: amount.into(),
            description: "coffee".into(),
            expiry: expiry.into(),
            reference: "r".into(),
        }
    }

    #[test]
    fn amounts_are_whole_sats_within_the_limits() {
        assert_eq!(form("21000", "60").parse().unwrap().amount, Sats(21_000));
        assert_eq!(form("20,000,000", "60").parse().unwrap().amount, Sats(MAX_SATS));
        for bad in ["0", "20000001", "1.5", "", "abc"] {
            assert_eq!(
                form(bad, "60").parse().unwrap_err().field,
                Some("amount"),
                "{bad}"
            );
        }
        assert_eq!(form("1", "0").parse().unwrap_err().field, Some("expiry"));
        assert_eq!(form("1", "90").parse().unwrap().expiry, Some(5400));
    }

    #[test]
    fn the_countdown_reads_like_a_clock() {
        assert_eq!(countdown(6), "6s");
        assert_eq!(countdown(245), "4m 05s");
        assert_eq!(countdown(3723), "1h 02m 03s");
    }

    #[test]
    fn the_qr_code_is_an_svg_without_a_declaration() {
        let svg = qr_svg("lntbs210u1pexample");
        assert!(svg.starts_with("<svg"), "{svg}");
    }
}
