//! The card actions that move wallet money or re-enable spending, as kinds
//! of the approval gate: issuing a card (its first load), funding and
//! withdrawing, and freezing or unfreezing. Their default policies let
//! small ones run at once (still through the gate, so they are recorded,
//! digested and run exactly once); a policy decides when they wait.
//!
//! Each call carries the reference fixed when the form was shown, and the
//! service answers a repeated reference with the first result, so a run
//! whose answer was lost is settled by sending the same reference again:
//! it reads back what happened instead of moving money twice.

use std::time::Duration;

use paydesk_api::models::cards::{BalanceChange, BalanceDirection, CardState, NewCard};
use paydesk_api::units::MicroUnits;
use paydesk_api::ApiError;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use crate::access::permissions::Permission;
use crate::approvals::{Action, ExecError, Fact, Run, Step};
use crate::approvals::{Kind, Policy};

/// 1% of `amount`, rounded up to the micro-unit (the sandbox rules'
/// funding fee, charged on funding and withdrawing alike).
pub fn funding_fee(amount: MicroUnits) -> MicroUnits {
    MicroUnits((amount.value() + 99) / 100)
}

/// Refuses before anything is filed when the USDT wallet can't pay
/// `needed` (1 USD = 1 USDT, both in micro-units).
pub async fn wallet_covers(
    client: &paydesk_api::Client,
    needed: MicroUnits,
) -> Result<Result<(), String>, ApiError> {
    let available = client.balance("USDT").await?.available_balance.value();
    if available < needed.value() {
        return Ok(Err(format!(
            "The USDT wallet holds {} USDT but this needs {} USDT (the amount and the 1% fee). Top up the wallet or lower the amount.",
            MicroUnits(available).display(),
            needed.display()
        )));
    }
    Ok(Ok(()))
}

/// Whole USD, for the policy's threshold.
pub fn usd(amount: MicroUnits) -> Decimal {
    Decimal::new(amount.value(), 6)
}

const CARD_MONEY: Permission = Permission::CardsMoneyApprove;

fn card_label(name: &str, last_four: &str) -> String {
    if last_four.is_empty() {
        name.to_owned()
    } else {
        format!("{name} ····{last_four}")
    }
}

// --- Issue -------------------------------------------------------------------

pub struct IssueAction;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IssuePayload {
    /// The request to the service, reference included.
    pub card: NewCard,
    pub customer_label: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct IssueProgress {
    pub card_id: Option<String>,
}

impl Action for IssueAction {
    type Payload = IssuePayload;
    type Progress = IssueProgress;

    const KIND: Kind = Kind {
        key: "card_issue",
        label: "Card issuing",
        read_permission: Permission::CardsRead,
        request_permission: Permission::CardsManage,
        approve_permission: CARD_MONEY,
    };

    fn default_policy(&self) -> Policy {
        Policy::at_once_up_to(Decimal::from(1000))
    }

    fn describe(&self, p: &IssuePayload) -> Vec<Fact> {
        let kind = p.card.card_type.as_deref().unwrap_or("virtual");
        let fee = funding_fee(p.card.amount);
        let mut facts = vec![
            Fact::new("Issue", format!("a {kind} card for {}", p.customer_label)),
            Fact::new("Load", format!("{} USD", p.card.amount.display())),
            Fact::new("Fee", format!("{} USD (1%)", fee.display())),
            Fact::new(
                "Debited from the USDT wallet",
                format!(
                    "{} USDT",
                    MicroUnits(p.card.amount.value() + fee.value()).display()
                ),
            ),
        ];
        if let Some(name) = &p.card.name {
            facts.push(Fact::new("Name on the card", name.clone()));
        }
        if let (Some(swipes), Some(ends)) = (p.card.swipe_count, &p.card.terminate_date) {
            facts.push(Fact::new("Lite card", format!("{swipes} use(s), ends on {ends}")));
        }
        facts
    }

    async fn execute(
        &self,
        run: &mut Run<'_, IssueProgress>,
        p: &IssuePayload,
    ) -> Result<Step<IssuePayload>, ExecError> {
        match run.client()?.create_card(&p.card).await {
            Ok(card) => {
                run.progress.card_id = Some(card.id.to_string());
                run.save("issued", &format!("card {}", card.id)).await?;
                Ok(Step::Done(format!(
                    "Card issued for {} with {} USD; it is being provisioned.",
                    p.customer_label,
                    p.card.amount.display()
                )))
            }
            Err(ApiError::OutcomeUnknown { .. }) | Err(ApiError::Unavailable(_)) => {
                run.note("issue unconfirmed", "asking again with the same reference")
                    .await?;
                Ok(Step::Again(Duration::from_secs(2)))
            }
            Err(e) => Err(e.into()),
        }
    }
}

// --- Fund and withdraw -------------------------------------------------------

pub struct FundingAction;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FundingPayload {
    pub card_id: String,
    pub card_name: String,
    pub last_four: String,
    pub direction: BalanceDirection,
    pub amount: MicroUnits,
}

impl FundingPayload {
    /// What the USDT wallet gives (funding) or gets (withdrawing).
    pub fn wallet_effect(&self) -> MicroUnits {
        let fee = funding_fee(self.amount).value();
        match self.direction {
            BalanceDirection::Fund => MicroUnits(self.amount.value() + fee),
            BalanceDirection::Withdraw => MicroUnits(self.amount.value() - fee),
        }
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct FundingProgress {
    pub transaction_id: Option<String>,
}

impl Action for FundingAction {
    type Payload = FundingPayload;
    type Progress = FundingProgress;

    const KIND: Kind = Kind {
        key: "card_funding",
        label: "Card funding and withdrawals",
        read_permission: Permission::CardsRead,
        request_permission: Permission::CardsManage,
        approve_permission: CARD_MONEY,
    };

    fn default_policy(&self) -> Policy {
        Policy::at_once_up_to(Decimal::from(1000))
    }

    fn describe(&self, p: &FundingPayload) -> Vec<Fact> {
        let card = Fact::linked(
            "Card",
            card_label(&p.card_name, &p.last_four),
            format!("/cards/{}", p.card_id),
        );
        let fee = Fact::new("Fee", format!("{} USD (1%)", funding_fee(p.amount).display()));
        match p.direction {
            BalanceDirection::Fund => vec![
                Fact::new("Fund", format!("{} USD onto the card", p.amount.display())),
                card,
                fee,
                Fact::new(
                    "Debited from the USDT wallet",
                    format!("{} USDT", p.wallet_effect().display()),
                ),
            ],
            BalanceDirection::Withdraw => vec![
                Fact::new("Withdraw", format!("{} USD from the card", p.amount.display())),
                card,
                fee,
                Fact::new(
                    "Credited to the USDT wallet",
                    format!("{} USDT", p.wallet_effect().display()),
                ),
            ],
        }
    }

    async fn execute(
        &self,
        run: &mut Run<'_, FundingProgress>,
        p: &FundingPayload,
    ) -> Result<Step<FundingPayload>, ExecError> {
        let body = BalanceChange {
            amount: p.amount,
            direction: p.direction,
            reference: run.reference().to_owned(),
        };
        match run.client()?.change_card_balance(&p.card_id, &body).await {
            Ok(answer) => {
                run.progress.transaction_id = Some(answer.transaction.id.to_string());
                run.save("accepted", &format!("card transaction {}", answer.transaction.id))
                    .await?;
                let verb = match p.direction {
                    BalanceDirection::Fund => "funded with",
                    BalanceDirection::Withdraw => "withdrawn from:",
                };
                Ok(Step::Done(format!(
                    "Card ····{} {verb} {} USD; the card shows it once the transfer completes.",
                    p.last_four,
                    p.amount.display()
                )))
            }
            Err(ApiError::OutcomeUnknown { .. }) | Err(ApiError::Unavailable(_)) => {
                run.note("transfer unconfirmed", "asking again with the same reference")
                    .await?;
                Ok(Step::Again(Duration::from_secs(2)))
            }
            Err(e) => Err(e.into()),
        }
    }
}

// --- Freeze and unfreeze -----------------------------------------------------

pub struct StatusAction;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StatusPayload {
    pub card_id: String,
    pub card_name: String,
    pub last_four: String,
    /// `Frozen` or `Active`.
    pub status: CardState,
    /// The card's balance when filed: unfreezing makes it spendable again.
    pub balance: MicroUnits,
}

impl StatusPayload {
    /// What the policy weighs: nothing for a freeze (it only protects),
    /// the balance it makes spendable again for an unfreeze.
    pub fn at_stake(&self) -> Decimal {
        if self.status == CardState::Frozen {
            Decimal::ZERO
        } else {
            usd(self.balance)
        }
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct StatusProgress {}

impl Action for StatusAction {
    type Payload = StatusPayload;
    type Progress = StatusProgress;

    const KIND: Kind = Kind {
        key: "card_status",
        label: "Card freezes and unfreezes",
        read_permission: Permission::CardsRead,
        request_permission: Permission::CardsManage,
        approve_permission: CARD_MONEY,
    };

    /// A freeze (nothing at stake) always runs at once; unfreezing a card
    /// holding more than 1,000 USD waits for an approval.
    fn default_policy(&self) -> Policy {
        Policy::at_once_up_to(Decimal::from(1000))
    }

    fn describe(&self, p: &StatusPayload) -> Vec<Fact> {
        let what = if p.status == CardState::Frozen {
            "Freeze"
        } else {
            "Unfreeze"
        };
        vec![
            Fact::linked(
                what,
                card_label(&p.card_name, &p.last_four),
                format!("/cards/{}", p.card_id),
            ),
            Fact::new("Balance on the card", format!("{} USD", p.balance.display())),
        ]
    }

    async fn execute(
        &self,
        run: &mut Run<'_, StatusProgress>,
        p: &StatusPayload,
    ) -> Result<Step<StatusPayload>, ExecError> {
        // Setting the status a card already has changes nothing, so a
        // repeated run is harmless.
        let card = run.client()?.set_card_status(&p.card_id, &p.status).await?;
        Ok(Step::Done(format!(
            "Card ····{} is {}.",
            p.last_four, card.status
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fee_is_one_percent_rounded_up_and_shown_before_confirming() {
        assert_eq!(funding_fee(MicroUnits(25_000_000)), MicroUnits(250_000));
        assert_eq!(funding_fee(MicroUnits(1)), MicroUnits(1));
        let fund = FundingPayload {
            card_id: "c".into(),
            card_name: "Ops".into(),
            last_four: "1234".into(),
            direction: BalanceDirection::Fund,
            amount: MicroUnits(25_000_000),
        };
        assert_eq!(fund.wallet_effect(), MicroUnits(25_250_000));
        let facts = FundingAction.describe(&fund);
        assert!(
            facts
                .iter()
                .any(|f| f.value == "25.250000 USDT" || f.value == "25.25 USDT"),
            "{facts:?}"
        );
        let withdraw = FundingPayload {
            direction: BalanceDirection::Withdraw,
            ..fund
        };
        assert_eq!(withdraw.wallet_effect(), MicroUnits(24_750_000));
    }

    #[test]
    fn a_freeze_never_waits_and_a_large_unfreeze_does() {
        let policy = StatusAction.default_policy();
        let weigh = |p: &StatusPayload| {
            policy
                .require(&crate::approvals::Weighed {
                    value: p.at_stake(),
                    currency: "USD".into(),
                    ..Default::default()
                })
                .approvals
        };
        let mut p = StatusPayload {
            card_id: "c".into(),
            card_name: "Ops".into(),
            last_four: "1234".into(),
            status: "frozen".into(),
            balance: MicroUnits(5_000_000_000),
        };
        assert_eq!(weigh(&p), 0);
        p.status = "active".into();
        assert_eq!(weigh(&p), 1);
        p.balance = MicroUnits(10_000_000);
        assert_eq!(weigh(&p), 0);
    }
}
