//! What a member does on a card's page: fund and withdraw, freeze and
//! unfreeze, spend limits, reveal the details once, and request
//! termination. Each is a signed call and an audit record.

use actix_web::web::{Data, Form, Path};
use actix_web::HttpResponse;
use askama::Template;
use paydesk_api::models::cards::{BalanceChange, BalanceDirection, SecureDetails, SimulateSpend};
use paydesk_api::units::MicroUnits;
use paydesk_api::ApiError;
use rust_decimal::Decimal;
use serde::Deserialize;
use serde_json::json;

use super::routes::{card_id, render_detail, service_now, Notes};
use super::rules::{self, LimitsDraft};
use super::termination::{TerminationAction, TerminationPayload};
use crate::access::Member;
use crate::approvals::engine::{self, ApprovalError, Filing};
use crate::audit;
use crate::startup::AppState;
use crate::web::error::{describe_upstream, user_fixable, PortalError};
use crate::web::page::{html, is_htmx, redirect, unprocessable, Shell};

async fn refused_page(
    state: &AppState,
    member: &Member,
    id: &str,
    notes: Notes,
) -> Result<HttpResponse, PortalError> {
    Ok(unprocessable(render_detail(state, member, id, notes).await?))
}

fn with_error(message: String) -> Notes {
    Notes {
        error: Some(message),
        ..Notes::default()
    }
}

#[derive(Debug, Deserialize)]
pub struct BalanceForm {
    direction: String,
    #[serde(default)]
    amount: String,
    reference: String,
}

/// Funds or withdraws. The reference is fixed in the form, so a double
/// submit returns the first transaction instead of moving money twice.
pub async fn change_balance(
    state: Data<AppState>,
    member: Member,
    id: Path<String>,
    form: Form<BalanceForm>,
) -> Result<HttpResponse, PortalError> {
    let id = card_id(&id)?;
    let client = state.client_for(&member, "cards.manage").await?;
    let direction = match form.direction.as_str() {
        "fund" => BalanceDirection::Fund,
        "withdraw" => BalanceDirection::Withdraw,
        _ => {
            return refused_page(
                &state,
                &member,
                &id,
                with_error("Choose fund or withdraw.".to_owned()),
            )
            .await
        }
    };
    let amount = match rules::usd("The amount", &form.amount) {
        Ok(Some(a)) => a,
        Ok(None) => {
            return refused_page(
                &state,
                &member,
                &id,
                with_error("Enter an amount in USD.".to_owned()),
            )
            .await
        }
        Err(message) => return refused_page(&state, &member, &id, with_error(message)).await,
    };
    let body = BalanceChange {
        amount,
        direction,
        reference: form.reference.clone(),
    };
    match client.change_card_balance(&id, &body).await {
        Ok(answer) => {
            let verb = match direction {
                BalanceDirection::Fund => "funded",
                BalanceDirection::Withdraw => "withdrawn",
            };
            audit::member_did(
                &state.pool,
                &member,
                &format!("cards.{verb}"),
                format!("card:{id}"),
                json!({"amount": format!("{} USD", amount.display()), "reference": body.reference, "transaction_id": answer.transaction.id}),
            )
            .await?;
            Ok(redirect(&format!("/cards/{id}?note={}", form.direction)))
        }
        Err(e) => {
            let message = user_fixable(e)?;
            refused_page(&state, &member, &id, with_error(message)).await
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct StatusForm {
    status: String,
}

pub async fn set_status(
    state: Data<AppState>,
    member: Member,
    id: Path<String>,
    form: Form<StatusForm>,
) -> Result<HttpResponse, PortalError> {
    let id = card_id(&id)?;
    let client = state.client_for(&member, "cards.manage").await?;
    if !matches!(form.status.as_str(), "frozen" | "active") {
        return refused_page(
            &state,
            &member,
            &id,
            with_error("A card can be frozen or active.".to_owned()),
        )
        .await;
    }
    match client.set_card_status(&id, &form.status).await {
        Ok(card) => {
            let action = if card.status == "frozen" {
                "cards.frozen"
            } else {
                "cards.unfrozen"
            };
            audit::member_did(&state.pool, &member, action, format!("card:{id}"), json!({})).await?;
            Ok(redirect(&format!("/cards/{id}?note={}", card.status)))
        }
        Err(e) => {
            let message = user_fixable(e)?;
            refused_page(&state, &member, &id, with_error(message)).await
        }
    }
}

pub async fn set_limits(
    state: Data<AppState>,
    member: Member,
    id: Path<String>,
    form: Form<LimitsDraft>,
) -> Result<HttpResponse, PortalError> {
    let id = card_id(&id)?;
    let client = state.client_for(&member, "cards.manage").await?;
    let limits = match form.check() {
        Ok(l) => l,
        Err(message) => return refused_page(&state, &member, &id, with_error(message)).await,
    };
    match client.set_card_spend_limits(&id, &limits).await {
        Ok(_) => {
            let shown: serde_json::Map<String, serde_json::Value> = limits
                .entries()
                .iter()
                .filter_map(|(k, v)| v.map(|v| ((*k).to_owned(), json!(format!("{} USD", v.display())))))
                .collect();
            audit::member_did(
                &state.pool,
                &member,
                "cards.limits_changed",
                format!("card:{id}"),
                json!(shown),
            )
            .await?;
            Ok(redirect(&format!("/cards/{id}?note=limits")))
        }
        Err(e) => {
            let message = user_fixable(e)?;
            refused_page(&state, &member, &id, with_error(message)).await
        }
    }
}

const SHOW_SECS: u32 = 30;

/// The card's details, shown once: never stored, never logged, hidden by
/// the page after `SHOW_SECS` seconds.
#[derive(Template)]
#[template(path = "cards/secret.html")]
struct Secret {
    card_id: String,
    details: Result<SecureDetails, String>,
    show_secs: u32,
}

impl Secret {
    fn pan_groups(&self) -> String {
        match &self.details {
            Ok(d) => d
                .card_number
                .as_bytes()
                .chunks(4)
                .map(|c| String::from_utf8_lossy(c).into_owned())
                .collect::<Vec<_>>()
                .join(" "),
            Err(_) => String::new(),
        }
    }
}

#[derive(Template)]
#[template(path = "cards/secret_page.html")]
struct SecretPage {
    shell: Shell,
    secret: Secret,
}

pub async fn reveal(
    state: Data<AppState>,
    member: Member,
    req: actix_web::HttpRequest,
    id: Path<String>,
) -> Result<HttpResponse, PortalError> {
    let id = card_id(&id)?;
    let client = state.client_for(&member, "cards.secure.view").await?;
    let details = match client.card_secure_details(&id).await {
        Ok(d) => {
            audit::member_did(
                &state.pool,
                &member,
                "cards.details_revealed",
                format!("card:{id}"),
                json!({}),
            )
            .await?;
            Ok(d)
        }
        Err(e @ ApiError::Problem { status: 429, .. }) => Err(format!(
            "{}. Card details can be shown twice a minute per card.",
            describe_upstream(&e).0
        )),
        Err(e) => Err(user_fixable(e)?),
    };
    let secret = Secret {
        card_id: id,
        details,
        show_secs: SHOW_SECS,
    };
    if is_htmx(&req) {
        html(&secret)
    } else {
        html(&SecretPage {
            shell: Shell::new(&member, "/cards"),
            secret,
        })
    }
}

#[derive(Debug, Deserialize)]
pub struct SpendForm {
    #[serde(default)]
    amount: String,
    #[serde(default)]
    merchant: String,
}

/// On a sandbox connection: a merchant charges the card, as a real
/// purchase would (approved, or declined with the reason).
pub async fn simulate_spend(
    state: Data<AppState>,
    member: Member,
    id: Path<String>,
    form: Form<SpendForm>,
) -> Result<HttpResponse, PortalError> {
    let id = card_id(&id)?;
    let client = state.client_for(&member, "cards.manage").await?;
    if member.environment.as_deref() != Some("sandbox") {
        return Err(PortalError::NotFound(
            "purchases can be simulated only on a sandbox connection".to_owned(),
        ));
    }
    let amount = match rules::usd("The amount", &form.amount) {
        Ok(Some(a)) => a,
        Ok(None) => {
            return refused_page(
                &state,
                &member,
                &id,
                with_error("Enter the purchase amount in USD.".to_owned()),
            )
            .await
        }
        Err(message) => return refused_page(&state, &member, &id, with_error(message)).await,
    };
    let merchant = Some(form.merchant.trim().to_owned()).filter(|m| !m.is_empty());
    let outcome = match client
        .sandbox_card_spend(&id, &SimulateSpend { amount, merchant })
        .await
    {
        Ok(o) => o,
        Err(e) => {
            let message = user_fixable(e)?;
            return refused_page(&state, &member, &id, with_error(message)).await;
        }
    };
    let notes = match outcome.decline_reason {
        None => Notes {
            notice: Some(format!("Purchase of {} USD approved.", amount.display())),
            ..Notes::default()
        },
        Some(reason) => with_error(format!(
            "Purchase of {} USD declined: {reason}.",
            amount.display()
        )),
    };
    let body = render_detail(&state, &member, &id, notes).await?;
    Ok(HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(body))
}

#[derive(Debug, Deserialize)]
pub struct TerminationForm {
    #[serde(default)]
    reason: String,
}

/// Files a termination for approval, after the checks the service would
/// make: a terminated card stays so, and a card under 24 hours old can
/// only be frozen for now.
pub async fn request_termination(
    state: Data<AppState>,
    member: Member,
    id: Path<String>,
    form: Form<TerminationForm>,
) -> Result<HttpResponse, PortalError> {
    let id = card_id(&id)?;
    let client = state.client_for(&member, "cards.terminate.request").await?;
    let reason = form.reason.trim();
    if reason.is_empty() {
        return refused_page(
            &state,
            &member,
            &id,
            with_error("Say why the card is to be terminated.".to_owned()),
        )
        .await;
    }
    let card = client.card(&id).await?;
    if card.status == "terminated" {
        return refused_page(
            &state,
            &member,
            &id,
            with_error("This card is already terminated.".to_owned()),
        )
        .await;
    }
    let now = service_now(&client, &member).await;
    if let Some(opens) = rules::termination_opens_at(card.created_at, now) {
        let notes = Notes {
            error: Some(format!(
                "A card can be terminated only 24 hours after it was issued, from {}. Freeze it now to stop all spending, and terminate it later.",
                opens.format("%Y-%m-%d %H:%M UTC")
            )),
            offer_freeze: card.status == "active",
            ..Notes::default()
        };
        return refused_page(&state, &member, &id, notes).await;
    }
    let payload = TerminationPayload {
        card_id: id.clone(),
        reason: reason.to_owned(),
        last_four: card.last_four_digit.clone(),
        card_name: card.name.clone(),
    };
    let summary = format!(
        "Terminate card ····{} ({}, {} {} on the card): {}",
        card.last_four_digit,
        card.name,
        card.balance_amount.display(),
        card.balance_currency,
        reason
    );
    let filed = engine::file::<TerminationAction>(
        &state.pool,
        &state.gate,
        &member,
        Filing {
            target: &id,
            summary: &summary,
            payload,
            amount: balance_decimal(card.balance_amount),
        },
    )
    .await;
    match filed {
        Ok(filed) => Ok(redirect(&format!("/approvals/{}", filed.id()))),
        Err(ApprovalError::Duplicate(existing)) => Ok(redirect(&format!("/approvals/{existing}"))),
        Err(ApprovalError::Db(e)) => Err(e.into()),
        Err(e) => refused_page(&state, &member, &id, with_error(e.to_string())).await,
    }
}

/// The card's balance in whole units, for the policy's amount threshold.
fn balance_decimal(amount: MicroUnits) -> Decimal {
    Decimal::new(amount.value(), 6)
}
