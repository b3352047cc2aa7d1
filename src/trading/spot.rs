//! Quotes and orders from the trading page: a quote checked before the
//! call (a pair the service trades, a side, a quantity in the base's unit,
//! NGN's bounds), and an order placed from a live quote through the gate.

use paydesk_api::models::trading::{Order, OrderStatus, Quote, QuoteRequest};
use paydesk_api::units::Currency;
use paydesk_api::Client;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::action::{CancelAction, CancelPayload, OrderAction, OrderPayload};
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::approvals::Filing;
use crate::approvals::{gate, Gated};
use crate::state::AppState;
use crate::web::amount;
use crate::web::error::user_fixable;
use crate::web::form::{Failure, Refusal};

/// NGN pairs trade between these many naira (the spec's rule 3).
const NGN_MIN: i64 = 500;
const NGN_MAX: i64 = 10_000_000;

/// The quote form as typed.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
pub struct QuoteForm {
    /// `BASE/QUOTE`, as the price list names the pair.
    #[serde(default)]
    pub pair: String,
    #[serde(default)]
    pub side: String,
    #[serde(default)]
    pub quantity: String,
}

/// What the service trades against: crypto pairs among these, and naira
/// against each (spec, Trading rule 3: NGN/USDT, NGN/USDC, NGN/BTC).
const CRYPTO: &[&str] = &["BTC", "USDT", "USDC"];

/// The pairs the service trades, as `BASE/QUOTE`, from its price list:
/// that list also prices payout currencies (GHS, KES) that don't trade,
/// and gives naira as the quote (`BTC/NGN`) where an order names it as
/// the base (`NGN/BTC`). With `ngn` false, only crypto pairs (target
/// orders don't take naira).
pub async fn pairs(client: &Client, ngn: bool) -> Result<Vec<String>, paydesk_api::ApiError> {
    let prices = client.trading_prices().await?.prices;
    Ok(tradable(
        prices
            .iter()
            .map(|p| (p.base_currency.as_str(), p.quote_currency.as_str())),
        ngn,
    ))
}

fn tradable<'a>(priced: impl Iterator<Item = (&'a str, &'a str)>, ngn: bool) -> Vec<String> {
    let mut pairs: Vec<String> = priced
        .filter_map(
            |(base, quote)| match (CRYPTO.contains(&base), CRYPTO.contains(&quote)) {
                (true, true) => Some(format!("{base}/{quote}")),
                (true, false) if quote == "NGN" && ngn => Some(format!("NGN/{base}")),
                (false, true) if base == "NGN" && ngn => Some(format!("NGN/{quote}")),
                _ => None,
            },
        )
        .collect();
    pairs.sort();
    pairs.dedup();
    pairs
}

fn refused(message: String) -> Failure {
    Refusal::form(message).into()
}

/// A quote for the form, every field checked first.
#[tracing::instrument(skip_all, fields(pair = %form.pair, side = %form.side))]
pub async fn quote(client: &Client, form: &QuoteForm) -> Result<Quote, Failure> {
    if !pairs(client, true).await?.contains(&form.pair) {
        return Err(Refusal::field("pair", "Choose one of the pairs the service trades.").into());
    }
    let (base, quote) = form.pair.split_once('/').unwrap_or_default();
    if !matches!(form.side.as_str(), "buy" | "sell") {
        return Err(Refusal::field("side", "Choose buy or sell.").into());
    }
    let unit = Currency::parse(base).map_err(|e| refused(e.to_string()))?;
    let quantity = amount::parse("The quantity", &form.quantity, base, unit.decimals().unwrap_or(8))
        .map_err(|m| Refusal::field("quantity", m))?;
    if base == "NGN" && !(Decimal::from(NGN_MIN)..=Decimal::from(NGN_MAX)).contains(&quantity) {
        let message = format!("NGN trades are between {NGN_MIN} and {NGN_MAX} naira.");
        return Err(Refusal::field("quantity", message).into());
    }
    let request = QuoteRequest {
        base_currency: base.to_owned(),
        quote_currency: quote.to_owned(),
        side: form.side.clone(),
        quantity,
    };
    match client.create_trading_quote(&request).await {
        Ok(quote) => Ok(quote),
        Err(e) => Err(refused(user_fixable(e)?)),
    }
}

/// The order form: the quote it is placed from.
#[derive(Debug, Clone, Deserialize)]
pub struct OrderForm {
    pub quote_id: Uuid,
}

/// One order per quote: the reference comes from the quote, so a double
/// submit (or a reload of the confirmation) places the order once.
fn reference(quote_id: Uuid) -> String {
    format!("paydesk-order-{}", quote_id.simple())
}

/// Places an order from a live quote through the gate: previewed until
/// confirmed; it runs at once or waits for approval as the policy says.
#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id, quote = %form.quote_id))]
pub async fn place(
    state: &AppState,
    member: &Member,
    form: &OrderForm,
    confirmed: bool,
) -> Result<Gated, Failure> {
    let client = state.client_for(member, Permission::TradingRequest).await?;
    let reference = reference(form.quote_id);
    let quote = client.trading_quote(&form.quote_id.to_string()).await?;
    if quote.is_exhausted {
        return Err(refused(
            "An order was already placed from this quote; get a new quote for another.".to_owned(),
        ));
    }
    if quote.is_expired {
        return Err(refused("This quote has expired; get a new quote.".to_owned()));
    }
    let payload = OrderPayload::from_quote(&quote);
    let summary = payload.summary();
    let filing = Filing {
        target: &reference,
        summary: &summary,
        amount: payload.notional(),
        currency: &quote.quote_currency,
        reference: Some(reference.clone()),
        payload,
        payee_saved_at: None,
    };
    gate::<OrderAction>(state, member, filing, confirmed).await
}

/// Cancels an order that rests on the book, through the gate (see
/// `CancelAction`): previewed until confirmed.
#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id, order = %order.id))]
pub async fn cancel(
    state: &AppState,
    member: &Member,
    order: &Order,
    confirmed: bool,
) -> Result<Gated, Failure> {
    if order.status != OrderStatus::Pending {
        return Err(refused(format!(
            "This order is {}; only a resting order can be cancelled.",
            order.status
        )));
    }
    let payload = CancelPayload {
        order_id: order.id,
        order: format!(
            "{} {} {} at {} {} ({} filled)",
            order.side.to_lowercase(),
            order.quantity,
            order.base_currency,
            order.price,
            order.quote_currency,
            order.filled_quantity
        ),
    };
    let summary = format!("Cancel the order to {}", payload.order);
    let target = format!("order:{}", order.id);
    let filing = Filing {
        target: &target,
        summary: &summary,
        amount: Decimal::ZERO,
        currency: &order.quote_currency,
        reference: None,
        payload,
        payee_saved_at: None,
    };
    gate::<CancelAction>(state, member, filing, confirmed).await
}

#[cfg(test)]
mod tests {
    use super::tradable;

    #[test]
    fn only_traded_pairs_are_offered_with_naira_as_the_base() {
        let priced = [
            ("BTC", "USDT"),
            ("BTC", "GHS"),
            ("USDT", "NGN"),
            ("BTC", "NGN"),
            ("USDT", "KES"),
        ];
        assert_eq!(
            tradable(priced.into_iter(), true),
            ["BTC/USDT", "NGN/BTC", "NGN/USDT"]
        );
        assert_eq!(tradable(priced.into_iter(), false), ["BTC/USDT"]);
    }
}
