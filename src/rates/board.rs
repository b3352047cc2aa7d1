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
