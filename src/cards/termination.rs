//! Card termination as a kind of the approval gate. DELETE carries no
//! reference, so the card is read first: one found terminated was
//! terminated by an earlier run whose answer was lost, and is not
//! terminated again.

use std::time::Duration;

use paydesk_api::models::cards::CardState;
use paydesk_api::ApiError;
use serde::{Deserialize, Serialize};

use crate::access::permissions::Permission;
use crate::approvals::Kind;
use crate::approvals::{Action, ExecError, Fact, Run, Step};

pub struct TerminationAction;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TerminationPayload {
    pub card_id: String,
    pub reason: String,
    pub last_four: String,
    pub card_name: String,
}

/// Nothing to remember between runs: the card itself says whether it is
/// terminated.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct TerminationProgress {}

impl Action for TerminationAction {
    type Payload = TerminationPayload;
    type Progress = TerminationProgress;

    const KIND: Kind = Kind {
        key: "card_termination",
        label: "Card terminations",
        read_permission: Permission::CardsRead,
        request_permission: Permission::CardsTerminateRequest,
        approve_permission: Permission::CardsTerminateApprove,
    };

    fn describe(&self, t: &TerminationPayload) -> Vec<Fact> {
        vec![
            Fact::linked(
                "Terminate",
                format!("{} ····{}", t.card_name, t.last_four),
                format!("/cards/{}", t.card_id),
            ),
            Fact::new("Reason", t.reason.clone()),
            Fact::new(
                "Afterwards",
                "The card can't be used again; its remaining balance returns to the USDT wallet.",
            ),
        ]
    }

    async fn execute(
        &self,
        run: &mut Run<'_, TerminationProgress>,
        t: &TerminationPayload,
    ) -> Result<Step<TerminationPayload>, ExecError> {
        let card = run.client()?.card(&t.card_id).await?;
        if card.status == CardState::Terminated {
            return Ok(Step::Done(format!("Card ····{} is terminated.", t.last_four)));
        }
        match run.client()?.terminate_card(&t.card_id, &t.reason).await {
            Ok(done) => Ok(Step::Done(format!(
                "Card ····{} terminated; {} USD returned to the wallet.",
                t.last_four,
                done.remaining_balance.display()
            ))),
            Err(ApiError::OutcomeUnknown { .. }) | Err(ApiError::Unavailable(_)) => {
                run.note("termination unconfirmed", "reading the card back")
                    .await?;
                Ok(Step::Again(Duration::from_secs(2)))
            }
            Err(e) => Err(e.into()),
        }
    }
}
