//! What a member does on a card's page: fund and withdraw, freeze and
//! unfreeze, spend limits, reveal the details once, and request
//! termination. Each is a signed call and an audit record.

use actix_web::web::{Data, Form, Path};
use actix_web::HttpResponse;
use askama::Template;
use paydesk_api::models::cards::{BalanceDirection, SecureDetails, SimulateSpend};
use paydesk_api::units::MicroUnits;
use paydesk_api::ApiError;
use rust_decimal::Decimal;
use serde::Deserialize;
use serde_json::json;
use uuid::Uuid;

use super::money::{self, FundingAction, FundingPayload, StatusAction, StatusPayload};
use super::routes::{card_id, render_detail, service_now, Notes};
use super::rules::{self, LimitsDraft};
use super::termination::{TerminationAction, TerminationPayload};
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::approvals::engine::{self, ApprovalError, Filing};
use crate::approvals::executor::{self, Submitted};
use crate::approvals::model::RequestStatus;
use crate::approvals::routes::{confirm_page, Submission};
use crate::audit;
use crate::audit::Event;
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

/// What a gated card action came to, as the card page tells it.
async fn after_submit(
    state: &AppState,
    member: &Member,
    id: &str,
    submitted: Result<Submitted, ApprovalError>,
    done_note: &str,
) -> Result<HttpResponse, PortalError> {
    match submitted {
        Ok(Submitted::Waiting(request)) => Ok(redirect(&format!("/approvals/{request}"))),
        Ok(Submitted::Ran(request)) if request.status == RequestStatus::Failed => {
            let reason = request.failure_reason.unwrap_or_default();
            refused_page(state, member, id, with_error(reason)).await
        }
        Ok(Submitted::Ran(_)) => Ok(redirect(&format!("/cards/{id}?note={done_note}"))),
        Err(ApprovalError::Duplicate(existing)) => Ok(redirect(&format!("/approvals/{existing}"))),
        Err(ApprovalError::Db(e)) => Err(e.into()),
        Err(e) => refused_page(state, member, id, with_error(e.to_string())).await,
    }
}

/// Funds or withdraws, after a confirmation that shows the fee, through
/// the approval gate (the policy decides whether it waits). The reference
/// is fixed in the form, so a double submit moves money once.
pub async fn change_balance(
    state: Data<AppState>,
    member: Member,
    id: Path<String>,
    form: Form<Vec<(String, String)>>,
) -> Result<HttpResponse, PortalError> {
    let id = card_id(&id)?;
    let client = state.client_for(&member, Permission::CardsManage).await?;
    let submission = Submission(form.into_inner());
    let form: BalanceForm = submission.draft()?;
    let payload = match balance_payload(&client, &id, &form).await? {
        Ok(p) => p,
        Err(message) => return refused_page(&state, &member, &id, with_error(message)).await,
    };
    let title = format!("{} card ····{}", capitalized(&form.direction), payload.last_four);
    let filing = Filing {
        target: &id,
        summary: &balance_summary(&payload),
        amount: money::usd(payload.amount),
        currency: "USD",
        payload,
        reference: Some(form.reference.clone()),
        payee_saved_at: None,
    };
    if !submission.confirmed() {
        let preview = match engine::preview::<FundingAction>(&state, &member, &filing).await {
            Ok(p) => p,
            Err(ApprovalError::Db(e)) => return Err(e.into()),
            Err(e) => return refused_page(&state, &member, &id, with_error(e.to_string())).await,
        };
        let back = format!("/cards/{id}");
        return confirm_page(
            &member,
            &title,
            preview,
            (&format!("/cards/{id}/balance"), &back),
            &submission,
        );
    }
    let submitted = executor::submit::<FundingAction>(&state, &member, filing).await;
    after_submit(&state, &member, &id, submitted, &form.direction).await
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
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

/// The form as a funding, or what to fix.
async fn balance_payload(
    client: &paydesk_api::Client,
    id: &str,
    form: &BalanceForm,
) -> Result<Result<FundingPayload, String>, PortalError> {
    let direction = match form.direction.as_str() {
        "fund" => BalanceDirection::Fund,
        "withdraw" => BalanceDirection::Withdraw,
        _ => return Ok(Err("Choose fund or withdraw.".to_owned())),
    };
    let amount = match rules::usd("The amount", &form.amount) {
        Ok(Some(a)) => a,
        Ok(None) => return Ok(Err("Enter an amount in USD.".to_owned())),
        Err(message) => return Ok(Err(message)),
    };
    if Uuid::parse_str(form.reference.trim_start_matches("paydesk-card-balance-")).is_err() {
        return Ok(Err(
            "This form is incomplete; reload the card's page and try again.".to_owned(),
        ));
    }
    let card = client.card(id).await?;
    let covered = match direction {
        BalanceDirection::Fund => {
            money::wallet_covers(
                client,
                MicroUnits(amount.value() + money::funding_fee(amount).value()),
            )
            .await?
        }
        BalanceDirection::Withdraw if card.balance_amount < amount => Err(format!(
            "The card holds {} USD; withdraw at most that.",
            card.balance_amount.display()
        )),
        BalanceDirection::Withdraw => Ok(()),
    };
    if let Err(message) = covered {
        return Ok(Err(message));
    }
    Ok(Ok(FundingPayload {
        card_id: id.to_owned(),
        card_name: card.name,
        last_four: card.last_four_digit,
        direction,
        amount,
    }))
}

#[derive(Debug, Deserialize)]
pub struct StatusForm {
    status: String,
}

/// Freezes at once; unfreezing goes through the gate like any action that
/// makes money spendable again (the policy decides whether it waits).
pub async fn set_status(
    state: Data<AppState>,
    member: Member,
    id: Path<String>,
    form: Form<StatusForm>,
) -> Result<HttpResponse, PortalError> {
    let id = card_id(&id)?;
    let client = state.client_for(&member, Permission::CardsManage).await?;
    if !matches!(form.status.as_str(), "frozen" | "active") {
        return refused_page(
            &state,
            &member,
            &id,
            with_error("A card can be frozen or active.".to_owned()),
        )
        .await;
    }
    let card = client.card(&id).await?;
    let payload = StatusPayload {
        card_id: id.clone(),
        card_name: card.name,
        last_four: card.last_four_digit,
        status: form.status.clone(),
        balance: card.balance_amount,
    };
    let verb = if payload.status == "frozen" {
        "Freeze"
    } else {
        "Unfreeze"
    };
    let filing = Filing {
        target: &id,
        summary: &format!("{verb} card ····{}", payload.last_four),
        amount: payload.at_stake(),
        currency: "USD",
        payload,
        reference: None,
        payee_saved_at: None,
    };
    let submitted = executor::submit::<StatusAction>(&state, &member, filing).await;
    after_submit(&state, &member, &id, submitted, &form.status).await
}

pub async fn set_limits(
    state: Data<AppState>,
    member: Member,
    id: Path<String>,
    form: Form<LimitsDraft>,
) -> Result<HttpResponse, PortalError> {
    let id = card_id(&id)?;
    let client = state.client_for(&member, Permission::CardsManage).await?;
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
                Event::CardsLimitsChanged,
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
    let client = state.client_for(&member, Permission::CardsSecureView).await?;
    let details = match client.card_secure_details(&id).await {
        Ok(d) => {
            audit::member_did(
                &state.pool,
                &member,
                Event::CardsDetailsRevealed,
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
    let client = state.client_for(&member, Permission::CardsManage).await?;
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
    let client = state
        .client_for(&member, Permission::CardsTerminateRequest)
        .await?;
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
        &state,
        &member,
        Filing {
            target: &id,
            summary: &summary,
            payload,
            amount: balance_decimal(card.balance_amount),
            currency: "USD",
            reference: None,
            payee_saved_at: None,
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
