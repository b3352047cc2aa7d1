//! Target orders: buy when the market falls to a price, or sell when it
//! rises to one. The escrow is locked when the order is created and
//! released on cancel, expiry or the final fill, so creating one goes
//! through the gate with the escrow in what is approved; cancelling goes
//! through it too (at once by default: it only releases money).

use chrono::{DateTime, NaiveDateTime, Utc};
use paydesk_api::models::trading::{NewTargetOrder, TargetOrder, TargetOrderStatus};
use paydesk_api::units::Currency;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::spot::pairs;
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::approvals::Filing;
use crate::approvals::{gate, Gated};
use crate::approvals::{Action, ExecError, Fact, Run, Step};
use crate::approvals::{Kind, Policy};
use crate::state::AppState;
use crate::web::amount;
use crate::web::form::{Failure, Refusal};

/// The target order as typed.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
pub struct TargetForm {
    #[serde(default)]
    pub pair: String,
    #[serde(default)]
    pub side: String,
    #[serde(default)]
    pub quantity: String,
    #[serde(default)]
    pub target_price: String,
    /// `YYYY-MM-DDTHH:MM` (UTC), or empty for no expiry.
    #[serde(default)]
    pub expires_at: String,
    /// Fixed when the form is shown, so a double submit files once.
    #[serde(default)]
    pub reference: String,
}

fn field(name: &'static str, message: impl Into<String>) -> Failure {
    Refusal::field(name, message).into()
}

/// The fee on a target order's fill: 0.5% of the notional
/// (sandbox-rules.md); a buy locks it with the notional, a sell pays it
/// from its proceeds.
const FEE_PER_MILLE: i64 = 5;

/// What creating the order locks: notional and fee in the quote currency
/// for a buy, the quantity of the base for a sell.
pub fn escrow(order: &NewTargetOrder) -> (Decimal, String) {
    if order.side == "buy" {
        let notional = order.quantity * order.target_price;
        let locked = notional + notional * Decimal::new(FEE_PER_MILLE, 3);
        (locked.normalize(), order.quote_currency.clone())
    } else {
        (order.quantity, order.base_currency.clone())
    }
}

/// The order to create, every field checked.
async fn check(
    client: &paydesk_api::Client,
    form: &TargetForm,
    now: DateTime<Utc>,
) -> Result<NewTargetOrder, Failure> {
    if !pairs(client, false).await?.contains(&form.pair) {
        return Err(field("pair", "Choose one of the pairs the service trades."));
    }
    let (base, quote) = form.pair.split_once('/').unwrap_or_default();
    if !matches!(form.side.as_str(), "buy" | "sell") {
        return Err(field("side", "Choose buy or sell."));
    }
    let decimals = |code: &str| Currency::parse(code).ok().and_then(|c| c.decimals()).unwrap_or(8);
    let quantity = amount::parse("The quantity", &form.quantity, base, decimals(base))
        .map_err(|m| field("quantity", m))?;
    let target_price = amount::parse(
        "The target price",
        &form.target_price,
        quote,
        decimals(quote).max(8),
    )
    .map_err(|m| field("target_price", m))?;
    let expires_at = match form.expires_at.trim() {
        "" => String::new(),
        text => match NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M") {
            Ok(t) if t.and_utc() > now => t.and_utc().to_rfc3339(),
            Ok(_) => {
                return Err(field(
                    "expires_at",
                    "Choose an expiry in the future, or leave it empty.",
                ))
            }
            Err(_) => {
                return Err(field(
                    "expires_at",
                    "Enter the expiry as a date and time (UTC), or leave it empty.",
                ))
            }
        },
    };
    if Uuid::parse_str(form.reference.trim_start_matches("paydesk-target-")).is_err() {
        return Err(Refusal::form("This form is incomplete; reload the page and try again.").into());
    }
    Ok(NewTargetOrder {
        base_currency: base.to_owned(),
        quote_currency: quote.to_owned(),
        side: form.side.clone(),
        quantity,
        target_price,
        expires_at,
        reference: form.reference.clone(),
    })
}

pub struct TargetAction;

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct TargetProgress {
    pub order_id: Option<Uuid>,
}

impl Action for TargetAction {
    type Payload = NewTargetOrder;
    type Progress = TargetProgress;

    const KIND: Kind = Kind {
        key: "trade_target",
        label: "Target orders",
        read_permission: Permission::TradingRead,
        request_permission: Permission::TradingRequest,
        approve_permission: Permission::TradingApprove,
    };

    fn default_policy(&self) -> Policy {
        Policy::at_once_up_to(Decimal::from(1000))
    }

    fn describe(&self, o: &NewTargetOrder) -> Vec<Fact> {
        let (locked, currency) = escrow(o);
        let when = if o.side == "buy" {
            "at or below"
        } else {
            "at or above"
        };
        vec![
            Fact::new("Order", format!("{} {} {}", o.side, o.quantity, o.base_currency)),
            Fact::new("Fires", format!("when the price is {when} {} {}", o.target_price, o.quote_currency)),
            Fact::new(
                "Locks now",
                format!("about {locked} {currency} (the 0.5% fee included), released on cancel, expiry or the final fill"),
            ),
            Fact::new("Expires", if o.expires_at.is_empty() { "never".to_owned() } else { o.expires_at.clone() }),
        ]
    }

    async fn execute(
        &self,
        run: &mut Run<'_, TargetProgress>,
        o: &NewTargetOrder,
    ) -> Result<Step<NewTargetOrder>, ExecError> {
        // Idempotent by its reference: a lost answer is safe to ask again.
        let created = run.client()?.create_target_order(o).await?;
        run.progress.order_id = Some(created.id);
        run.save("created", &format!("target order {}", created.id))
            .await?;
        Ok(Step::Done(format!(
            "Target order created; {} {} locked.",
            created.locked_amount, created.locked_currency
        )))
    }
}

/// Files a target order through the gate: previewed (with its escrow)
/// until confirmed.
#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id))]
pub async fn create(
    state: &AppState,
    member: &Member,
    form: &TargetForm,
    confirmed: bool,
) -> Result<Gated, Failure> {
    let client = state.client_for(member, Permission::TradingRequest).await?;
    let order = check(&client, form, Utc::now()).await?;
    let notional = order.quantity * order.target_price;
    let summary = format!(
        "Target order: {} {} {} at {} {}",
        order.side, order.quantity, order.base_currency, order.target_price, order.quote_currency
    );
    let filing = Filing {
        target: &order.reference.clone(),
        summary: &summary,
        amount: notional,
        currency: &order.quote_currency.clone(),
        reference: Some(order.reference.clone()),
        payload: order,
        payee_saved_at: None,
    };
    gate::<TargetAction>(state, member, filing, confirmed).await
}

pub struct TargetCancelAction;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TargetCancel {
    pub order_id: Uuid,
    pub order: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct TargetCancelProgress {}

impl Action for TargetCancelAction {
    type Payload = TargetCancel;
    type Progress = TargetCancelProgress;

    const KIND: Kind = Kind {
        key: "trade_target_cancel",
        label: "Target order cancellations",
        read_permission: Permission::TradingRead,
        request_permission: Permission::TradingRequest,
        approve_permission: Permission::TradingApprove,
    };

    fn default_policy(&self) -> Policy {
        Policy::at_once()
    }

    fn describe(&self, c: &TargetCancel) -> Vec<Fact> {
        vec![
            Fact::linked(
                "Target order",
                c.order.clone(),
                format!("/trading/targets/{}", c.order_id),
            ),
            Fact::new(
                "Effect",
                "the unfilled part is withdrawn and what it still locks is released; fills stay",
            ),
        ]
    }

    async fn execute(
        &self,
        run: &mut Run<'_, TargetCancelProgress>,
        c: &TargetCancel,
    ) -> Result<Step<TargetCancel>, ExecError> {
        let client = run.client()?;
        let order = client.target_order(&c.order_id.to_string()).await?;
        if !is_open(&order) {
            return Ok(Step::Done(format!(
                "The order was already {}; nothing to cancel.",
                order.status
            )));
        }
        let cancelled = client.cancel_target_order(&c.order_id.to_string()).await?;
        Ok(Step::Done(format!(
            "Cancelled; {} {} released.",
            order.remaining_locked, cancelled.locked_currency
        )))
    }
}

/// Whether the order still waits for its price or fills: the statuses a
/// cancel applies to.
pub fn is_open(order: &TargetOrder) -> bool {
    matches!(
        order.status,
        TargetOrderStatus::Active | TargetOrderStatus::Triggered
    )
}

/// Cancels an active target order through the gate.
#[tracing::instrument(skip_all, fields(tenant = %member.tenant_id, order = %order.id))]
pub async fn cancel(
    state: &AppState,
    member: &Member,
    order: &TargetOrder,
    confirmed: bool,
) -> Result<Gated, Failure> {
    if !is_open(order) {
        return Err(Refusal::form(format!(
            "This order is {}; only an active one can be cancelled.",
            order.status
        ))
        .into());
    }
    let words = format!(
        "{} {} {} at {} {}",
        order.side, order.quantity, order.base_currency, order.target_price, order.quote_currency
    );
    let summary = format!("Cancel the target order to {words}");
    let target = format!("target:{}", order.id);
    let filing = Filing {
        target: &target,
        summary: &summary,
        amount: Decimal::ZERO,
        currency: &order.quote_currency,
        reference: None,
        payload: TargetCancel {
            order_id: order.id,
            order: words,
        },
        payee_saved_at: None,
    };
    gate::<TargetCancelAction>(state, member, filing, confirmed).await
}
