//! Issuing a virtual account, the deposits it received, and (on a
//! sandbox) a bank transfer into it.

use paydesk_api::models::transactions::{Transaction, TransactionQuery, TransactionType};
use paydesk_api::models::virtual_accounts::{NewVirtualAccount, SimulateBankTransfer, VirtualAccount};
use paydesk_api::units::{decimal_to_units, BaseUnits, Currency};
use paydesk_api::{ApiError, Client};
use serde::Deserialize;
use serde_json::json;
use uuid::Uuid;

use crate::access::permissions::Permission;
use crate::access::Member;
use crate::audit::{self, Event};
use crate::state::AppState;
use crate::web::amount;
use crate::web::error::user_fixable;
use crate::web::form::{Failure, Refusal};

/// The issue form: the reference is fixed when the customer's page is
/// shown, so a double submit issues one account.
#[derive(Debug, Deserialize)]
pub struct IssueForm {
    pub reference: String,
}

#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id, %customer))]
pub async fn issue(
    state: &AppState,
    member: &Member,
    customer: Uuid,
    form: &IssueForm,
) -> Result<VirtualAccount, Failure> {
    let client = state
        .client_for(member, Permission::VirtualAccountsManage)
        .await?;
    if Uuid::parse_str(form.reference.trim_start_matches("paydesk-va-")).is_err() {
        return Err(
            Refusal::form("This form is incomplete; reload the customer's page and try again.").into(),
        );
    }
    // A customer of another company is not found, not refused.
    client.customer(&customer.to_string()).await?;
    let body = NewVirtualAccount {
        customer_id: customer,
        reference: form.reference.clone(),
    };
    let account = match client.create_virtual_account(&body).await {
        Ok(account) => account,
        Err(e) => return Err(Refusal::form(user_fixable(e)?).into()),
    };
    let details =
        json!({"customer": customer, "account_number": account.account_number, "bank": account.bank_name});
    audit::member_did(
        &state.pool,
        member,
        Event::VirtualAccountsIssued,
        format!("virtual_account:{}", account.id),
        details,
    )
    .await?;
    Ok(account)
}

/// The NGN deposits that came in through `account`, newest first (from the
/// latest 100 confirmed deposits).
pub async fn deposits(client: &Client, account: &VirtualAccount) -> Result<Vec<Transaction>, ApiError> {
    let query = TransactionQuery {
        kind: Some(TransactionType::DepositConfirmed),
        currency: Currency::parse("NGN").ok(),
        limit: Some(100),
        ..TransactionQuery::default()
    };
    let id = account.id.to_string();
    Ok(client
        .transactions(&query)
        .await?
        .transactions
        .into_iter()
        .filter(|t| t.metadata.get("virtual_account_id").and_then(|v| v.as_str()) == Some(id.as_str()))
        .collect())
}

#[derive(Debug, Default, Deserialize)]
pub struct TransferForm {
    /// In naira.
    #[serde(default)]
    pub amount: String,
    #[serde(default)]
    pub sender_name: String,
}

/// On a sandbox: a bank transfer arrives in the account.
#[tracing::instrument(skip_all, fields(account = %account_id))]
pub async fn simulate_transfer(
    state: &AppState,
    member: &Member,
    account_id: Uuid,
    form: &TransferForm,
) -> Result<String, Failure> {
    let client = state.client_for(member, Permission::ConnectionsManage).await?;
    let naira =
        amount::parse("The amount", &form.amount, "NGN", 2).map_err(|m| Refusal::field("amount", m))?;
    let kobo = decimal_to_units(naira, 2).map_err(|e| Refusal::field("amount", e.to_string()))?;
    let sender = Some(form.sender_name.trim().to_owned()).filter(|s| !s.is_empty());
    let body = SimulateBankTransfer {
        amount: BaseUnits(kobo),
        sender_name: sender.clone(),
        narration: Some("simulated from Paydesk".to_owned()),
        ..SimulateBankTransfer::default()
    };
    if let Err(e) = client.sandbox_bank_transfer(&account_id.to_string(), &body).await {
        return Err(Refusal::form(user_fixable(e)?).into());
    }
    let details = json!({"virtual_account": account_id, "naira": naira});
    audit::member_did(
        &state.pool,
        member,
        Event::SandboxBankTransferSimulated,
        format!("virtual_account:{account_id}"),
        details,
    )
    .await?;
    Ok(format!(
        "A transfer of {naira} NGN{} arrived; the NGN balance is credited.",
        sender.map(|s| format!(" from {s}")).unwrap_or_default()
    ))
}
