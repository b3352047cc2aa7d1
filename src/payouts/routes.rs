use actix_web::web::{self, Data, Form, Query};
use actix_web::HttpResponse;
use askama::Template;
use paydesk_api::models::beneficiaries::Destination;
use paydesk_api::models::payouts::{AccountLookup, Corridor, Country, PayoutBeneficiary, QuoteRequest};
use paydesk_api::units::Currency;
use paydesk_api::ApiError;
use serde::Deserialize;
use uuid::Uuid;

use super::action::{PayoutAction, PayoutPayload};
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::approvals::action::Action;
use crate::approvals::engine::{self, ApprovalError, Filing};
use crate::approvals::store::{self as approvals, ActionRequest};
use crate::startup::AppState;
use crate::web::amount;
use crate::web::error::{describe_upstream, PortalError};
use crate::web::page::{html, redirect, Shell};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/payouts", web::get().to(list))
        .route("/payouts", web::post().to(file))
        .route("/payouts/new", web::get().to(new_form))
        .route("/payouts/lookup", web::get().to(lookup));
}

fn require_payouts(member: &Member) -> Result<(), PortalError> {
    if [
        Permission::PayoutsRead,
        Permission::PayoutsRequest,
        Permission::PayoutsApprove,
    ]
    .iter()
    .any(|p| member.can(*p))
    {
        Ok(())
    } else {
        Err(PortalError::Forbidden(Permission::PayoutsRead.name().to_owned()))
    }
}

#[derive(Template)]
#[template(path = "payouts/list.html")]
struct ListPage {
    shell: Shell,
    requests: Vec<ActionRequest>,
    can_request: bool,
}

async fn list(state: Data<AppState>, member: Member) -> Result<HttpResponse, PortalError> {
    require_payouts(&member)?;
    html(&ListPage {
        shell: Shell::new(&member, "/payouts"),
        requests: approvals::list(&state.pool, member.tenant_id, Some(PayoutAction::KIND), 100).await?,
        can_request: member.can(Permission::PayoutsRequest),
    })
}

#[derive(Debug, Default, Deserialize)]
pub struct Draft {
    #[serde(default)]
    country: String,
    #[serde(default)]
    from_asset: String,
    #[serde(default)]
    amount: String,
    #[serde(default)]
    bank_code: String,
    #[serde(default)]
    account_number: String,
    #[serde(default)]
    account_name: String,
    #[serde(default)]
    payment_reason: String,
    /// A saved beneficiary to pay instead of the typed account.
    #[serde(default)]
    beneficiary_id: String,
}

#[derive(Template)]
#[template(path = "payouts/new.html")]
struct NewPage {
    shell: Shell,
    countries: Vec<Country>,
    corridor: Option<Corridor>,
    banks: Vec<(String, String, String)>,
    /// Saved bank and mobile-money beneficiaries of this country: (id, label).
    saved: Vec<(String, String)>,
    draft: Draft,
    error: Option<String>,
    pending_link: Option<String>,
}

async fn render_new(
    state: &AppState,
    member: &Member,
    draft: Draft,
    error: Option<String>,
    pending: Option<Uuid>,
) -> Result<String, PortalError> {
    let client = state
        .upstreams
        .for_member(&state.pool, &state.key, &state.audit, member)
        .await?;
    let countries = client.payout_countries().await?.countries;
    let (corridor, banks, saved) = if draft.country.is_empty() {
        (None, Vec::new(), Vec::new())
    } else {
        let corridor = client.payout_corridor(&draft.country).await?;
        let banks = client
            .payout_banks(&draft.country)
            .await?
            .banks
            .into_iter()
            .map(|b| (b.code, b.name, b.kind))
            .collect();
        let saved = client
            .beneficiaries(Some(100), None)
            .await?
            .beneficiaries
            .into_iter()
            .filter(|b| b.is_active && !b.is_blacklisted)
            .filter_map(|b| match b.destination {
                Destination::Account {
                    account_number,
                    country,
                    ..
                } if country.as_deref().is_none_or(|c| c == draft.country) => {
                    Some((b.id.to_string(), format!("{} (account {account_number})", b.name)))
                }
                _ => None,
            })
            .collect();
        (Some(corridor), banks, saved)
    };
    Ok(NewPage {
        shell: Shell::new(member, "/payouts"),
        countries,
        corridor,
        banks,
        saved,
        draft,
        error,
        pending_link: pending.map(|id| format!("/approvals/{id}")),
    }
    .render()?)
}

#[derive(Debug, Deserialize)]
pub struct LookupQuery {
    #[serde(default)]
    country: String,
    #[serde(default)]
    bank_code: String,
    #[serde(default)]
    account_number: String,
}

#[derive(Template)]
#[template(path = "payouts/lookup.html")]
struct LookupAnswer {
    found: Result<String, String>,
}

/// The account holder's name as the bank knows it, while the maker types.
async fn lookup(
    state: Data<AppState>,
    member: Member,
    q: Query<LookupQuery>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::PayoutsRequest).await?;
    let found = if q.account_number.trim().len() < 6 {
        Err(String::new())
    } else {
        account_holder(&client, &q.country, &q.bank_code, &q.account_number, "bank").await?
    };
    html(&LookupAnswer { found })
}

/// Asks the service whose account this is: Ok(name), or Err(what to tell
/// the maker) when the bank has no such account or refuses the details.
async fn account_holder(
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

async fn new_form(
    state: Data<AppState>,
    member: Member,
    draft: Query<Draft>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::PayoutsRequest)?;
    let body = render_new(&state, &member, draft.into_inner(), None, None).await?;
    Ok(HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(body))
}

/// Takes an indicative quote and files the payout for approval.
async fn file(state: Data<AppState>, member: Member, form: Form<Draft>) -> Result<HttpResponse, PortalError> {
    member.require(Permission::PayoutsRequest)?;
    let draft = form.into_inner();
    let state_ref = &state;
    let member_ref = &member;
    let refuse = move |draft: Draft, message: String, pending: Option<Uuid>| async move {
        let (state, member) = (state_ref, member_ref);
        let body = render_new(state, member, draft, Some(message), pending).await?;
        Ok::<_, PortalError>(
            HttpResponse::UnprocessableEntity()
                .content_type("text/html; charset=utf-8")
                .body(body),
        )
    };
    let decimals = Currency::parse(draft.from_asset.trim())
        .ok()
        .and_then(|c| c.decimals())
        .unwrap_or(6);
    let amount = match amount::parse("The amount", &draft.amount, draft.from_asset.trim(), decimals) {
        Ok(a) => a,
        Err(message) => return refuse(draft, message, None).await,
    };
    let client = state
        .upstreams
        .for_member(&state.pool, &state.key, &state.audit, &member)
        .await?;
    let mut draft = draft;
    let saved_id = Some(draft.beneficiary_id.trim().to_owned()).filter(|id| !id.is_empty());
    let mut payee_saved_at = None;
    if let Some(id) = &saved_id {
        match client.beneficiary(id).await {
            Ok(b) => match b.destination {
                Destination::Account {
                    account_name,
                    account_number,
                    bank_code,
                    ..
                } => {
                    payee_saved_at = Some(b.created_at);
                    draft.account_name = account_name;
                    draft.account_number = account_number;
                    draft.bank_code = bank_code;
                }
                Destination::Crypto { .. } => {
                    return refuse(
                        draft,
                        "A crypto beneficiary can't receive a fiat payout.".to_owned(),
                        None,
                    )
                    .await
                }
            },
            Err(e) => return refuse(draft, describe_upstream(&e).0, None).await,
        }
    }
    if draft.account_number.trim().is_empty()
        || draft.account_name.trim().is_empty()
        || draft.bank_code.is_empty()
    {
        return refuse(
            draft,
            "Fill in the bank, the account number and the account holder's name.".to_owned(),
            None,
        )
        .await;
    }
    let corridor = client.payout_corridor(&draft.country).await?;
    let banks = client.payout_banks(&draft.country).await?.banks;
    let destination_type = banks
        .iter()
        .find(|b| b.code == draft.bank_code)
        .map(|b| b.kind.clone())
        .unwrap_or_else(|| "bank".to_owned());
    // The payee is checked before anything is filed; the name the bank
    // gives goes into what the approvers see (and the digest).
    let verified_name = match account_holder(
        &client,
        &corridor.country,
        &draft.bank_code,
        &draft.account_number,
        &destination_type,
    )
    .await?
    {
        Ok(name) => name,
        Err(message) => return refuse(draft, message, None).await,
    };
    let indicative = client
        .create_payout_quote(&QuoteRequest {
            amount: Some(amount),
            country: corridor.country.clone(),
            from_asset: draft.from_asset.clone(),
            to_currency: corridor.currency.clone(),
            source: "offchain".to_owned(),
            reference: format!("pd-indicative-{}", Uuid::new_v4().simple()),
            ..Default::default()
        })
        .await;
    let indicative = match indicative {
        Ok(q) => q,
        Err(e) => return refuse(draft, describe_upstream(&e).0, None).await,
    };
    let beneficiary = PayoutBeneficiary {
        destination_type,
        country: corridor.country.clone(),
        account_name: draft.account_name.trim().to_owned(),
        account_number: draft.account_number.trim().to_owned(),
        bank_code: Some(draft.bank_code.clone()),
    };
    let payload = PayoutPayload {
        country: corridor.country.clone(),
        from_asset: indicative.from_asset.clone(),
        to_currency: corridor.currency.clone(),
        amount,
        payment_reason: draft.payment_reason.trim().to_owned(),
        beneficiary: beneficiary.clone(),
        beneficiary_id: saved_id,
        verified_name: Some(verified_name),
        indicative_rate: indicative.exchange_rate.rate,
        indicative_settlement: indicative.settlement_amount,
        indicative_fees: indicative.fees,
    };
    let summary = format!(
        "Pay {} {} (about {} {}) to {} ****{}",
        amount,
        indicative.from_asset,
        indicative.settlement_amount,
        corridor.currency,
        beneficiary.account_name,
        beneficiary
            .account_number
            .chars()
            .rev()
            .take(4)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<String>()
    );
    let target = format!(
        "{}:{}:{}",
        corridor.country, draft.bank_code, beneficiary.account_number
    );
    let filed = engine::file::<PayoutAction>(
        &state,
        &member,
        Filing {
            target: &target,
            summary: &summary,
            currency: &payload.from_asset.clone(),
            payload,
            amount,
            reference: None,
            payee_saved_at,
        },
    )
    .await;
    match filed {
        Ok(filed) => Ok(redirect(&format!("/approvals/{}", filed.id()))),
        Err(ApprovalError::Duplicate(existing)) => {
            refuse(
                draft,
                "A payout to this account is already waiting for approval.".to_owned(),
                Some(existing),
            )
            .await
        }
        Err(ApprovalError::Db(e)) => Err(e.into()),
        Err(e) => refuse(draft, e.to_string(), None).await,
    }
}
