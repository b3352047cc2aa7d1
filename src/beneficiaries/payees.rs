//! Payees saved, changed and deleted: each is a change filed through the
//! gate, so a second admin can be asked to approve it.

use paydesk_api::models::beneficiaries::Destination;
use serde::Deserialize;

use super::action::{Payee, PayeeChange, PayeeChangeAction};
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::approvals::submit_control;
use crate::state::AppState;
use crate::web::form::{Failure, Refusal};

/// The payee form as typed.
#[derive(Debug, Default, Clone, Deserialize)]
pub struct PayeeDraft {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub country: String,
    #[serde(default)]
    pub bank_code: String,
    #[serde(default)]
    pub account_number: String,
    #[serde(default)]
    pub account_name: String,
    #[serde(default)]
    pub chain: String,
    #[serde(default)]
    pub address: String,
}

impl PayeeDraft {
    pub fn from_payee(p: &Payee) -> PayeeDraft {
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
    pub fn check(&self) -> Result<Payee, Refusal> {
        let name = self.name.trim();
        if name.is_empty() || name.chars().count() > 100 {
            return Err(Refusal::field(
                "name",
                "Give the payee a name of 1 to 100 characters.",
            ));
        }
        let destination = match self.kind.as_str() {
            "bank" | "mobile_money" => {
                let country = self.country.trim().to_uppercase();
                if country.len() != 2 || !country.chars().all(|c| c.is_ascii_alphabetic()) {
                    return Err(Refusal::field(
                        "country",
                        "Enter the account's country as two letters, e.g. NG.",
                    ));
                }
                let number = self.account_number.trim();
                if !(6..=20).contains(&number.len()) || !number.chars().all(|c| c.is_ascii_digit()) {
                    return Err(Refusal::field(
                        "account_number",
                        "The account number is 6 to 20 digits.",
                    ));
                }
                if self.bank_code.trim().is_empty() || self.bank_code.trim().len() > 20 {
                    return Err(Refusal::field(
                        "bank_code",
                        "Enter the bank's (or mobile-money provider's) code, e.g. 058.",
                    ));
                }
                let holder = self.account_name.trim();
                if holder.is_empty() || holder.chars().count() > 100 {
                    return Err(Refusal::field(
                        "account_name",
                        "Enter the account holder's name (up to 100 characters).",
                    ));
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
                    return Err(Refusal::field("chain", "Choose the address's chain."));
                }
                if address.len() < 20 || address.len() > 128 || address.contains(char::is_whitespace) {
                    return Err(Refusal::field(
                        "address",
                        "Enter the whole address, without spaces.",
                    ));
                }
                Destination::Crypto {
                    address: address.to_owned(),
                    chain,
                }
            }
            _ => {
                return Err(Refusal::field(
                    "kind",
                    "Choose a bank account, a mobile-money account or a crypto address.",
                ))
            }
        };
        Ok(Payee {
            kind: self.kind.clone(),
            name: name.to_owned(),
            destination,
        })
    }
}

/// A payee's saved form, read from the service.
pub async fn saved(state: &AppState, member: &Member, id: &str) -> Result<Payee, Failure> {
    let client = state.client_for(member, Permission::BeneficiariesManage).await?;
    Ok(Payee::of(&client.beneficiary(id).await?))
}

#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id))]
pub async fn create(state: &AppState, member: &Member, draft: &PayeeDraft) -> Result<String, Failure> {
    let payee = draft.check()?;
    let target = format!("new-payee:{}:{}", payee.name, payee.destination_text());
    let summary = format!("Save the payee {} ({})", payee.name, payee.destination_text());
    submit_control::<PayeeChangeAction>(state, member, &target, &summary, PayeeChange::Create { payee }).await
}

#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id, payee = id))]
pub async fn update(
    state: &AppState,
    member: &Member,
    id: &str,
    draft: &PayeeDraft,
) -> Result<String, Failure> {
    let before = saved(state, member, id).await?;
    let after = draft.check()?;
    if after == before {
        return Ok("Nothing changed.".to_owned());
    }
    let summary = format!(
        "Change the payee {} to {} ({})",
        before.name,
        after.name,
        after.destination_text()
    );
    let change = PayeeChange::Update {
        id: id.to_owned(),
        before,
        after,
    };
    submit_control::<PayeeChangeAction>(state, member, &format!("payee:{id}"), &summary, change).await
}

/// The deletion of a payee, ready to preview or file: (target, summary, change).
pub async fn deletion(
    state: &AppState,
    member: &Member,
    id: &str,
) -> Result<(String, String, PayeeChange), Failure> {
    let payee = saved(state, member, id).await?;
    let summary = format!("Delete the payee {} ({})", payee.name, payee.destination_text());
    let change = PayeeChange::Delete {
        id: id.to_owned(),
        payee,
    };
    Ok((format!("payee:{id}"), summary, change))
}
