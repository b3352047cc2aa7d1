//! What a member does on a card's page: fund and withdraw, freeze and
//! unfreeze, spend limits, reveal the details once, and request
//! termination. The rules live in `operations`; money moves through the
//! gate.

use actix_web::web::{self, Data, Form, Path};
use actix_web::HttpResponse;
use askama::Template;
use paydesk_api::models::cards::{CardState, SecureDetails};
use paydesk_api::ApiError;
use serde::Deserialize;
use serde_json::json;
use uuid::Uuid;

use super::operations::{self, BalanceForm, SpendForm};
use super::routes::{render_detail, Notes};
use super::rules::LimitsDraft;
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::approvals::Gated;
use crate::approvals::{answer_gate, Submission};
use crate::audit;
use crate::audit::Event;
use crate::state::AppState;
use crate::web::error::{describe_upstream, user_fixable, PortalError};
use crate::web::form::{split, Failure, Refusal};
use crate::web::page::{done, html, is_htmx, unprocessable, Shell};

/// The card page's forms.
pub(super) fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/cards/{id}/balance", web::post().to(change_balance))
        .route("/cards/{id}/status", web::post().to(set_status))
        .route("/cards/{id}/limits", web::post().to(set_limits))
        .route("/cards/{id}/reveal", web::post().to(reveal))
        .route("/cards/{id}/simulate-spend", web::post().to(simulate_spend))
        .route("/cards/{id}/terminate", web::post().to(request_termination));
}

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

/// A refusal as the card page shows it; a card too young to terminate is
/// offered a freeze instead.
fn refusal_notes(refusal: Refusal) -> Notes {
    Notes {
        offer_freeze: refusal.field == Some(operations::TOO_YOUNG),
        error: Some(refusal.message),
        notice: None,
    }
}

/// Where the card page goes after a gated action: the confirmation page,
/// the waiting request, or back to the card with `notice`.
async fn after_gate(
    state: &AppState,
    member: &Member,
    id: &str,
    gated: Result<Gated, Failure>,
    (title, step, submission): (&str, &str, &Submission),
    notice: &str,
) -> Result<HttpResponse, PortalError> {
    let back = format!("/cards/{id}");
    let action = format!("{back}/{step}");
    match answer_gate(member, gated, (title, &action, &back), submission, |_| {
        Ok(done(&back, notice))
    })? {
        Ok(answer) => Ok(answer),
        Err(refusal) => refused_page(state, member, id, refusal_notes(refusal)).await,
    }
}

/// Funds or withdraws, after a confirmation that shows the fee.
pub async fn change_balance(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
    form: Form<Vec<(String, String)>>,
) -> Result<HttpResponse, PortalError> {
    let id = id.to_string();
    let submission = Submission(form.into_inner());
    let form: BalanceForm = submission.draft()?;
    let gated = operations::change_balance(&state, &member, &id, &form, submission.confirmed()).await;
    let (title, notice) = match form.direction.as_str() {
        "withdraw" => ("Withdraw from the card", "Withdrawal requested. The transaction is pending; the money reaches the USDT wallet when it completes."),
        _ => ("Fund the card", "Funding requested. The transaction is pending; the balance updates when it completes, usually within a minute."),
    };
    after_gate(
        &state,
        &member,
        &id,
        gated,
        (title, "balance", &submission),
        notice,
    )
    .await
}

#[derive(Debug, Deserialize)]
pub struct StatusForm {
    status: CardState,
}

/// Freezes at once; unfreezing goes through the gate.
pub async fn set_status(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
    form: Form<StatusForm>,
) -> Result<HttpResponse, PortalError> {
    let id = id.to_string();
    let gated = operations::set_status(&state, &member, &id, &form.status).await;
    let notice = match form.status {
        CardState::Frozen => "Card frozen: new payments are declined until you unfreeze it.",
        _ => "Card unfrozen: it can be used again.",
    };
    let step = ("Change the card's status", "status", &Submission(Vec::new()));
    after_gate(&state, &member, &id, gated, step, notice).await
}

pub async fn set_limits(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
    form: Form<LimitsDraft>,
) -> Result<HttpResponse, PortalError> {
    let id = id.to_string();
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
            Ok(done(&format!("/cards/{id}"), "Spend limits saved."))
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

/// The code a step-up form carries (empty when the session is fresh).
#[derive(Debug, Default, serde::Deserialize)]
pub struct StepUpForm {
    #[serde(default)]
    code: String,
}

/// The card's details after a fresh proof of the second factor, audited;
/// or what to tell the member.
async fn revealed(
    state: &AppState,
    member: &Member,
    id: &str,
    code: &str,
) -> Result<Result<paydesk_api::models::cards::SecureDetails, String>, PortalError> {
    let client = state.client_for(member, Permission::CardsSecureView).await?;
    let stepped = crate::auth::two_factor::step_up(&state.pool, &state.key, &member.user, Some(code)).await;
    if let Err(refusal) = crate::web::form::split(stepped)? {
        return Ok(Err(refusal.message));
    }
    match client.card_secure_details(id).await {
        Ok(d) => {
            let target = format!("card:{} {}", d.name, audit::mask::card_number(&d.card_number));
            audit::member_did(
                &state.pool,
                member,
                Event::CardsDetailsRevealed,
                target,
                json!({ "id": id }),
            )
            .await?;
            Ok(Ok(d))
        }
        Err(e @ ApiError::Problem { status: 429, .. }) => Ok(Err(format!(
            "{}. Card details can be shown twice a minute per card.",
            describe_upstream(&e).0
        ))),
        Err(e) => Ok(Err(user_fixable(e)?)),
    }
}

pub async fn reveal(
    state: Data<AppState>,
    member: Member,
    req: actix_web::HttpRequest,
    id: Path<Uuid>,
    form: Form<StepUpForm>,
) -> Result<HttpResponse, PortalError> {
    let id = id.to_string();
    let details = revealed(&state, &member, &id, &form.code).await?;
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

/// On a sandbox connection: a merchant charges the card, as a real
/// purchase would (approved, or declined with the reason).
pub async fn simulate_spend(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
    form: Form<SpendForm>,
) -> Result<HttpResponse, PortalError> {
    let id = id.to_string();
    if member.environment.as_deref() != Some("sandbox") {
        return Err(PortalError::NotFound(
            "purchases can be simulated only on a sandbox connection".to_owned(),
        ));
    }
    match split(operations::simulate_spend(&state, &member, &id, &form).await)? {
        Ok(notice) => Ok(done(&format!("/cards/{id}"), notice)),
        Err(refusal) => refused_page(&state, &member, &id, refusal_notes(refusal)).await,
    }
}

#[derive(Debug, Deserialize)]
pub struct TerminationForm {
    #[serde(default)]
    reason: String,
}

/// Files a termination for approval (see `operations`).
pub async fn request_termination(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
    form: Form<TerminationForm>,
) -> Result<HttpResponse, PortalError> {
    let id = id.to_string();
    let gated = operations::request_termination(&state, &member, &id, &form.reason).await;
    let step = ("Terminate the card", "terminate", &Submission(Vec::new()));
    let notice = "Termination requested; it waits for another member's approval.";
    after_gate(&state, &member, &id, gated, step, notice).await
}
