//! The sandbox's market and deposits, set from the portal: a pair's price
//! (target orders that cross it trigger), and a deposit arriving at one of
//! the company's addresses (it confirms as the sandbox's clock moves).
//! Each is audited; neither touches a live connection.

use paydesk_api::models::control::SimulateDeposit;
use paydesk_api::units::{decimal_to_units, BaseUnits, Currency};
use paydesk_api::Client;
use serde::Deserialize;
use serde_json::json;

use crate::access::Member;
use crate::audit::{self, Event};
use crate::startup::AppState;
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
