//! An order as a kind of the approval gate. Approvers approve a price; a
//! quote lives 30 seconds, so one that ran out by the time the order runs
//! is replaced by a fresh one, and a price that moved beyond the policy's
//! tolerance sends the request back to the approvers, as payouts do. The
//! order carries the reference fixed at filing, so a retry places it once.

use std::time::Duration;

use chrono::Utc;
use paydesk_api::models::trading::{OrderRequest, OrderStatus, Quote, QuoteRequest};
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::access::permissions::Permission;
use crate::approvals::{Action, ExecError, Fact, Run, Step};
use crate::approvals::{Kind, Policy};

pub struct OrderAction;

/// The order as approved.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct OrderPayload {
    pub base_currency: String,
    pub quote_currency: String,
    /// `buy` or `sell`, relative to the base.
    pub side: String,
    /// Of the base, in whole units.
    pub quantity: Decimal,
    /// Quote currency per unit of base, as approved.
    pub price: Decimal,
    /// The quote the price came from.
    pub quote_id: Uuid,
}

impl OrderPayload {
    pub fn from_quote(q: &Quote) -> Self {
        OrderPayload {
            base_currency: q.base_currency.clone(),
            quote_currency: q.quote_currency.clone(),
            side: q.side.to_lowercase(),
            quantity: q.quantity,
            price: q.price,
            quote_id: q.id,
        }
    }

    /// What the order is worth in the quote currency.
    pub fn notional(&self) -> Decimal {
        self.quantity * self.price
    }

    pub fn summary(&self) -> String {
        let verb = if self.side == "sell" { "Sell" } else { "Buy" };
        format!(
            "{verb} {} {} at {} {} ({} {})",
            self.quantity,
            self.base_currency,
            self.price,
            self.quote_currency,
            self.notional().round_dp(8).normalize(),
            self.quote_currency
        )
    }
}

/// What execution has done so far.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct OrderProgress {
    /// The quote the order is placed on (a fresh one when the approved ran out).
    pub quote_id: Option<Uuid>,
    pub order_id: Option<Uuid>,
}

impl Action for OrderAction {
    type Payload = OrderPayload;
    type Progress = OrderProgress;

    const KIND: Kind = Kind {
        key: "trade",
        label: "Trades",
        read_permission: Permission::TradingRead,
        request_permission: Permission::TradingRequest,
        approve_permission: Permission::TradingApprove,
    };

    fn default_policy(&self) -> Policy {
        Policy::at_once_up_to(Decimal::from(1000))
    }

    fn describe(&self, p: &OrderPayload) -> Vec<Fact> {
        let (send, receive) = if p.side == "sell" {
            (
                format!("{} {}", p.quantity, p.base_currency),
                format!(
                    "about {} {}",
                    p.notional().round_dp(8).normalize(),
                    p.quote_currency
                ),
            )
        } else {
            (
                format!(
                    "about {} {}",
                    p.notional().round_dp(8).normalize(),
                    p.quote_currency
                ),
                format!("{} {}", p.quantity, p.base_currency),
            )
        };
        vec![
            Fact::new("Order", format!("{} {}/{}", p.side, p.base_currency, p.quote_currency)),
            Fact::new("Send", send),
            Fact::new("Receive", receive),
            Fact::new(
                "Price",
                format!(
                    "{} {} per {} (re-quoted if the quote ran out; a move beyond the policy's tolerance comes back for approval)",
                    p.price, p.quote_currency, p.base_currency
                ),
            ),
        ]
    }

    async fn execute(
        &self,
        run: &mut Run<'_, OrderProgress>,
        p: &OrderPayload,
    ) -> Result<Step<OrderPayload>, ExecError> {
        if let Some(order_id) = run.progress.order_id {
            let order = run.client()?.order(&order_id.to_string()).await?;
            return Ok(Step::Done(format!("Order {} is {}.", order.id, order.status)));
        }
        let quote_id = run.progress.quote_id.unwrap_or(p.quote_id);
        let quote = run.client()?.trading_quote(&quote_id.to_string()).await?;
        let quote = if quote.is_expired || quote.is_exhausted || quote.expires_at <= Utc::now() {
            let fresh = run
                .client()?
                .create_trading_quote(&QuoteRequest {
                    base_currency: p.base_currency.clone(),
                    quote_currency: p.quote_currency.clone(),
                    side: p.side.clone(),
                    quantity: p.quantity,
                })
                .await?;
            if run.policy.rate_moved_too_far(p.price, fresh.price) {
                let why = format!(
                    "the price moved from {} to {} {}",
                    p.price, fresh.price, p.quote_currency
                );
                let payload = OrderPayload::from_quote(&fresh);
                return Ok(Step::SendBack { payload, why });
            }
            run.progress.quote_id = Some(fresh.id);
            run.save(
                "re-quoted",
                &format!(
                    "{} {} per {}",
                    fresh.price, fresh.quote_currency, fresh.base_currency
                ),
            )
            .await?;
            fresh
        } else {
            quote
        };
        let placed = run
            .client()?
            .create_order(&OrderRequest {
                base_currency: p.base_currency.clone(),
                quote_currency: p.quote_currency.clone(),
                side: p.side.clone(),
                quantity: p.quantity,
                quote_id: quote.id,
                reference: Some(run.reference().to_owned()),
                ..Default::default()
            })
            .await;
        let order = match placed {
            Ok(order) => order,
            // Ran out between the check and the order: the next run re-quotes.
            Err(e) if matches!(e.code(), Some("QUOTE_EXPIRED" | "QUOTE_EXHAUSTED")) => {
                return Ok(Step::Again(Duration::from_secs(1)))
            }
            Err(e) => return Err(e.into()),
        };
        run.progress.order_id = Some(order.id);
        run.save("placed", &format!("order {}", order.id)).await?;
        Ok(Step::Done(format!(
            "Order placed: {} {} {} at {} {}, {}.",
            order.side.to_lowercase(),
            order.quantity,
            order.base_currency,
            order.price,
            order.quote_currency,
            order.status
        )))
    }
}

/// Cancelling a resting order: it moves no money out (what the order
/// held is released), so by default it runs at once; it goes through the
/// gate like every change to an order, so a policy can still ask for an
/// approval and the audit trail is the gate's.
pub struct CancelAction;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CancelPayload {
    pub order_id: Uuid,
    /// The order as it stood when the cancel was asked for.
    pub order: String,
}

/// A cancel keeps no progress: reading the order back tells it all.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct CancelProgress {}

impl Action for CancelAction {
    type Payload = CancelPayload;
    type Progress = CancelProgress;

    const KIND: Kind = Kind {
        key: "trade_cancel",
        label: "Order cancellations",
        read_permission: Permission::TradingRead,
        request_permission: Permission::TradingRequest,
        approve_permission: Permission::TradingApprove,
    };

    fn default_policy(&self) -> Policy {
        Policy::at_once()
    }

    fn describe(&self, p: &CancelPayload) -> Vec<Fact> {
        vec![
            Fact::linked(
                "Order",
                p.order.clone(),
                format!("/trading/orders/{}", p.order_id),
            ),
            Fact::new(
                "Effect",
                "the unfilled part leaves the book and what it held is released; fills stay",
            ),
        ]
    }

    async fn execute(
        &self,
        run: &mut Run<'_, CancelProgress>,
        p: &CancelPayload,
    ) -> Result<Step<CancelPayload>, ExecError> {
        let client = run.client()?;
        let order = client.order(&p.order_id.to_string()).await?;
        if order.status != OrderStatus::Pending {
            return Ok(Step::Done(format!(
                "The order was already {}; nothing to cancel.",
                order.status
            )));
        }
        let cancelled = client.cancel_order(&p.order_id.to_string()).await?;
        Ok(Step::Done(format!(
            "Order cancelled: {} filled, {} unfilled released.",
            cancelled.filled_quantity, cancelled.remaining_quantity
        )))
    }
}
