//! A change to the saved payees as a control of the approval gate. It
//! calls the service, so it runs with the tenant's client. A create whose
//! answer was lost is read back (a payee of the same name and destination)
//! before it is sent again.

use std::time::Duration;

use paydesk_api::models::beneficiaries::{BeneficiaryUpdate, Destination, NewBeneficiary};
use paydesk_api::ApiError;
use serde::{Deserialize, Serialize};

use crate::access::permissions::Permission;
use crate::approvals::{Action, ExecError, Fact, Run, Step};
use crate::approvals::{Kind, Policy};

pub struct PayeeChangeAction;

/// A payee as the form gives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Payee {
    /// `bank`, `mobile_money` or `crypto`.
    pub kind: String,
    pub name: String,
    pub destination: Destination,
}

impl Payee {
    pub fn of(b: &paydesk_api::models::beneficiaries::Beneficiary) -> Payee {
        Payee {
            kind: b.kind.clone(),
            name: b.name.clone(),
            destination: b.destination.clone(),
        }
    }

    pub fn destination_text(&self) -> String {
        describe_destination(&self.destination)
    }
}

pub fn describe_destination(d: &Destination) -> String {
    match d {
        Destination::Account {
            account_name,
            account_number,
            bank_code,
            country,
        } => format!(
            "{account_name}, account {account_number} at {bank_code}{}",
            country.as_deref().map(|c| format!(" ({c})")).unwrap_or_default()
        ),
        Destination::Crypto { address, chain } => format!("{address} on {chain}"),
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum PayeeChange {
    Create { payee: Payee },
    Update { id: String, before: Payee, after: Payee },
    Delete { id: String, payee: Payee },
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PayeeProgress {
    pub id: Option<String>,
    /// A create was sent; its answer may have been lost.
    pub sent: bool,
}

impl Action for PayeeChangeAction {
    type Payload = PayeeChange;
    type Progress = PayeeProgress;

    const KIND: Kind = Kind {
        key: "payee_change",
        label: "Payee changes",
        read_permission: Permission::BeneficiariesRead,
        request_permission: Permission::BeneficiariesManage,
        approve_permission: Permission::BeneficiariesManage,
    };
    const CONTROL: bool = true;
    const NEEDS_UPSTREAM: bool = true;

    fn default_policy(&self) -> Policy {
        Policy {
            first_time_rule: false,
            reason: "default policy: a second admin approves".to_owned(),
            ..Policy::standard()
        }
    }

    fn describe(&self, c: &PayeeChange) -> Vec<Fact> {
        match c {
            PayeeChange::Create { payee } => vec![
                Fact::new("Save payee", payee.name.clone()),
                Fact::new("Type", payee.kind.clone()),
                Fact::new("Paid to", payee.destination_text()),
            ],
            PayeeChange::Update { id, before, after } => vec![
                Fact::linked(
                    "Change payee",
                    before.name.clone(),
                    format!("/beneficiaries/{id}"),
                ),
                Fact::new("Was", format!("{}: {}", before.name, before.destination_text())),
                Fact::new("Becomes", format!("{}: {}", after.name, after.destination_text())),
            ],
            PayeeChange::Delete { id, payee } => vec![
                Fact::linked("Delete payee", payee.name.clone(), format!("/beneficiaries/{id}")),
                Fact::new("Paid to", payee.destination_text()),
            ],
        }
    }

    async fn execute(
        &self,
        run: &mut Run<'_, PayeeProgress>,
        c: &PayeeChange,
    ) -> Result<Step<PayeeChange>, ExecError> {
        let client = run.client()?.clone();
        match c {
            PayeeChange::Create { payee } => {
                if run.progress.sent {
                    let saved = client.beneficiaries(Some(100), None).await?.beneficiaries;
                    if let Some(found) = saved
                        .iter()
                        .find(|b| b.name == payee.name && b.destination == payee.destination)
                    {
                        return Ok(Step::Done(format!(
                            "Payee '{}' saved (id {}).",
                            payee.name, found.id
                        )));
                    }
                }
                run.progress.sent = true;
                run.save("sending", "saving the payee with the service").await?;
                let body = NewBeneficiary {
                    kind: payee.kind.clone(),
                    name: payee.name.clone(),
                    destination: serde_json::to_value(&payee.destination).unwrap_or_default(),
                };
                match client.create_beneficiary(&body).await {
                    Ok(b) => {
                        run.progress.id = Some(b.id.to_string());
                        run.save("saved", &format!("payee {}", b.id)).await?;
                        Ok(Step::Done(format!("Payee '{}' saved.", payee.name)))
                    }
                    Err(ApiError::OutcomeUnknown { .. }) | Err(ApiError::Unavailable(_)) => {
                        Ok(Step::Again(Duration::from_secs(2)))
                    }
                    Err(e) => Err(e.into()),
                }
            }
            PayeeChange::Update { id, before, after } => {
                let now = client.beneficiary(id).await?;
                if now.name != before.name || now.destination != before.destination {
                    return Ok(Step::Failed(
                        "The payee changed since this request was filed; file the change again.".to_owned(),
                    ));
                }
                let body = BeneficiaryUpdate {
                    name: Some(after.name.clone()),
                    destination: Some(serde_json::to_value(&after.destination).unwrap_or_default()),
                    is_active: None,
                    is_blacklisted: None,
                };
                client.update_beneficiary(id, &body).await?;
                Ok(Step::Done(format!("Payee '{}' changed.", after.name)))
            }
            PayeeChange::Delete { id, payee } => match client.delete_beneficiary(id).await {
                Ok(_) | Err(ApiError::Problem { status: 404, .. }) => {
                    Ok(Step::Done(format!("Payee '{}' deleted.", payee.name)))
                }
                Err(e) => Err(e.into()),
            },
        }
    }
}
