//! Filing a payout: the payee checked with the bank, an indicative quote
//! taken, and the request filed through the gate with what the approvers
//! will see. Nothing moves until it is approved.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use paydesk_api::models::beneficiaries::Destination;
use paydesk_api::models::payouts::{AccountLookup, Bank, Corridor, PayoutBeneficiary, QuoteRequest};
use paydesk_api::units::Currency;
use paydesk_api::{ApiError, Client};
use rust_decimal::Decimal;
use serde::Deserialize;
use uuid::Uuid;

use super::action::{PayoutAction, PayoutPayload};
use super::funding::Funding;
use crate::access::Member;
use crate::approvals::{self, ApprovalError, Filing};
use crate::state::AppState;
use crate::web::amount;
use crate::web::error::{describe_upstream, PortalError};
use crate::web::form::{Failure, Refusal};

/// The payout form as typed.
#[derive(Debug, Default, Clone, Deserialize)]
pub struct Draft {
    #[serde(default)]
    pub country: String,
    #[serde(default)]
    pub from_asset: String,
    #[serde(default)]
    pub amount: String,
    #[serde(default)]
    pub bank_code: String,
    #[serde(default)]
    pub account_number: String,
    #[serde(default)]
    pub account_name: String,
    #[serde(default)]
    pub payment_reason: String,
    /// A saved beneficiary to pay instead of the typed account.
    #[serde(default)]
    pub beneficiary_id: String,
    /// `wallet` (the default) or `onchain`: a deposit on `chain` pays it.
    #[serde(default)]
    pub source: String,
    #[serde(default)]
    pub chain: String,
}

/// How long a country's corridor and banks are kept.
const KEEP_CORRIDOR: Duration = Duration::from_secs(60);

/// A corridor and its banks, as the service gave them.
type CorridorBanks = Arc<(Corridor, Vec<Bank>)>;

/// What is kept: by connection, its version and the country; when read.
type Kept = HashMap<(Uuid, DateTime<Utc>, String), (Instant, CorridorBanks)>;

/// Each country's corridor and bank list, kept per connection (and its
/// version) for a minute: every payout filed needs both, and the service
/// changes them rarely, so a filing makes two calls fewer. A bank the
/// service adds is offered within the minute.
#[derive(Default)]
pub struct Corridors {
    kept: Mutex<Kept>,
}

impl Corridors {
    pub async fn get(
        &self,
        client: &Client,
        connection: (Uuid, DateTime<Utc>),
        country: &str,
    ) -> Result<CorridorBanks, ApiError> {
        let key = (connection.0, connection.1, country.to_owned());
        if let Some((at, kept)) = self.kept().get(&key) {
            if at.elapsed() < KEEP_CORRIDOR {
                return Ok(kept.clone());
            }
        }
        let (corridor, banks) =
            tokio::try_join!(client.payout_corridor(country), client.payout_banks(country))?;
        let fresh = Arc::new((corridor, banks.banks));
        let mut kept = self.kept();
        kept.retain(|_, (at, _)| at.elapsed() < KEEP_CORRIDOR);
        kept.insert(key, (Instant::now(), fresh.clone()));
        Ok(fresh)
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Asks the service whose account this is: Ok(name), or Err(what to tell
/// the maker) when the bank has no such account or refuses the details.
pub async fn account_holder(
    client: &paydesk_api::Client,
    country: &str,
    bank_code: &str,
    account_number: &str,
    kind: &str,
) -> Result<Result<String, String>, PortalError> {
    let body = AccountLookup {
        country: country.trim().to_owned(),
        account_number: account_number.trim().to_owned(),
        bank_code: bank_code.trim().to_owned(),
        kind: if kind == "mobile_money" { kind } else { "bank" }.to_owned(),
    };
    Ok(match client.lookup_account(&body).await {
        Ok(found) => Ok(found.account_name),
        Err(ApiError::Problem { status: 404, .. }) => Err(
            "The bank has no account with this number. Check the number and the bank; nothing was filed."
                .to_owned(),
        ),
        Err(e) => Err(crate::web::error::user_fixable(e)?),
    })
}

/// How a filing ended when nothing was wrong with the form.
pub enum Filed {
    Filed(Uuid),
    /// The same payout already waits: the request to look at instead.
    AlreadyWaiting(Uuid),
}

/// The account to pay: the saved payee's (with when it was saved), or the
/// typed one.
async fn account(
    client: &Client,
    draft: &Draft,
) -> Result<(Draft, Option<Uuid>, Option<chrono::DateTime<chrono::Utc>>), Failure> {
    let mut draft = draft.clone();
    let Some(id) = Some(draft.beneficiary_id.trim().to_owned()).filter(|id| !id.is_empty()) else {
        return Ok((draft, None, None));
    };
    let payee = client
        .beneficiary(&id)
        .await
        .map_err(|e| Refusal::field("beneficiary_id", describe_upstream(&e).0))?;
    let Destination::Account {
        account_name,
        account_number,
        bank_code,
        ..
    } = payee.destination
    else {
        return Err(Refusal::field(
            "beneficiary_id",
            "A crypto payee can't receive a fiat payout; choose a bank account.",
        )
        .into());
    };
    draft.account_name = account_name;
    draft.account_number = account_number;
    draft.bank_code = bank_code;
    Ok((draft, Some(payee.id), Some(payee.created_at)))
}

fn last_four(account_number: &str) -> String {
    let chars: Vec<char> = account_number.chars().collect();
    chars[chars.len().saturating_sub(4)..].iter().collect()
}

#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id))]
pub async fn file(state: &AppState, member: &Member, typed: &Draft) -> Result<Filed, Failure> {
    let unit = typed.from_asset.trim();
    let decimals = Currency::parse(unit).ok().and_then(|c| c.decimals()).unwrap_or(6);
    let amount: Decimal = amount::parse("The amount", &typed.amount, unit, decimals)
        .map_err(|m| Refusal::field("amount", m))?;
    let funding = Funding::from_form(&typed.source, &typed.chain, &unit.to_ascii_uppercase())?;
    let client = state
        .upstreams
        .for_member(&state.pool, &state.key, &state.audit, member)
        .await?;
    let (draft, saved_id, payee_saved_at) = account(&client, typed).await?;
    for (field, value, what) in [
        ("bank_code", &draft.bank_code, "Choose the bank."),
        (
            "account_number",
            &draft.account_number,
            "Enter the account number.",
        ),
        (
            "account_name",
            &draft.account_name,
            "Enter the account holder's name.",
        ),
    ] {
        if value.trim().is_empty() {
            return Err(Refusal::field(field, what).into());
        }
    }
    let connection = member.connection.ok_or(PortalError::NoConnection)?;
    let kept = state.corridors.get(&client, connection, &draft.country).await?;
    let (corridor, banks) = (&kept.0, &kept.1);
    let destination_type = banks
        .iter()
        .find(|b| b.code == draft.bank_code)
        .map_or_else(|| "bank".to_owned(), |b| b.kind.clone());
    // The payee is checked before anything is filed (the name the bank
    // gives goes into what the approvers see, and the digest); the
    // indicative quote is taken meanwhile, as neither waits on the other.
    let quote = QuoteRequest {
        amount: Some(amount),
        country: corridor.country.clone(),
        from_asset: draft.from_asset.clone(),
        to_currency: corridor.currency.clone(),
        source: funding.source().to_owned(),
        chain: funding.chain(),
        reference: format!("pd-indicative-{}", Uuid::new_v4().simple()),
        ..Default::default()
    };
    let (holder, indicative) = tokio::join!(
        account_holder(
            &client,
            &corridor.country,
            &draft.bank_code,
            &draft.account_number,
            &destination_type,
        ),
        client.create_payout_quote(&quote)
    );
    let verified_name = holder?.map_err(|m| Refusal::field("account_number", m))?;
    let indicative = indicative.map_err(|e| Refusal::form(describe_upstream(&e).0))?;
    let beneficiary = PayoutBeneficiary {
        destination_type,
        country: corridor.country.clone(),
        account_name: draft.account_name.trim().to_owned(),
        account_number: draft.account_number.trim().to_owned(),
        bank_code: Some(draft.bank_code.clone()),
    };
    let funded = match funding {
        Funding::Wallet => String::new(),
        Funding::Deposit(chain) => format!(", funded by a deposit on {chain}"),
    };
    let summary = format!(
        "Pay {amount} {} (about {} {}) to {} ****{}{funded}",
        indicative.from_asset,
        indicative.settlement_amount,
        corridor.currency,
        beneficiary.account_name,
        last_four(&beneficiary.account_number)
    );
    let target = format!(
        "{}:{}:{}",
        corridor.country, draft.bank_code, beneficiary.account_number
    );
    let payload = PayoutPayload {
        country: corridor.country.clone(),
        from_asset: indicative.from_asset.clone(),
        to_currency: corridor.currency.clone(),
        amount,
        payment_reason: draft.payment_reason.trim().to_owned(),
        beneficiary,
        beneficiary_id: saved_id.map(|id| id.to_string()),
        verified_name: Some(verified_name),
        indicative_rate: indicative.exchange_rate.rate,
        indicative_settlement: indicative.settlement_amount,
        indicative_fees: indicative.fees,
        funding,
    };
    let filing = Filing {
        target: &target,
        summary: &summary,
        currency: &payload.from_asset.clone(),
        payload,
        amount,
        reference: None,
        payee_saved_at,
    };
    match approvals::file::<PayoutAction>(state, member, filing).await {
        Ok(filed) => Ok(Filed::Filed(filed.id())),
        Err(ApprovalError::Duplicate(existing)) => Ok(Filed::AlreadyWaiting(existing)),
        Err(ApprovalError::Db(e)) => Err(e.into()),
        Err(e) => Err(Refusal::form(e.to_string()).into()),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn shows_the_last_four_digits() {
        assert_eq!(super::last_four("0123456789"), "6789");
        assert_eq!(super::last_four("12"), "12");
    }
}
