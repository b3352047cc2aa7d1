//! What members do to cards, as domain functions: issue one, fund or
//! withdraw, freeze or unfreeze, request termination (each through the
//! approval gate), and, on a sandbox, simulate a purchase. Each checks what
//! the service would refuse first, so the user hears it in their terms.

use paydesk_api::models::cards::{BalanceDirection, CardState, SimulateSpend};
use paydesk_api::units::MicroUnits;
use paydesk_api::{ApiError, Client};
use rust_decimal::Decimal;
use serde::Deserialize;
use uuid::Uuid;

use super::money::{
    self, FundingAction, FundingPayload, IssueAction, IssuePayload, StatusAction, StatusPayload,
};
use super::rules::{self, CardDraft};
use super::termination::{TerminationAction, TerminationPayload};
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::approvals::Filing;
use crate::approvals::{gate, Gated};
use crate::sandbox_tools::clock::service_now;
use crate::state::AppState;
use crate::web::error::user_fixable;
use crate::web::form::{Failure, Refusal};

/// The refusal's "field" when a card is too young to terminate: the card
/// page then offers to freeze it instead.
pub const TOO_YOUNG: &str = "too_young";

fn refused(message: String) -> Failure {
    Refusal::form(message).into()
}

/// Why this customer can't have a card yet, in words for the user.
async fn kyc_problem(client: &Client, customer_id: &str) -> Result<Option<&'static str>, ApiError> {
    use paydesk_api::models::customers::KycStatus;
    Ok(Some(match client.card_kyc(customer_id).await {
        Ok(k) if k.status == KycStatus::Approved => return Ok(None),
        Ok(k) if k.status == KycStatus::Pending => {
            "The customer's card KYC is still under review; issue the card once it is approved."
        }
        Ok(_) => {
            "The customer's card KYC was rejected; submit corrected details on the customer's page first."
        }
        Err(ApiError::Problem { status: 404, .. }) => {
            "The customer has no card KYC yet; submit it on the customer's page first."
        }
        Err(e) => return Err(e),
    }))
}

/// How reviewers know the customer: name and email.
async fn customer_label(client: &Client, id: &str) -> String {
    match client.customer(id).await {
        Ok(c) if !c.full_name().is_empty() => format!("{} ({})", c.full_name(), c.email),
        Ok(c) => c.email,
        Err(_) => id.to_owned(),
    }
}

/// Issues a card: the load, the fee and the total debit shown before it
/// is confirmed; the reference fixed in the form, so a double submit
/// issues one card.
#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id))]
pub async fn issue(
    state: &AppState,
    member: &Member,
    draft: &CardDraft,
    confirmed: bool,
) -> Result<Gated, Failure> {
    let client = state.client_for(member, Permission::CardsManage).await?;
    let today = service_now(&client, member).await.date_naive();
    let card = rules::check(draft, today).map_err(refused)?;
    if draft.reference.is_empty() {
        return Err(refused(
            "This form is incomplete; reload the page and try again.".to_owned(),
        ));
    }
    if let Some(problem) = kyc_problem(&client, &draft.customer_id).await? {
        return Err(refused(problem.to_owned()));
    }
    let total = MicroUnits(card.amount.value() + money::funding_fee(card.amount).value());
    money::wallet_covers(&client, total).await?.map_err(refused)?;
    let payload = IssuePayload {
        customer_label: customer_label(&client, &draft.customer_id).await,
        card,
    };
    let summary = format!(
        "Issue a card for {} with {} USD",
        payload.customer_label,
        payload.card.amount.display()
    );
    let filing = Filing {
        target: &draft.reference,
        summary: &summary,
        reference: Some(draft.reference.clone()),
        amount: money::usd(payload.card.amount),
        currency: "USD",
        payload,
        payee_saved_at: None,
    };
    gate::<IssueAction>(state, member, filing, confirmed).await
}

#[derive(Debug, Deserialize)]
pub struct BalanceForm {
    pub direction: String,
    #[serde(default)]
    pub amount: String,
    pub reference: String,
}

/// The form as a funding, or what to fix.
async fn funding(client: &Client, id: &str, form: &BalanceForm) -> Result<FundingPayload, Failure> {
    let direction = match form.direction.as_str() {
        "fund" => BalanceDirection::Fund,
        "withdraw" => BalanceDirection::Withdraw,
        _ => return Err(Refusal::field("direction", "Choose fund or withdraw.").into()),
    };
    let amount = rules::usd("The amount", &form.amount)
        .map_err(|m| Refusal::field("amount", m))?
        .ok_or_else(|| Refusal::field("amount", "Enter an amount in USD."))?;
    if Uuid::parse_str(form.reference.trim_start_matches("paydesk-card-balance-")).is_err() {
        return Err(refused(
            "This form is incomplete; reload the card's page and try again.".to_owned(),
        ));
    }
    let card = client.card(id).await?;
    match direction {
        BalanceDirection::Fund => {
            let total = MicroUnits(amount.value() + money::funding_fee(amount).value());
            money::wallet_covers(client, total).await?.map_err(refused)?;
        }
        BalanceDirection::Withdraw if card.balance_amount < amount => {
            let message = format!(
                "The card holds {} USD; withdraw at most that.",
                card.balance_amount.display()
            );
            return Err(Refusal::field("amount", message).into());
        }
        BalanceDirection::Withdraw => {}
    }
    Ok(FundingPayload {
        card_id: id.to_owned(),
        card_name: card.name,
        last_four: card.last_four_digit,
        direction,
        amount,
    })
}

fn balance_summary(p: &FundingPayload) -> String {
    match p.direction {
        BalanceDirection::Fund => format!("Fund card ····{} with {} USD", p.last_four, p.amount.display()),
        BalanceDirection::Withdraw => format!(
            "Withdraw {} USD from card ····{}",
            p.amount.display(),
            p.last_four
        ),
    }
}

/// Funds or withdraws, after a confirmation that shows the fee. The
/// reference is fixed in the form, so a double submit moves money once.
#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id, card = id))]
pub async fn change_balance(
    state: &AppState,
    member: &Member,
    id: &str,
    form: &BalanceForm,
    confirmed: bool,
) -> Result<Gated, Failure> {
    let client = state.client_for(member, Permission::CardsManage).await?;
    let payload = funding(&client, id, form).await?;
    let filing = Filing {
        target: id,
        summary: &balance_summary(&payload),
        amount: money::usd(payload.amount),
        currency: "USD",
        payload,
        reference: Some(form.reference.clone()),
        payee_saved_at: None,
    };
    gate::<FundingAction>(state, member, filing, confirmed).await
}

/// Freezes at once; unfreezing goes through the gate like any action that
/// makes money spendable again (the policy decides whether it waits).
#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id, card = id, status))]
pub async fn set_status(
    state: &AppState,
    member: &Member,
    id: &str,
    status: &CardState,
) -> Result<Gated, Failure> {
    let client = state.client_for(member, Permission::CardsManage).await?;
    let verb = match status {
        CardState::Frozen => "Freeze",
        CardState::Active => "Unfreeze",
        _ => return Err(refused("A card can be frozen or active.".to_owned())),
    };
    let card = client.card(id).await?;
    let payload = StatusPayload {
        card_id: id.to_owned(),
        card_name: card.name,
        last_four: card.last_four_digit,
        status: status.clone(),
        balance: card.balance_amount,
    };
    let filing = Filing {
        target: id,
        summary: &format!("{verb} card ····{}", payload.last_four),
        amount: payload.at_stake(),
        currency: "USD",
        payload,
        reference: None,
        payee_saved_at: None,
    };
    gate::<StatusAction>(state, member, filing, true).await
}

/// Files a termination for approval, after the checks the service would
/// make: a terminated card stays so, and a card under 24 hours old can
/// only be frozen for now.
#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id, card = id))]
pub async fn request_termination(
    state: &AppState,
    member: &Member,
    id: &str,
    reason: &str,
) -> Result<Gated, Failure> {
    let client = state
        .client_for(member, Permission::CardsTerminateRequest)
        .await?;
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(Refusal::field("reason", "Say why the card is to be terminated.").into());
    }
    let card = client.card(id).await?;
    if card.status == CardState::Terminated {
        return Err(refused("This card is already terminated.".to_owned()));
    }
    if let Some(opens) = rules::termination_opens_at(card.created_at, service_now(&client, member).await) {
        let message = format!(
            "A card can be terminated only 24 hours after it was issued, from {}. Freeze it now to stop all spending, and terminate it later.",
            opens.format("%Y-%m-%d %H:%M UTC")
        );
        return Err(Refusal::field(TOO_YOUNG, message).into());
    }
    let summary = format!(
        "Terminate card ····{} ({}, {} {} on the card): {reason}",
        card.last_four_digit,
        card.name,
        card.balance_amount.display(),
        card.balance_currency,
    );
    let payload = TerminationPayload {
        card_id: id.to_owned(),
        reason: reason.to_owned(),
        last_four: card.last_four_digit,
        card_name: card.name,
    };
    let filing = Filing {
        target: id,
        summary: &summary,
        payload,
        // The card's balance in whole units, for the policy's thresholds.
        amount: Decimal::new(card.balance_amount.value(), 6),
        currency: "USD",
        reference: None,
        payee_saved_at: None,
    };
    gate::<TerminationAction>(state, member, filing, true).await
}

#[derive(Debug, Deserialize)]
pub struct SpendForm {
    #[serde(default)]
    pub amount: String,
    #[serde(default)]
    pub merchant: String,
}

/// On a sandbox connection: a merchant charges the card, as a real
/// purchase would. Approved: what to say; declined: the reason, refused.
#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id, card = id))]
pub async fn simulate_spend(
    state: &AppState,
    member: &Member,
    id: &str,
    form: &SpendForm,
) -> Result<String, Failure> {
    let client = state.client_for(member, Permission::CardsManage).await?;
    let amount = rules::usd("The amount", &form.amount)
        .map_err(|m| Refusal::field("amount", m))?
        .ok_or_else(|| Refusal::field("amount", "Enter the purchase amount in USD."))?;
    let merchant = Some(form.merchant.trim().to_owned()).filter(|m| !m.is_empty());
    let outcome = match client
        .sandbox_card_spend(id, &SimulateSpend { amount, merchant })
        .await
    {
        Ok(outcome) => outcome,
        Err(e) => return Err(refused(user_fixable(e)?)),
    };
    match outcome.decline_reason {
        None => Ok(format!("Purchase of {} USD approved.", amount.display())),
        Some(reason) => Err(refused(format!(
            "Purchase of {} USD declined: {reason}.",
            amount.display()
        ))),
    }
}
