//! The sandbox's market and deposits, set from the portal: a pair's price
//! (target orders that cross it trigger), and a deposit arriving at one of
//! the company's addresses (it confirms as the sandbox's clock moves), and
//! faults on its calls and webhook deliveries, to see how the portal and
//! its receivers cope.
//! Each is audited; neither touches a live connection.

use paydesk_api::models::control::{AddFault, AddWebhookFault, SimulateDeposit};
use paydesk_api::units::{decimal_to_units, BaseUnits, Currency};
use paydesk_api::Client;
use serde::Deserialize;
use serde_json::json;

use crate::access::Member;
use crate::audit::{self, Event};
use crate::state::AppState;
use crate::web::amount;
use crate::web::error::user_fixable;
use crate::web::form::{Failure, Refusal};

#[derive(Debug, Default, Clone, Deserialize)]
pub struct PriceForm {
    /// `BASE/QUOTE`.
    #[serde(default)]
    pub pair: String,
    #[serde(default)]
    pub price: String,
}

/// Sets a pair's market price.
#[tracing::instrument(skip_all, fields(pair = %form.pair))]
pub async fn set_price(
    state: &AppState,
    member: &Member,
    client: &Client,
    form: &PriceForm,
) -> Result<String, Failure> {
    let (base, quote) = form
        .pair
        .split_once('/')
        .ok_or_else(|| Refusal::field("pair", "Choose the pair."))?;
    let price = amount::parse("The price", &form.price, quote, 8).map_err(|m| Refusal::field("price", m))?;
    let set = match client.sandbox_set_price(base, quote, price).await {
        Ok(set) => set,
        Err(e) => return Err(Refusal::form(user_fixable(e)?).into()),
    };
    let details = json!({"pair": form.pair, "price": set.price});
    audit::member_did(
        &state.pool,
        member,
        Event::SandboxPriceSet,
        format!("sandbox:price:{}", form.pair),
        details,
    )
    .await?;
    Ok(format!(
        "{} now trades at {} {quote}; target orders that cross it trigger.",
        form.pair, set.price
    ))
}

#[derive(Debug, Default, Clone, Deserialize)]
pub struct DepositForm {
    /// `<chain> <address>` of one of the company's addresses.
    #[serde(default)]
    pub to: String,
    #[serde(default)]
    pub currency: String,
    /// In whole units of the currency.
    #[serde(default)]
    pub amount: String,
}

/// A deposit arrives at one of the company's addresses.
#[tracing::instrument(skip_all, fields(currency = %form.currency))]
pub async fn deposit(
    state: &AppState,
    member: &Member,
    client: &Client,
    form: &DepositForm,
) -> Result<String, Failure> {
    let (chain, address) = form
        .to
        .split_once(' ')
        .ok_or_else(|| Refusal::field("to", "Choose the address the deposit arrives at."))?;
    let unit =
        Currency::parse(&form.currency).map_err(|_| Refusal::field("currency", "Choose the currency."))?;
    let decimals = unit.decimals().unwrap_or(6);
    let whole = amount::parse("The amount", &form.amount, unit.code(), decimals)
        .map_err(|m| Refusal::field("amount", m))?;
    let units = decimal_to_units(whole, decimals).map_err(|e| Refusal::field("amount", e.to_string()))?;
    let body = SimulateDeposit {
        chain: chain.to_owned(),
        address: address.to_owned(),
        currency: unit.code().to_owned(),
        amount: BaseUnits(units),
    };
    let arrived = match client.sandbox_deposit(&body).await {
        Ok(tx) => tx,
        Err(e) => return Err(Refusal::form(user_fixable(e)?).into()),
    };
    let details = json!({"chain": chain, "address": address, "currency": unit.code(), "amount": whole});
    audit::member_did(
        &state.pool,
        member,
        Event::SandboxDepositSimulated,
        format!("sandbox:deposit:{}", arrived.transaction_id),
        details,
    )
    .await?;
    Ok(format!(
        "A deposit of {whole} {} arrived at {address} ({}); it confirms as the clock moves.",
        unit.code(),
        arrived.state
    ))
}

/// The call faults offered: (mode, what it does).
pub const CALL_FAULTS: &[(&str, &str)] = &[
    (
        "500_no_body",
        "runs, then the answer is lost (a 500 with no body)",
    ),
    ("503", "refused before running (503)"),
    ("429", "refused before running (429, too many requests)"),
    ("timeout", "runs, then the answer never comes (60 s)"),
    ("delay_ms:2000", "runs, then answers 2 seconds late"),
];

/// The webhook delivery faults offered: (mode, what it does).
pub const DELIVERY_FAULTS: &[(&str, &str)] = &[
    ("drop", "never sent (a resend still sends it)"),
    ("duplicate", "sent twice"),
    ("delay_s:60", "sent a minute of sandbox time late"),
    ("out_of_order", "held back until a later event was sent"),
];

#[derive(Debug, Default, Clone, Deserialize)]
pub struct FaultForm {
    /// For calls: `*`, `GET`, `POST`…; unused for deliveries.
    #[serde(default)]
    pub method: String,
    /// For calls: the path prefix; for deliveries: the event name prefix.
    #[serde(default)]
    pub matching: String,
    #[serde(default)]
    pub mode: String,
    #[serde(default)]
    pub count: String,
}

impl FaultForm {
    fn count(&self) -> Result<u32, Refusal> {
        match self.count.trim().parse::<u32>() {
            Ok(n) if (1..=1000).contains(&n) => Ok(n),
            _ => Err(Refusal::field("count", "Say how many times, from 1 to 1,000.")),
        }
    }
}

/// Arms a fault on the company's next matching calls to the sandbox
/// (the portal's own calls included: that is what it is for).
#[tracing::instrument(skip_all, fields(mode = %form.mode))]
pub async fn arm_call_fault(
    state: &AppState,
    member: &Member,
    client: &Client,
    form: &FaultForm,
) -> Result<String, Failure> {
    if !CALL_FAULTS.iter().any(|(mode, _)| *mode == form.mode) {
        return Err(Refusal::field("mode", "Choose what goes wrong.").into());
    }
    let method = form.method.trim().to_uppercase();
    if !matches!(method.as_str(), "*" | "GET" | "POST" | "PUT" | "DELETE") {
        return Err(Refusal::field("method", "Choose a method, or * for any.").into());
    }
    let path_prefix = form.matching.trim().to_owned();
    if !path_prefix.starts_with("/api/") {
        return Err(Refusal::field("matching", "Enter the start of an API path, e.g. /api/payouts.").into());
    }
    let count = form.count()?;
    let fault = AddFault {
        method: method.clone(),
        path_prefix: path_prefix.clone(),
        mode: form.mode.clone(),
        count,
    };
    if let Err(e) = client.sandbox_add_fault(&fault).await {
        return Err(Refusal::form(user_fixable(e)?).into());
    }
    let details = json!({"method": method, "path_prefix": path_prefix, "mode": form.mode, "count": count});
    audit::member_did(
        &state.pool,
        member,
        Event::SandboxFaultArmed,
        "sandbox:faults",
        details,
    )
    .await?;
    Ok(format!(
        "The next {count} {method} call(s) to {path_prefix}… fail: {}.",
        form.mode
    ))
}

/// Arms a fault on the company's next matching webhook deliveries.
#[tracing::instrument(skip_all, fields(mode = %form.mode))]
pub async fn arm_delivery_fault(
    state: &AppState,
    member: &Member,
    client: &Client,
    form: &FaultForm,
) -> Result<String, Failure> {
    if !DELIVERY_FAULTS.iter().any(|(mode, _)| *mode == form.mode) {
        return Err(Refusal::field("mode", "Choose what goes wrong.").into());
    }
    let count = form.count()?;
    let event = Some(form.matching.trim().to_owned()).filter(|e| !e.is_empty());
    let fault = AddWebhookFault {
        mode: form.mode.clone(),
        event: event.clone(),
        count,
        ..AddWebhookFault::default()
    };
    if let Err(e) = client.sandbox_add_webhook_fault(&fault).await {
        return Err(Refusal::form(user_fixable(e)?).into());
    }
    let details = json!({"mode": form.mode, "event": event, "count": count});
    audit::member_did(
        &state.pool,
        member,
        Event::SandboxFaultArmed,
        "sandbox:webhook_faults",
        details,
    )
    .await?;
    let which = event.map_or_else(|| "deliveries".to_owned(), |e| format!("deliveries of {e}…"));
    Ok(format!("The next {count} {which}: {}.", form.mode))
}

/// Clears every fault armed for the company, on calls and on deliveries.
#[tracing::instrument(skip_all)]
pub async fn clear_faults(state: &AppState, member: &Member, client: &Client) -> Result<String, Failure> {
    client.sandbox_clear_faults().await?;
    client.sandbox_clear_webhook_faults().await?;
    audit::member_did(
        &state.pool,
        member,
        Event::SandboxFaultsCleared,
        "sandbox:faults",
        json!({}),
    )
    .await?;
    Ok("No faults are armed any more; calls and deliveries go through.".to_owned())
}

#[derive(Debug, Default, Clone, Deserialize)]
pub struct PayerForm {
    /// A BOLT11 request of this company's.
    #[serde(default)]
    pub request: String,
}

/// Someone outside the sandbox pays one of the company's invoices.
#[tracing::instrument(skip_all)]
pub async fn pay_invoice(
    state: &AppState,
    member: &Member,
    client: &Client,
    form: &PayerForm,
) -> Result<String, Failure> {
    let request = form.request.trim();
    if request.is_empty() {
        return Err(Refusal::field(
            "request",
            "Paste the invoice's payment request (it starts with ln).",
        )
        .into());
    }
    let paid = match client.sandbox_pay_invoice(request).await {
        Ok(invoice) => invoice,
        Err(e) => return Err(Refusal::field("request", user_fixable(e)?).into()),
    };
    let details = json!({"invoice": paid.id, "amount_sats": paid.amount_sat.0});
    audit::member_did(
        &state.pool,
        member,
        Event::SandboxInvoicePaid,
        format!("invoice:{}", paid.id),
        details,
    )
    .await?;
    Ok(format!(
        "An outside payer paid the invoice ({} sats); its page shows it paid.",
        paid.amount_sat.0
    ))
}
