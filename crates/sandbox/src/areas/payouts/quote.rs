//! Pricing a payout: the corridor's rate and limits, the fee, the chain an
//! onchain payout is paid on, and the quote valid `QUOTE_VALIDITY_SECS`.

use chrono::Duration;
use paydesk_api::models::payouts::{ExchangeRate, Payout, PayoutStatus, QuoteRequest, Trip};
use paydesk_api::units::{decimal_to_units, Currency};
use rust_decimal::{Decimal, RoundingStrategy};
use uuid::Uuid;

use super::book::PayoutRecord;
use super::corridors::{self, Corridor};
use super::model::*;
use crate::error::ApiError;
use crate::scheduler::Job;
use crate::state::{Company, Effects};

pub(super) fn asset_decimals(asset: &str) -> Option<u32> {
    Currency::parse(asset).ok().and_then(|c| c.decimals())
}

pub(super) fn round_up(value: Decimal, dp: u32) -> Decimal {
    value.round_dp_with_strategy(dp, RoundingStrategy::AwayFromZero)
}

pub(super) fn round_down(value: Decimal, dp: u32) -> Decimal {
    value.round_dp_with_strategy(dp, RoundingStrategy::ToZero)
}

pub(super) fn chain_name(source: &str, chain: Option<&str>, asset: &str) -> Result<String, ApiError> {
    if source == "offchain" {
        return Ok(String::new());
    }
    let chain = chain
        .map(|c| c.trim().to_ascii_uppercase())
        .filter(|c| !c.is_empty())
        .ok_or_else(|| {
            ApiError::field(
                "chain",
                "is required when source is onchain (e.g. BITCOIN, TRON, ETHEREUM)",
            )
        })?;
    let fits = match asset {
        "BTC" => chain == "BITCOIN",
        _ => matches!(
            chain.as_str(),
            "ETHEREUM" | "TRON" | "POLYGON" | "BSC" | "SOLANA" | "BASE" | "OPTIMISM" | "AVALANCHE"
        ),
    };
    if !fits {
        return Err(ApiError::field(
            "chain",
            format!("{asset} can't be sent on {chain}"),
        ));
    }
    Ok(format!("CHAIN_TYPE_{chain}"))
}

/// Prices a payout and records it in QUOTE status.
pub fn quote(company: &mut Company, req: &QuoteRequest, fx: &mut Effects<'_>) -> Result<Payout, ApiError> {
    let corridor = corridors::find(&req.country).ok_or_else(|| {
        ApiError::field(
            "country",
            format!("'{}' is not a payout country; use NG, KE or GH", req.country),
        )
    })?;
    let asset = req.from_asset.trim().to_ascii_uppercase();
    if !matches!(asset.as_str(), "BTC" | "USDT" | "USDC") {
        return Err(ApiError::field("from_asset", "must be BTC, USDT or USDC"));
    }
    if !req.to_currency.trim().eq_ignore_ascii_case(corridor.currency) {
        return Err(ApiError::field(
            "to_currency",
            format!("{} payouts are paid in {}", corridor.country, corridor.currency),
        ));
    }
    let source = req.source.trim().to_ascii_lowercase();
    if !matches!(source.as_str(), "offchain" | "onchain") {
        return Err(ApiError::field("source", "must be offchain or onchain"));
    }
    if req.reference.trim().is_empty() {
        return Err(ApiError::field("reference", "is required"));
    }
    let chain = chain_name(&source, req.chain.as_deref(), &asset)?;
    let decimals = asset_decimals(&asset).unwrap_or(6);
    let price = |base: &str| {
        fx.market
            .price(base, corridor.currency)
            .ok_or_else(|| ApiError::invalid(format!("no market price for {base}/{}", corridor.currency)))
    };
    let rate = price(&asset)?;
    let btc_rate = price("BTC")?;
    let (amount, settlement) = match (req.amount, req.settlement_amount) {
        (Some(amount), _) => {
            if amount <= Decimal::ZERO {
                return Err(ApiError::field("amount", "must be greater than zero"));
            }
            decimal_to_units(amount, decimals).map_err(|e| ApiError::field("amount", e.to_string()))?;
            (amount, round_down(amount * rate, 2))
        }
        (None, Some(settlement)) => {
            if settlement <= Decimal::ZERO {
                return Err(ApiError::field("settlement_amount", "must be greater than zero"));
            }
            decimal_to_units(settlement, 2)
                .map_err(|e| ApiError::field("settlement_amount", e.to_string()))?;
            (round_up(settlement / rate, decimals), settlement)
        }
        (None, None) => return Err(ApiError::field("amount", "send amount or settlement_amount")),
    };
    check_limits(corridor, settlement)?;
    let fees = round_up(amount / Decimal::from(100), decimals);
    let amount_units =
        decimal_to_units(amount, decimals).map_err(|e| ApiError::field("amount", e.to_string()))?;
    let fee_units = decimal_to_units(fees, decimals).map_err(|e| ApiError::field("amount", e.to_string()))?;
    // The amount's worth in BTC, through the fiat prices of both.
    let btc_amount = match asset.as_str() {
        "BTC" => amount,
        _ => round_up(amount * rate / btc_rate, 8),
    };
    let now = fx.now;
    let payout = Payout {
        id: Uuid::new_v4(),
        quote_id: Uuid::new_v4().to_string(),
        company_id: company.id,
        status: PayoutStatus::Quote,
        source: source.to_ascii_uppercase(),
        from_asset: asset.clone(),
        chain,
        to_currency: corridor.currency.to_owned(),
        amount,
        settlement_amount: settlement,
        sat_amount: decimal_to_units(btc_amount, 8).unwrap_or_default().to_string(),
        btc_amount,
        fees,
        cent_fees: decimal_to_units(round_down(fees * rate, 2), 2)
            .unwrap_or_default()
            .to_string(),
        cent_amount: decimal_to_units(settlement, 2).unwrap_or_default().to_string(),
        exchange_rate: ExchangeRate {
            rate,
            btc_rate,
            currency: corridor.currency.to_owned(),
        },
        beneficiary: None,
        payment_reason: String::new(),
        reference: req.reference.clone(),
        country: corridor.country.to_owned(),
        callback_url: String::new(),
        provider_settlement_id: String::new(),
        trip: Trip {
            quote_at: Some(now),
            ..Trip::default()
        },
        expires_at: now + Duration::seconds(QUOTE_VALIDITY_SECS),
        created_at: Some(now),
        updated_at: Some(now),
        failure_reason: None,
        deposit_address: None,
    };
    let seq = company.payouts.records.last().map_or(1, |r| r.seq + 1);
    company.payouts.add(PayoutRecord {
        seq,
        payout: payout.clone(),
        asset: Currency::parse(&asset).map_err(|e| ApiError::invalid(e.to_string()))?,
        amount_units,
        fee_units,
    });
    fx.scheduler.schedule(
        payout.expires_at,
        Job::PayoutExpiry {
            company_id: company.id,
            payout_id: payout.id,
        },
    );
    Ok(payout)
}

pub(super) fn check_limits(corridor: &Corridor, settlement: Decimal) -> Result<(), ApiError> {
    let (low, high) = (
        Decimal::from(corridor.lower_limit),
        Decimal::from(corridor.higher_limit),
    );
    if settlement < low || settlement > high {
        return Err(ApiError::field(
            "settlement_amount",
            format!(
                "{} {} is outside the {} corridor's limits of {} to {} {}",
                settlement, corridor.currency, corridor.country, low, high, corridor.currency
            ),
        ));
    }
    Ok(())
}
