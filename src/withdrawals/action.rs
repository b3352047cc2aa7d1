//! An on-chain withdrawal as a kind of the approval gate. It always goes
//! through the gate (the standard policy: one approval, and the first
//! withdrawal to an address is a first-time counterparty). It is sent with
//! the reference fixed when the form was shown; the service answers a
//! repeated reference with the first withdrawal, so a lost answer is
//! settled by sending the same reference again, never a second
//! withdrawal. The request ends when the chain settles the withdrawal: a
//! failure on chain ends it as failed, with the reason.

use std::time::Duration;

use chrono::{DateTime, Utc};
use paydesk_api::models::beneficiaries::Destination;
use paydesk_api::models::withdrawals::{NewWithdrawal, Withdrawal, WithdrawalStatus};
use paydesk_api::units::{format_decimal, BaseUnits};
use paydesk_api::ApiError;
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use uuid::Uuid;

use super::short_address;
use crate::access::permissions::Permission;
use crate::approvals;
use crate::approvals::Kind;
use crate::approvals::{Action, Concerns, Counterparty, ExecError, Fact, Run, Step};

pub struct WithdrawalAction;

/// Everything a withdrawal needs, fixed when it was filed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WithdrawalPayload {
    /// The wallet currency sent (USDT, USDC, BTC).
    pub currency: String,
    /// Decimal places of its base unit (the spec's unit table).
    pub decimals: u32,
    /// The address chain name, lowercase.
    pub chain: String,
    pub to_address: String,
    /// The destination tag, on chains that need one.
    #[serde(default)]
    pub memo: Option<String>,
    /// In base units of `currency`.
    pub amount: BaseUnits,
    /// The network fee the service charged on its latest withdrawal of
    /// this currency, when there was one: what the wallet will also pay.
    #[serde(default)]
    pub fee_estimate: Option<BaseUnits>,
    /// The saved payee it was filed for, re-checked before it is sent.
    #[serde(default)]
    pub payee: Option<Payee>,
}

/// A saved crypto payee, as filed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Payee {
    pub id: String,
    pub name: String,
}

impl WithdrawalPayload {
    pub fn show(&self, units: BaseUnits) -> String {
        format!(
            "{} {}",
            format_decimal(units.value(), self.decimals),
            self.currency
        )
    }

    /// How the first-time rule knows the address: EVM addresses are hex,
    /// so their case does not matter; a memo names another recipient.
    pub fn counterparty_key(&self) -> String {
        let address = if self.to_address.starts_with("0x") {
            self.to_address.to_ascii_lowercase()
        } else {
            self.to_address.clone()
        };
        match &self.memo {
            Some(memo) => format!("address:{}:{address}:{memo}", self.chain),
            None => format!("address:{}:{address}", self.chain),
        }
    }
}

/// What execution has done so far.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct WithdrawalProgress {
    pub withdrawal_id: Option<String>,
    /// The withdrawal's last known status on the service.
    pub status: Option<WithdrawalStatus>,
    #[serde(default)]
    pub tx_hash: Option<String>,
    /// When the service accepted it; read back often at first.
    pub sent_at: Option<DateTime<Utc>>,
}

impl Action for WithdrawalAction {
    type Payload = WithdrawalPayload;
    type Progress = WithdrawalProgress;

    const KIND: Kind = Kind {
        key: "withdrawal",
        label: "On-chain withdrawals",
        read_permission: Permission::WithdrawalsRead,
        request_permission: Permission::WithdrawalsRequest,
        approve_permission: Permission::WithdrawalsApprove,
    };

    fn describe(&self, p: &WithdrawalPayload) -> Vec<Fact> {
        let mut facts = vec![
            Fact::new("Withdraw", format!("{} on {}", p.show(p.amount), p.chain)),
            Fact::new("To address", p.to_address.clone()),
        ];
        if let Some(memo) = &p.memo {
            facts.push(Fact::new("Memo (destination tag)", memo.clone()));
        }
        if let Some(payee) = &p.payee {
            facts.push(Fact::linked(
                "Saved payee",
                payee.name.clone(),
                format!("/beneficiaries/{}", payee.id),
            ));
        }
        match p.fee_estimate {
            Some(fee) => {
                facts.push(Fact::new(
                    "Network fee",
                    format!(
                        "about {} (the service's fee on its latest {} withdrawal)",
                        p.show(fee),
                        p.currency
                    ),
                ));
                facts.push(Fact::new(
                    &format!("Debited from the {} wallet", p.currency),
                    format!("about {}", p.show(BaseUnits(p.amount.value() + fee.value()))),
                ));
            }
            None => facts.push(Fact::new(
                "Network fee",
                format!(
                    "set by the service when it sends (no {} withdrawal yet to show it); paid from the wallet on top of the amount",
                    p.currency
                ),
            )),
        }
        facts
    }

    /// A transfer's events (`transfer.…`) carry the reference it was sent
    /// under, which is the request's.
    fn concerns(&self, event: &str, data: &serde_json::Value) -> Option<Concerns> {
        let reference = data["reference"]
            .as_str()
            .filter(|_| event.starts_with("transfer."))?;
        Some(Concerns::Reference(reference.to_owned()))
    }

    fn counterparties(&self, p: &WithdrawalPayload) -> Vec<Counterparty> {
        vec![Counterparty {
            key: p.counterparty_key(),
            label: format!("the {} address {}", p.chain, short_address(&p.to_address)),
        }]
    }

    async fn execute(
        &self,
        run: &mut Run<'_, WithdrawalProgress>,
        p: &WithdrawalPayload,
    ) -> Result<Step<WithdrawalPayload>, ExecError> {
        // Sent by an earlier run: follow it on chain.
        if let Some(id) = run.progress.withdrawal_id.clone() {
            let withdrawal = run.client()?.withdrawal(&id).await?;
            return settled(run, &withdrawal).await;
        }
        if let Some(payee) = &p.payee {
            if !payee_unchanged(run, &payee.id, p).await {
                return Ok(Step::Failed(
                    "The saved payee changed or was deleted after the request was filed; file a new withdrawal."
                        .to_owned(),
                ));
            }
        }
        let body = NewWithdrawal {
            to_address: p.to_address.clone(),
            amount: p.amount,
            currency: p.currency.clone(),
            chain: p.chain.clone(),
            reference: run.reference().to_owned(),
            memo: p.memo.clone(),
        };
        match run.client()?.create_withdrawal(&body).await {
            Ok(withdrawal) => {
                run.progress.withdrawal_id = Some(withdrawal.id.to_string());
                run.progress.sent_at = Some(Utc::now());
                run.save(
                    "sent",
                    &format!("withdrawal {} ({} fee)", withdrawal.id, p.show(withdrawal.fee)),
                )
                .await?;
                settled(run, &withdrawal).await
            }
            Err(ApiError::OutcomeUnknown { .. }) | Err(ApiError::Unavailable(_)) => {
                // The same reference again returns the first withdrawal.
                run.note("send unconfirmed", "asking again with the same reference")
                    .await?;
                Ok(Step::Again(Duration::from_secs(2)))
            }
            Err(e) => Err(e.into()),
        }
    }
}

/// The saved payee still pays the approved chain and address.
async fn payee_unchanged(run: &Run<'_, WithdrawalProgress>, id: &str, p: &WithdrawalPayload) -> bool {
    let Ok(client) = run.client() else {
        return false;
    };
    match client.beneficiary(id).await {
        Ok(b) => {
            b.is_active
                && !b.is_blacklisted
                && matches!(&b.destination, Destination::Crypto { address, chain }
                    if *address == p.to_address && *chain == p.chain)
        }
        Err(_) => false,
    }
}

/// Where a sent withdrawal stands: done once completed on chain, failed
/// with the chain's reason, else read back again.
async fn settled(
    run: &mut Run<'_, WithdrawalProgress>,
    w: &Withdrawal,
) -> Result<Step<WithdrawalPayload>, ExecError> {
    if run.progress.status.as_ref() != Some(&w.status) {
        run.progress.status = Some(w.status.clone());
        run.progress.tx_hash = Some(w.tx_hash.clone()).filter(|h| !h.is_empty());
        let detail = match &run.progress.tx_hash {
            Some(hash) => format!("withdrawal {}, tx {hash}", w.id),
            None => format!("withdrawal {}", w.id),
        };
        run.save(w.status.as_str(), &detail).await?;
    }
    let amount = format!(
        "{} {}",
        format_decimal(w.amount.value(), decimals_of(&w.currency)),
        w.currency
    );
    Ok(match w.status {
        WithdrawalStatus::Completed => Step::Done(format!(
            "Withdrawal {} completed: {amount} sent on {} to {} (tx {}).",
            w.id,
            w.chain,
            short_address(&w.to_address),
            w.tx_hash
        )),
        WithdrawalStatus::Failed => Step::Failed(format!(
            "The withdrawal failed on chain: {}. The amount and fee are back in the wallet.",
            w.failure_reason.as_deref().unwrap_or("no reason given")
        )),
        _ => Step::Again(approvals::read_back_after(run.progress.sent_at)),
    })
}

fn decimals_of(currency: &str) -> u32 {
    paydesk_api::units::Currency::parse(currency)
        .ok()
        .and_then(|c| c.decimals())
        .unwrap_or(0)
}

/// The request that sent the withdrawal with this reference.
pub async fn request_for(pool: &PgPool, tenant: Uuid, reference: &str) -> Result<Option<Uuid>, sqlx::Error> {
    approvals::by_reference(pool, tenant, WithdrawalAction::KIND, reference).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload() -> WithdrawalPayload {
        WithdrawalPayload {
            currency: "USDT".into(),
            decimals: 6,
            chain: "ethereum".into(),
            to_address: "0x52908400098527886E0F7030069857D2E4169EE7".into(),
            memo: None,
            amount: BaseUnits(12_500_000),
            fee_estimate: Some(BaseUnits(1_000_000)),
            payee: None,
        }
    }

    #[test]
    fn approvers_see_the_amount_the_address_and_the_fee() {
        let facts = WithdrawalAction.describe(&payload());
        let shown: Vec<String> = facts
            .iter()
            .map(|f| format!("{}: {}", f.label, f.value))
            .collect();
        assert!(
            shown.contains(&"Withdraw: 12.500000 USDT on ethereum".to_owned()),
            "{shown:?}"
        );
        assert!(
            shown
                .iter()
                .any(|s| s.contains("Network fee: about 1.000000 USDT")),
            "{shown:?}"
        );
        assert!(
            shown.iter().any(|s| s.contains("about 13.500000 USDT")),
            "{shown:?}"
        );
    }

    #[test]
    fn an_address_is_one_counterparty_whatever_its_case_but_each_memo_is_another() {
        let p = payload();
        let lower = WithdrawalPayload {
            to_address: p.to_address.to_ascii_lowercase(),
            ..p.clone()
        };
        assert_eq!(p.counterparty_key(), lower.counterparty_key());
        let stellar = |memo: &str| WithdrawalPayload {
            chain: "stellar".into(),
            to_address: "GABC".into(),
            memo: Some(memo.into()),
            ..p.clone()
        };
        assert_ne!(stellar("1").counterparty_key(), stellar("2").counterparty_key());
    }
}
