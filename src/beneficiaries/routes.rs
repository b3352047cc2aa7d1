//! The payees' pages: list, page with its edit form, new, delete.

use actix_web::web::{self, Data, Form, Path};
use actix_web::HttpResponse;
use askama::Template;
use paydesk_api::models::beneficiaries::{Beneficiary, Destination};
use serde::Deserialize;
use uuid::Uuid;

use super::action::{describe_destination, Payee, PayeeChange, PayeeChangeAction};
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::approvals::action::Action;
use crate::approvals::engine::{self, ApprovalError, Filing};
use crate::approvals::routes::{confirm_page, submit_control, Submission};
use crate::approvals::store::{self as approvals, ActionRequest};
use crate::startup::AppState;
use crate::web::error::PortalError;
use crate::web::page::{ok, unprocessable, Shell};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/beneficiaries", web::get().to(list))
        .route("/beneficiaries", web::post().to(create))
        .route("/beneficiaries/new", web::get().to(new_form))
        .route("/beneficiaries/{id}", web::get().to(detail))
        .route("/beneficiaries/{id}", web::post().to(update))
        .route("/beneficiaries/{id}/delete", web::post().to(delete));
}

/// A payee row as the list shows it.
pub struct Row {
    pub beneficiary: Beneficiary,
    pub destination: String,
    /// Saved less than 24 hours ago: payouts to it always wait.
    pub new: bool,
}

fn row(beneficiary: Beneficiary) -> Row {
    Row {
        destination: describe_destination(&beneficiary.destination),
        new: chrono::Utc::now() - beneficiary.created_at < chrono::Duration::hours(24),
        beneficiary,
    }
}

#[derive(Template)]
#[template(path = "beneficiaries/list.html")]
struct ListPage {
    shell: Shell,
    rows: Vec<Row>,
    total: u64,
    can_manage: bool,
    notice: Option<String>,
    error: Option<String>,
    pending: Vec<ActionRequest>,
}

async fn render_list(
    state: &AppState,
    member: &Member,
    notice: Option<String>,
    error: Option<String>,
) -> Result<String, PortalError> {
    let client = state.client_for(member, Permission::BeneficiariesRead).await?;
    let page = client.beneficiaries(Some(100), None).await?;
    Ok(ListPage {
        shell: Shell::new(member, "/beneficiaries"),
        total: page.total,
        rows: page.beneficiaries.into_iter().map(row).collect(),
        can_manage: member.can(Permission::BeneficiariesManage),
        notice,
        error,
        pending: approvals::pending_of(&state.pool, member.tenant_id, &[PayeeChangeAction::KIND]).await?,
    }
    .render()?)
}

async fn list(state: Data<AppState>, member: Member) -> Result<HttpResponse, PortalError> {
    let body = render_list(&state, &member, None, None).await?;
    Ok(HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(body))
}

/// The payee form as typed.
#[derive(Debug, Default, Clone, Deserialize)]
pub struct PayeeDraft {
    #[serde(default)]
    name: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    country: String,
    #[serde(default)]
    bank_code: String,
    #[serde(default)]
    account_number: String,
    #[serde(default)]
    account_name: String,
    #[serde(default)]
    chain: String,
    #[serde(default)]
    address: String,
}

impl PayeeDraft {
    fn from_payee(p: &Payee) -> PayeeDraft {
        let mut draft = PayeeDraft {
            name: p.name.clone(),
            kind: p.kind.clone(),
            ..PayeeDraft::default()
        };
        match &p.destination {
            Destination::Account {
                account_name,
                account_number,
                bank_code,
                country,
            } => {
                draft.account_name = account_name.clone();
                draft.account_number = account_number.clone();
                draft.bank_code = bank_code.clone();
                draft.country = country.clone().unwrap_or_default();
            }
            Destination::Crypto { address, chain } => {
                draft.address = address.clone();
                draft.chain = chain.clone();
            }
        }
        draft
    }

    /// The payee, or what to fix, in the form's words.
    fn check(&self) -> Result<Payee, String> {
        let name = self.name.trim();
        if name.is_empty() || name.chars().count() > 100 {
            return Err("Give the payee a name of 1 to 100 characters.".to_owned());
        }
        let destination = match self.kind.as_str() {
            "bank" | "mobile_money" => {
                let country = self.country.trim().to_uppercase();
                if country.len() != 2 || !country.chars().all(|c| c.is_ascii_alphabetic()) {
                    return Err("Enter the account's country as two letters, e.g. NG.".to_owned());
                }
                let number = self.account_number.trim();
                if !(6..=20).contains(&number.len()) || !number.chars().all(|c| c.is_ascii_digit()) {
                    return Err("The account number is 6 to 20 digits.".to_owned());
                }
                if self.bank_code.trim().is_empty() || self.bank_code.trim().len() > 20 {
                    return Err("Enter the bank's (or mobile-money provider's) code, e.g. 058.".to_owned());
                }
                let holder = self.account_name.trim();
                if holder.is_empty() || holder.chars().count() > 100 {
                    return Err("Enter the account holder's name (up to 100 characters).".to_owned());
                }
                Destination::Account {
                    account_name: holder.to_owned(),
                    account_number: number.to_owned(),
                    bank_code: self.bank_code.trim().to_owned(),
                    country: Some(country),
                }
            }
            "crypto" => {
                let chain = self.chain.trim().to_lowercase();
                let address = self.address.trim();
                if chain.is_empty() || chain.len() > 30 {
                    return Err("Choose the address's chain.".to_owned());
                }
                if address.len() < 20 || address.len() > 128 || address.contains(char::is_whitespace) {
                    return Err("Enter the whole address, without spaces.".to_owned());
                }
                Destination::Crypto {
                    address: address.to_owned(),
                    chain,
                }
            }
            _ => return Err("Choose a bank account, a mobile-money account or a crypto address.".to_owned()),
        };
        Ok(Payee {
            kind: self.kind.clone(),
            name: name.to_owned(),
            destination,
        })
    }
}

#[derive(Template)]
#[template(path = "beneficiaries/form.html")]
struct FormPage {
    shell: Shell,
    /// None for a new payee.
    id: Option<String>,
    draft: PayeeDraft,
    beneficiary: Option<Row>,
    can_manage: bool,
    error: Option<String>,
    pending: Vec<ActionRequest>,
}

async fn render_form(
    state: &AppState,
    member: &Member,
    id: Option<String>,
    draft: Option<PayeeDraft>,
    error: Option<String>,
) -> Result<String, PortalError> {
    let (beneficiary, draft) = match &id {
        Some(id) => {
            let client = state.client_for(member, Permission::BeneficiariesRead).await?;
            let b = client.beneficiary(id).await?;
            let saved = PayeeDraft::from_payee(&payee_of(&b));
            (Some(row(b)), draft.unwrap_or(saved))
        }
        None => (None, draft.unwrap_or_default()),
    };
    let pending = approvals::pending_of(&state.pool, member.tenant_id, &[PayeeChangeAction::KIND])
        .await?
        .into_iter()
        .filter(|r| id.as_ref().is_some_and(|id| r.target == format!("payee:{id}")))
        .collect();
    Ok(FormPage {
        shell: Shell::new(member, "/beneficiaries"),
        id,
        draft,
        beneficiary,
        can_manage: member.can(Permission::BeneficiariesManage),
        error,
        pending,
    }
    .render()?)
}

fn payee_of(b: &Beneficiary) -> Payee {
    Payee {
        kind: b.kind.clone(),
        name: b.name.clone(),
        destination: b.destination.clone(),
    }
}

fn payee_id(raw: &str) -> Result<String, PortalError> {
    Uuid::parse_str(raw)
        .map(|u| u.to_string())
        .map_err(|_| PortalError::NotFound("no such payee".to_owned()))
}

async fn new_form(state: Data<AppState>, member: Member) -> Result<HttpResponse, PortalError> {
    member.require(Permission::BeneficiariesManage)?;
    let draft = PayeeDraft {
        kind: "bank".to_owned(),
        country: "NG".to_owned(),
        ..PayeeDraft::default()
    };
    Ok(ok(render_form(&state, &member, None, Some(draft), None).await?))
}

async fn detail(
    state: Data<AppState>,
    member: Member,
    id: Path<String>,
) -> Result<HttpResponse, PortalError> {
    let id = payee_id(&id)?;
    Ok(ok(render_form(&state, &member, Some(id), None, None).await?))
}

async fn create(
    state: Data<AppState>,
    member: Member,
    form: Form<PayeeDraft>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::BeneficiariesManage)?;
    let draft = form.into_inner();
    let payee = match draft.check() {
        Ok(p) => p,
        Err(message) => {
            return Ok(unprocessable(
                render_form(&state, &member, None, Some(draft), Some(message)).await?,
            ))
        }
    };
    let target = format!("new-payee:{}:{}", payee.name, payee.destination_text());
    let summary = format!("Save the payee {} ({})", payee.name, payee.destination_text());
    let (notice, error) = submit_control::<PayeeChangeAction>(
        &state,
        &member,
        &target,
        &summary,
        PayeeChange::Create { payee },
    )
    .await?;
    if let Some(message) = error {
        return Ok(unprocessable(
            render_form(&state, &member, None, Some(draft), Some(message)).await?,
        ));
    }
    Ok(ok(render_list(&state, &member, notice, None).await?))
}

async fn update(
    state: Data<AppState>,
    member: Member,
    id: Path<String>,
    form: Form<PayeeDraft>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::BeneficiariesManage)?;
    let id = payee_id(&id)?;
    let client = state.client_for(&member, Permission::BeneficiariesManage).await?;
    let before = payee_of(&client.beneficiary(&id).await?);
    let draft = form.into_inner();
    let after = match draft.check() {
        Ok(p) => p,
        Err(message) => {
            return Ok(unprocessable(
                render_form(&state, &member, Some(id), Some(draft), Some(message)).await?,
            ))
        }
    };
    if after == before {
        return Ok(ok(render_list(
            &state,
            &member,
            Some("Nothing changed.".to_owned()),
            None,
        )
        .await?));
    }
    let target = format!("payee:{id}");
    let summary = format!(
        "Change the payee {} to {} ({})",
        before.name,
        after.name,
        after.destination_text()
    );
    let change = PayeeChange::Update {
        id: id.clone(),
        before,
        after,
    };
    let (notice, error) =
        submit_control::<PayeeChangeAction>(&state, &member, &target, &summary, change).await?;
    if let Some(message) = error {
        return Ok(unprocessable(
            render_form(&state, &member, Some(id), Some(draft), Some(message)).await?,
        ));
    }
    Ok(ok(render_list(&state, &member, notice, None).await?))
}

/// Deleting asks for confirmation first, on a page that says what goes.
async fn delete(
    state: Data<AppState>,
    member: Member,
    id: Path<String>,
    form: Form<Vec<(String, String)>>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::BeneficiariesManage)?;
    let id = payee_id(&id)?;
    let client = state.client_for(&member, Permission::BeneficiariesManage).await?;
    let payee = payee_of(&client.beneficiary(&id).await?);
    let target = format!("payee:{id}");
    let summary = format!("Delete the payee {} ({})", payee.name, payee.destination_text());
    let change = PayeeChange::Delete {
        id: id.clone(),
        payee,
    };
    let submission = Submission(form.into_inner());
    if !submission.confirmed() {
        let filing = Filing::control(&target, &summary, change);
        let preview = match engine::preview::<PayeeChangeAction>(&state, &member, &filing).await {
            Ok(p) => p,
            Err(ApprovalError::Db(e)) => return Err(e.into()),
            Err(e) => {
                return Ok(unprocessable(
                    render_form(&state, &member, Some(id), None, Some(e.to_string())).await?,
                ))
            }
        };
        let back = format!("/beneficiaries/{id}");
        return confirm_page(
            &member,
            "Delete a payee",
            preview,
            (&format!("{back}/delete"), &back),
            &submission,
        );
    }
    let (notice, error) =
        submit_control::<PayeeChangeAction>(&state, &member, &target, &summary, change).await?;
    Ok(ok(render_list(&state, &member, notice, error).await?))
}
