//! Filing a withdrawal: the form checked field by field (the asset carried
//! on the chain, the address checked with the service, the chain's memo,
//! the amount in the asset's unit, what the wallet holds), the fee shown,
//! then the gate: previewed until confirmed, filed under the reference
//! fixed when the form was shown, so a double submit files once.

use chrono::{DateTime, Utc};
use paydesk_api::models::addresses::{SupportedChain, ValidateAddress};
use paydesk_api::models::beneficiaries::Destination;
use paydesk_api::units::{decimal_to_units, BaseUnits, Currency};
use paydesk_api::Client;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::action::{Payee, WithdrawalAction, WithdrawalPayload};
use super::{needs_memo, short_address};
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::approvals::ActionRequest;
use crate::approvals::Filing;
use crate::approvals::{gate, Gated};
use crate::state::AppState;
use crate::web::amount;
use crate::web::error::{describe_upstream, user_fixable, PortalError};
use crate::web::form::{Failure, Refusal};

const REFERENCE_PREFIX: &str = "paydesk-withdrawal-";

/// The withdrawal form as typed.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
pub struct Draft {
    #[serde(default)]
    pub currency: String,
    #[serde(default)]
    pub chain: String,
    #[serde(default)]
    pub to_address: String,
    #[serde(default)]
    pub memo: String,
    #[serde(default)]
    pub amount: String,
    /// Fixed when the form is shown.
    #[serde(default)]
    pub reference: String,
    /// A saved crypto payee to pay instead of the typed chain and address.
    #[serde(default)]
    pub beneficiary_id: String,
}

impl Draft {
    /// A blank form with its own reference.
    pub fn fresh() -> Draft {
        Draft {
            reference: new_reference(),
            ..Draft::default()
        }
    }
}

pub fn new_reference() -> String {
    format!("{REFERENCE_PREFIX}{}", Uuid::new_v4().simple())
}

/// The assets each chain can send from the wallet: its stablecoins, and
/// its native token when the wallet holds it (BTC on bitcoin).
pub fn assets_of(chain: &SupportedChain) -> Vec<String> {
    let native = &chain.native_token.symbol;
    chain
        .stablecoins
        .iter()
        .map(|t| t.symbol.clone())
        .chain(
            Currency::parse(native)
                .ok()
                .and_then(|c| c.decimals())
                .map(|_| native.clone()),
        )
        .collect()
}

/// The network fee of the service's latest withdrawal of `currency`.
pub async fn fee_estimate(client: &Client, currency: &str) -> Result<Option<BaseUnits>, Failure> {
    let page = client.withdrawals(None, None, Some(50)).await?;
    Ok(page
        .withdrawals
        .iter()
        .find(|w| w.currency.eq_ignore_ascii_case(currency))
        .map(|w| w.fee))
}

/// The chain and asset, checked against the service's supported chains.
async fn chain_and_asset(client: &Client, d: &Draft) -> Result<(String, Currency, u32), Failure> {
    let chain = d.chain.trim().to_ascii_lowercase();
    let chains = client.supported_chains().await?.chains;
    let Some(supported) = chains.iter().find(|c| c.chain == chain) else {
        return Err(Refusal::field("chain", "Choose the chain to send on.").into());
    };
    let currency =
        Currency::parse(&d.currency).map_err(|_| Refusal::field("currency", "Choose the asset to send."))?;
    let decimals = currency.decimals();
    match decimals {
        Some(decimals) if assets_of(supported).iter().any(|a| a == currency.code()) => {
            Ok((chain, currency, decimals))
        }
        _ => Err(Refusal::field(
            "currency",
            format!(
                "{currency} can't be sent on {chain}; on {chain} the wallet sends {}.",
                assets_of(supported).join(", ")
            ),
        )
        .into()),
    }
}

/// Whether the service takes `address` on `chain`: Err(what to tell the
/// maker) when it does not.
pub async fn check_address(
    client: &Client,
    chain: &str,
    address: &str,
) -> Result<Result<(), String>, PortalError> {
    let checked = client
        .validate_address(&ValidateAddress {
            address: address.to_owned(),
            chain: chain.to_owned(),
        })
        .await;
    Ok(match checked {
        Ok(c) if c.valid => Ok(()),
        Ok(c) => Err(format!(
            "This is not a valid {chain} address ({}). Copy it again from the recipient.",
            c.error.as_deref().unwrap_or("invalid address")
        )),
        Err(e) => Err(user_fixable(e)?),
    })
}

/// The destination, checked with the service before anything is filed.
async fn destination(client: &Client, chain: &str, d: &Draft) -> Result<(String, Option<String>), Failure> {
    let address = d.to_address.trim().to_owned();
    if address.is_empty() {
        return Err(Refusal::field("to_address", "Enter the address to send to.").into());
    }
    check_address(client, chain, &address)
        .await?
        .map_err(|m| Refusal::field("to_address", m))?;
    let memo = d.memo.trim().to_owned();
    match (needs_memo(chain), memo.is_empty()) {
        (true, true) => Err(Refusal::field(
            "memo",
            format!("A {chain} withdrawal needs the recipient's memo (destination tag): without it the money can't be credited to them."),
        )
        .into()),
        (false, false) => Err(Refusal::field(
            "memo",
            format!("{chain} takes no memo; leave it empty."),
        )
        .into()),
        (true, false) => Ok((address, Some(memo))),
        (false, true) => Ok((address, None)),
    }
}

/// A saved payee to pay, as the form names it.
pub struct SavedPayee {
    pub payee: Payee,
    pub saved_at: DateTime<Utc>,
}

/// The saved crypto payee the form chose, with its chain and address put
/// into the draft; none when the address was typed.
async fn saved_payee(client: &Client, d: &mut Draft) -> Result<Option<SavedPayee>, Failure> {
    let id = d.beneficiary_id.trim().to_owned();
    if id.is_empty() {
        return Ok(None);
    }
    let b = client
        .beneficiary(&id)
        .await
        .map_err(|e| Refusal::field("beneficiary_id", describe_upstream(&e).0))?;
    let Destination::Crypto { address, chain } = b.destination else {
        return Err(Refusal::field(
            "beneficiary_id",
            "This payee is a bank account; choose a crypto address.",
        )
        .into());
    };
    if !b.is_active || b.is_blacklisted {
        return Err(Refusal::field(
            "beneficiary_id",
            "This payee can't be paid: it is inactive or blocked.",
        )
        .into());
    }
    d.chain = chain;
    d.to_address = address;
    Ok(Some(SavedPayee {
        payee: Payee {
            id: b.id.to_string(),
            name: b.name,
        },
        saved_at: b.created_at,
    }))
}

/// The form as a withdrawal (and the saved payee it pays, if any), or
/// what to fix.
pub async fn payload(
    client: &Client,
    typed: &Draft,
) -> Result<(WithdrawalPayload, Option<SavedPayee>), Failure> {
    if Uuid::parse_str(typed.reference.trim_start_matches(REFERENCE_PREFIX)).is_err() {
        return Err(Refusal::form("The form is out of date; reload the page and fill it in again.").into());
    }
    let mut d = typed.clone();
    let saved = saved_payee(client, &mut d).await?;
    let d = &d;
    let (chain, currency, decimals) = chain_and_asset(client, d).await?;
    let typed = amount::parse("The amount", &d.amount, currency.code(), decimals)
        .map_err(|m| Refusal::field("amount", m))?;
    let amount = decimal_to_units(typed, decimals)
        .map_err(|_| Refusal::field("amount", "The amount is too large."))?;
    let (to_address, memo) = destination(client, &chain, d).await?;
    let fee_estimate = fee_estimate(client, currency.code()).await?;
    let needed = amount + fee_estimate.map_or(0, |f| f.value());
    let available = client.balance(currency.code()).await?.available_balance.value();
    let p = WithdrawalPayload {
        currency: currency.code().to_owned(),
        decimals,
        chain,
        to_address,
        memo,
        amount: BaseUnits(amount),
        fee_estimate,
        payee: saved.as_ref().map(|s| s.payee.clone()),
    };
    if available < needed {
        let what = if p.fee_estimate.is_some() {
            " (the amount and the network fee)"
        } else {
            ", and the network fee on top"
        };
        return Err(Refusal::field(
            "amount",
            format!(
                "The {} wallet holds {} but this needs {}{what}. Lower the amount or top up the wallet.",
                p.currency,
                p.show(BaseUnits(available)),
                p.show(BaseUnits(needed))
            ),
        )
        .into());
    }
    Ok((p, saved))
}

/// Previews the withdrawal until `confirmed`, then files it through the
/// gate under the form's reference.
#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id))]
pub async fn file(state: &AppState, member: &Member, d: &Draft, confirmed: bool) -> Result<Gated, Failure> {
    let client = state.client_for(member, Permission::WithdrawalsRequest).await?;
    let (payload, saved) = payload(&client, d).await?;
    let summary = format!(
        "Withdraw {} on {} to {}",
        payload.show(payload.amount),
        payload.chain,
        short_address(&payload.to_address)
    );
    let amount = paydesk_api::units::units_to_decimal(payload.amount.value(), payload.decimals);
    let filing = Filing {
        target: &d.reference,
        summary: &summary,
        currency: &payload.currency.clone(),
        payload,
        amount,
        reference: Some(d.reference.clone()),
        payee_saved_at: saved.map(|s| s.saved_at),
    };
    gate::<WithdrawalAction>(state, member, filing, confirmed).await
}

/// The tenant's saved crypto payees that can be paid: (id, label).
pub async fn crypto_payees(client: &Client) -> Result<Vec<(String, String)>, PortalError> {
    Ok(client
        .beneficiaries(Some(100), None)
        .await?
        .beneficiaries
        .into_iter()
        .filter(|b| b.is_active && !b.is_blacklisted)
        .filter_map(|b| match b.destination {
            Destination::Crypto { address, chain } => Some((
                b.id.to_string(),
                format!("{} ({chain} {})", b.name, short_address(&address)),
            )),
            Destination::Account { .. } => None,
        })
        .collect())
}

/// The withdrawal a request sent, once it was sent.
pub fn withdrawal_of(request: &ActionRequest) -> Option<String> {
    request
        .progress_as::<super::action::WithdrawalProgress>()
        .withdrawal_id
}

#[cfg(test)]
mod tests {
    use super::*;
    use paydesk_api::models::addresses::Token;

    #[test]
    fn a_chain_sends_its_stablecoins_and_a_native_token_the_wallet_holds() {
        let token = |s: &str, d| Token {
            symbol: s.into(),
            decimals: d,
        };
        let ethereum = SupportedChain {
            chain: "ethereum".into(),
            native_token: token("ETH", 18),
            stablecoins: vec![token("USDT", 6), token("USDC", 6)],
        };
        assert_eq!(assets_of(&ethereum), vec!["USDT", "USDC"]);
        let bitcoin = SupportedChain {
            chain: "bitcoin".into(),
            native_token: token("BTC", 8),
            stablecoins: vec![],
        };
        assert_eq!(assets_of(&bitcoin), vec!["BTC"]);
    }

    #[test]
    fn a_fresh_form_has_its_own_reference() {
        let (a, b) = (Draft::fresh(), Draft::fresh());
        assert!(a.reference.starts_with(REFERENCE_PREFIX));
        assert_ne!(a.reference, b.reference);
    }
}
