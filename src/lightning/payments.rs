//! Paying: a BOLT11 request pasted in is decoded (amount, payee,
//! description, expiry) and previewed (route and fee); paying it goes
//! through the approval gate as a `LightningPaymentAction`, with the fee
//! cap fixed in what approvers approve.

use chrono::{DateTime, TimeZone, Utc};
use paydesk_api::models::lightning::{DecodedInvoice, PaymentPreview};
use paydesk_api::{ApiError, Client};
use serde::{Deserialize, Serialize};

use super::action::{LightningPaymentAction, LightningPaymentPayload};
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::approvals::Filing;
use crate::approvals::{gate, Gated};
use crate::state::AppState;
use crate::web::error::user_fixable;
use crate::web::form::{Failure, Refusal};

/// The pay form as typed.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PayForm {
    #[serde(default)]
    pub request: String,
    /// Sats; empty: the fee the preview found.
    #[serde(default)]
    pub max_fee: String,
}

impl PayForm {
    /// The request without spaces or a `lightning:` prefix.
    pub fn request(&self) -> Result<String, Refusal> {
        let text: String = self.request.split_whitespace().collect();
        let text = text
            .strip_prefix("lightning:")
            .or_else(|| text.strip_prefix("LIGHTNING:"))
            .unwrap_or(&text)
            .to_lowercase();
        if !text.starts_with("ln") || text.len() < 20 || text.len() > 2000 {
            return Err(Refusal::field(
                "request",
                "Paste a Lightning payment request: it starts with \"ln\" (lnbc…, lntbs…).",
            ));
        }
        Ok(text)
    }
}

/// A request decoded and previewed: what paying it would do.
#[derive(Debug, Clone)]
pub struct Checked {
    pub request: String,
    pub decoded: DecodedInvoice,
    pub preview: PaymentPreview,
}

impl Checked {
    pub fn expires_at(&self) -> Option<DateTime<Utc>> {
        Utc.timestamp_opt(self.decoded.expires_at, 0).single()
    }

    /// Why it can't be paid, if it can't.
    pub fn unpayable(&self) -> Option<String> {
        if self.decoded.is_expired || self.preview.is_expired {
            return Some("This request has expired; ask the payee for a new one.".to_owned());
        }
        if self.decoded.amount_sat == 0 {
            return Some("This request carries no amount; ask the payee for one that does.".to_owned());
        }
        if !self.preview.route_found {
            return Some(
                "No route to this payee was found, so it can't be paid: the service reaches only \
                 nodes it has a path to (and a request of our own can't be paid by us). Nothing was sent."
                    .to_owned(),
            );
        }
        None
    }
}

/// Decodes and previews the request in `form`; a request the service can't
/// read is refused beside the field.
#[tracing::instrument(skip_all)]
pub async fn check(client: &Client, form: &PayForm) -> Result<Checked, Failure> {
    let request = form.request()?;
    let beside =
        |e: ApiError| -> Result<Refusal, Failure> { Ok(Refusal::field("request", user_fixable(e)?)) };
    let decoded = match client.decode_invoice(&request).await {
        Ok(d) => d,
        Err(e) => return Err(beside(e)?.into()),
    };
    let preview = match client.initiate_payment(&request).await {
        Ok(p) => p,
        Err(e) => return Err(beside(e)?.into()),
    };
    Ok(Checked {
        request,
        decoded,
        preview,
    })
}

/// The fee cap from the form: the preview's fee when left empty, never
/// below it (the payment would abort).
fn max_fee(form: &PayForm, checked: &Checked) -> Result<i64, Refusal> {
    let fee = checked.preview.fee_sat.0;
    let cap = match form.max_fee.trim() {
        "" => fee,
        text => text
            .parse::<i64>()
            .map_err(|_| Refusal::field("max_fee", "Give the most you'll pay in fees as whole sats."))?,
    };
    if cap < fee {
        return Err(Refusal::field(
            "max_fee",
            format!("The route costs {fee} sats in fees; a cap below that can't pay."),
        ));
    }
    Ok(cap)
}

/// Pays the request through the gate: previewed until confirmed; it runs
/// at once or waits for approval as the policy says.
#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id))]
pub async fn pay(
    state: &AppState,
    member: &Member,
    form: &PayForm,
    confirmed: bool,
) -> Result<Gated, Failure> {
    let client = state.client_for(member, Permission::LightningRequest).await?;
    let checked = check(&client, form).await?;
    if let Some(why) = checked.unpayable() {
        return Err(Refusal::field("request", why).into());
    }
    let payload = LightningPaymentPayload {
        request: checked.request.clone(),
        payment_hash: checked.decoded.payment_hash.clone(),
        destination: checked.decoded.destination.clone(),
        amount_sat: checked.preview.amount_sat.0,
        max_fee_sat: max_fee(form, &checked)?,
        description: checked.decoded.description.clone(),
        expires_at: checked.decoded.expires_at,
    };
    let summary = payload.summary();
    let target = format!("lightning:{}", payload.payment_hash);
    let filing = Filing {
        target: &target,
        summary: &summary,
        amount: payload.most_btc(),
        currency: "BTC",
        reference: None,
        payload,
        payee_saved_at: None,
    };
    gate::<LightningPaymentAction>(state, member, filing, confirmed).await
}
