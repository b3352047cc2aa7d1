//! The rates of every traded pair, read together.

use futures_util::future::join_all;
use paydesk_api::models::rates::{Conversion, ExchangeRate};
use paydesk_api::units::Currency;
use paydesk_api::{ApiError, Client};

use crate::web::amount;
use crate::web::form::{Failure, Refusal};

/// Every pair the service prices (as `GET /api/trading/prices` lists
/// them), with its rates now, in the order of the price list.
#[tracing::instrument(skip_all)]
pub async fn rates(client: &Client) -> Result<Vec<ExchangeRate>, ApiError> {
    let prices = client.trading_prices().await?.prices;
    let asked = prices
        .iter()
        .map(|p| client.exchange_rate(&p.base_currency, &p.quote_currency));
    join_all(asked).await.into_iter().collect()
}

/// The service's code for a currency: a US dollar is priced as USDT.
fn service_code(currency: &str) -> &str {
    if currency.eq_ignore_ascii_case("USD") {
        "USDT"
    } else {
        currency
    }
}

/// Units of `to` per unit of `from` at the service's mid rate (1 for the
/// same currency); how the gate weighs requests and the dashboard totals
/// balances in the reporting currency.
pub async fn mid_rate(client: &Client, from: &str, to: &str) -> Result<rust_decimal::Decimal, ApiError> {
    let (from, to) = (service_code(from), service_code(to));
    if from.eq_ignore_ascii_case(to) {
        return Ok(rust_decimal::Decimal::ONE);
    }
    client.exchange_rate(from, to).await.map(|r| r.mid_rate)
}

/// The converter's form as typed.
#[derive(Debug, Default, Clone, serde::Deserialize, serde::Serialize)]
pub struct ConvertForm {
    #[serde(default)]
    pub amount: String,
    #[serde(default)]
    pub from: String,
    #[serde(default)]
    pub to: String,
}

/// `amount` of `from` in `to`, at the mid rate; refusals name the field.
#[tracing::instrument(skip_all, fields(from = %form.from, to = %form.to))]
pub async fn convert(client: &Client, form: &ConvertForm) -> Result<Conversion, Failure> {
    let from = Currency::parse(form.from.trim())
        .map_err(|_| Refusal::field("from", "Choose the currency to convert from."))?;
    let to = Currency::parse(form.to.trim())
        .map_err(|_| Refusal::field("to", "Choose the currency to convert to."))?;
    if from == to {
        return Err(Refusal::field("to", "Choose a different currency to convert to.").into());
    }
    let decimals = from.decimals().unwrap_or(2);
    let amount = amount::parse("The amount", &form.amount, from.code(), decimals)
        .map_err(|m| Refusal::field("amount", m))?;
    match client.convert(from.code(), to.code(), amount).await {
        Ok(conversion) => Ok(conversion),
        Err(e) => Err(Refusal::form(crate::web::error::user_fixable(e)?).into()),
    }
}
