//! A Lightning payment as a kind of the approval gate. Approvers approve
//! the request, its amount and a fee cap; the payment is sent once under
//! the request's reference (the service is idempotent by it), and an
//! unknown outcome is settled by sending again with that reference or
//! reading the payment back, never by paying twice.

use std::time::Duration;

use chrono::{TimeZone, Utc};
use paydesk_api::models::lightning::{PaymentStatus, SendPayment};
use paydesk_api::ApiError;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::access::permissions::Permission;
use crate::approvals::{Action, ExecError, Fact, Run, Step};
use crate::approvals::{Kind, Policy};
use crate::web::error::describe_upstream;

pub struct LightningPaymentAction;

/// The payment as approved.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LightningPaymentPayload {
    /// The BOLT11 request.
    pub request: String,
    pub payment_hash: String,
    /// The payee's node key.
    pub destination: String,
    pub amount_sat: i64,
    /// The most the routing fee may be; the payment aborts above it.
    pub max_fee_sat: i64,
    pub description: String,
    /// Unix seconds.
    pub expires_at: i64,
}

impl LightningPaymentPayload {
    pub fn summary(&self) -> String {
        format!(
            "Pay {} sats over Lightning to {} (fee at most {} sats)",
            self.amount_sat,
            short(&self.destination),
            self.max_fee_sat
        )
    }

    /// The most the payment can cost, in BTC.
    pub fn most_btc(&self) -> Decimal {
        btc(self.amount_sat + self.max_fee_sat)
    }
}

/// A node key, shortened for a sentence.
fn short(key: &str) -> String {
    match key.len() > 20 {
        true => format!("{}…{}", &key[..10], &key[key.len() - 6..]),
        false => key.to_owned(),
    }
}

/// What execution has done so far.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct LightningPaymentProgress {
    /// The payment the service recorded (its id reads it back).
    pub payment_id: Option<Uuid>,
}

impl Action for LightningPaymentAction {
    type Payload = LightningPaymentPayload;
    type Progress = LightningPaymentProgress;

    const KIND: Kind = Kind {
        key: "lightning_payment",
        label: "Lightning payments",
        read_permission: Permission::LightningRead,
        request_permission: Permission::LightningRequest,
        approve_permission: Permission::LightningApprove,
    };

    /// As trading: at once up to 1,000 in the reporting currency. No
    /// first-time rule by payee: a node key names a node, not a payee (one
    /// node serves many merchants; every invoice of the sandbox has one).
    fn default_policy(&self) -> Policy {
        Policy::at_once_up_to(Decimal::from(1000))
    }

    fn describe(&self, p: &LightningPaymentPayload) -> Vec<Fact> {
        let expires = Utc.timestamp_opt(p.expires_at, 0).single().map_or_else(
            || p.expires_at.to_string(),
            |t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
        );
        vec![
            Fact::new(
                "Amount",
                format!("{} sats ({} BTC)", p.amount_sat, btc(p.amount_sat)),
            ),
            Fact::new("Fee at most", format!("{} sats", p.max_fee_sat)),
            Fact::new("Payee node", p.destination.clone()),
            Fact::new("Description", p.description.clone()),
            Fact::new("Payment hash", p.payment_hash.clone()),
            Fact::new("Request expires", expires),
        ]
    }

    async fn execute(
        &self,
        run: &mut Run<'_, LightningPaymentProgress>,
        p: &LightningPaymentPayload,
    ) -> Result<Step<LightningPaymentPayload>, ExecError> {
        // Sent before: read it back until it settles.
        if let Some(id) = run.progress.payment_id {
            let payment = run.client()?.invoice(&id.to_string()).await?;
            // An outgoing payment read back as an invoice carries its
            // payment's status words.
            return Ok(settled(
                &PaymentStatus::from_wire(payment.status.as_str()),
                payment.amount_sat.0,
                payment.fee_sat.0,
                &payment.preimage,
            ));
        }
        if p.expires_at <= Utc::now().timestamp() {
            return Ok(Step::Failed(
                "The request expired before it was paid; nothing was sent.".to_owned(),
            ));
        }
        let body = SendPayment {
            request: p.request.clone(),
            reference: run.reference().to_owned(),
            // 0 would mean "no cap" to the service: never send it.
            max_fee: Some(p.max_fee_sat.max(1) as u64),
            ..Default::default()
        };
        let payment = match run.client()?.send_payment(&body).await {
            Ok(payment) => payment,
            // Lost answer: the next run sends again with the same
            // reference, which the service answers with the same payment.
            Err(ApiError::OutcomeUnknown { .. }) => return Ok(Step::Again(Duration::from_secs(5))),
            Err(e) if matches!(e.status(), Some(409 | 429)) => {
                return Ok(Step::Again(Duration::from_secs(5)))
            }
            Err(
                e @ ApiError::Problem {
                    status: 400..=499, ..
                },
            ) => return Ok(Step::Failed(describe_upstream(&e).0)),
            Err(e) => return Err(e.into()),
        };
        run.progress.payment_id = Some(payment.id);
        run.save("sent", &format!("payment {} {}", payment.id, payment.status))
            .await?;
        Ok(settled(
            &payment.status,
            payment.amount_sat.0,
            payment.fee_sat.0,
            &payment.preimage,
        ))
    }
}

/// The step a payment's status comes to.
fn settled(status: &PaymentStatus, amount: i64, fee: i64, preimage: &str) -> Step<LightningPaymentPayload> {
    match status {
        PaymentStatus::Paid => Step::Done(format!(
            "Paid {amount} sats over Lightning (fee {fee} sats); preimage {preimage}."
        )),
        PaymentStatus::Failed => Step::Failed(
            "The Lightning payment failed (no route reached the payee); nothing was debited.".to_owned(),
        ),
        _ => Step::Again(Duration::from_secs(10)),
    }
}

/// Sats as BTC (1 BTC = 100,000,000 sats), for the policy's weighing.
fn btc(sats: i64) -> Decimal {
    Decimal::new(sats, 8).normalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload() -> LightningPaymentPayload {
        LightningPaymentPayload {
            request: "lntbs1".into(),
            payment_hash: "ab".repeat(32),
            destination: format!("02{}", "cd".repeat(32)),
            amount_sat: 5_000_000,
            max_fee_sat: 5_001,
            description: "Supplier invoice".into(),
            expires_at: 1_900_000_000,
        }
    }

    #[test]
    fn the_policy_weighs_the_most_it_can_cost_in_btc() {
        assert_eq!(payload().most_btc(), Decimal::new(5_005_001, 8));
        assert!(payload().summary().contains("5000000 sats") && payload().summary().contains("5001 sats"));
    }

    #[test]
    fn the_fee_cap_is_in_what_approvers_approve() {
        let facts = LightningPaymentAction.describe(&payload());
        assert!(facts
            .iter()
            .any(|f| f.label == "Fee at most" && f.value == "5001 sats"));
        assert!(facts
            .iter()
            .any(|f| f.label == "Amount" && f.value == "5000000 sats (0.05 BTC)"));
    }

    #[test]
    fn a_status_comes_to_a_step() {
        assert!(
            matches!(settled(&PaymentStatus::Paid, 1, 1, "p"), Step::Done(s) if s.contains("preimage p"))
        );
        assert!(matches!(
            settled(&PaymentStatus::Failed, 1, 0, ""),
            Step::Failed(_)
        ));
        assert!(matches!(
            settled(&PaymentStatus::Pending, 1, 0, ""),
            Step::Again(_)
        ));
    }
}
