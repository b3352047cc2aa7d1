use actix_web::web::{self, Data, Form, Path};
use actix_web::HttpResponse;
use askama::Template;
use chrono::{DateTime, Utc};
use paydesk_api::models::addresses::AddressQuery;
use paydesk_api::models::control::{AddWebhookFault, JournalEntry, WebhookDelivery};
use paydesk_api::models::trading::Price;
use serde::Deserialize;
use serde_json::json;

use super::controls::{self, DepositForm, FaultForm, PayerForm, PriceForm};
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::area::Area;
use crate::audit;
use crate::audit::Event;
use crate::state::AppState;
use crate::web::error::{describe_upstream, PortalError};
use crate::web::form::{split, Failure, FieldErrors};
use crate::web::menu::{MenuEntry, MenuGroup, ShownTo};
use crate::web::page::{done, ok, unprocessable, Shell};

/// Moving the clock acts on the whole sandbox, so it is an admin's tool.
const PERMISSION: Permission = Permission::ConnectionsManage;

/// The steps offered: (seconds, label).
/// What a simulated deposit can be in.
const DEPOSIT_CURRENCIES: &[&str] = &["USDT", "USDC", "BTC"];

const STEPS: &[(u64, &str)] = &[
    (60, "1 minute"),
    (3_600, "1 hour"),
    (86_400, "1 day"),
    (7 * 86_400, "1 week"),
];

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/sandbox-tools", web::get().to(page))
        .route("/sandbox-tools/advance", web::post().to(advance))
        .route("/sandbox-tools/prices", web::post().to(set_price))
        .route("/sandbox-tools/deposits", web::post().to(deposit))
        .route("/sandbox-tools/faults", web::post().to(arm_call_fault))
        .route(
            "/sandbox-tools/webhook-faults",
            web::post().to(arm_delivery_fault),
        )
        .route("/sandbox-tools/faults/clear", web::post().to(clear_faults))
        .route("/sandbox-tools/invoices/pay", web::post().to(pay_invoice))
        .route("/sandbox-tools/deliveries/{id}/resend", web::post().to(resend));
}

/// Whether the member is offered the tools: a sandbox connection and the
/// permission.
pub fn offered(member: &Member) -> bool {
    member.environment.as_deref() == Some("sandbox") && member.can(PERMISSION)
}

fn require(member: &Member) -> Result<(), PortalError> {
    member.require(PERMISSION)?;
    if member.environment.as_deref() != Some("sandbox") {
        return Err(PortalError::NotFound(
            "sandbox tools exist only for tenants connected to a sandbox".to_owned(),
        ));
    }
    Ok(())
}

/// The sandbox's client, for a member the tools are offered to.
async fn tools(state: &AppState, member: &Member) -> Result<paydesk_api::Client, PortalError> {
    require(member)?;
    state.client_for(member, PERMISSION).await
}

#[derive(Template)]
#[template(path = "sandbox_tools/page.html")]
struct Page {
    shell: Shell,
    now: Result<DateTime<Utc>, String>,
    steps: &'static [(u64, &'static str)],
    /// The sandbox's journal of this company's calls, newest first.
    calls: Result<Vec<Call>, String>,
    calls_shown: u32,
    deliveries: Result<Vec<WebhookDelivery>, String>,
    /// The market, for setting a price.
    prices: Result<Vec<Price>, String>,
    /// The company's addresses (chain, address), for a deposit.
    addresses: Vec<(String, String)>,
    currencies: &'static [&'static str],
    call_faults: &'static [(&'static str, &'static str)],
    delivery_faults: &'static [(&'static str, &'static str)],
    /// The delivery faults still armed (what the sandbox lists).
    armed_deliveries: Vec<AddWebhookFault>,
    errors: FieldErrors,
}

/// A journal entry with its bodies laid out for reading.
pub struct Call {
    entry: JournalEntry,
    request_body: String,
    response_body: String,
}

/// How many calls the page shows.
const CALLS_SHOWN: u32 = 50;

fn pretty(body: &serde_json::Value) -> String {
    if body.is_null() {
        String::new()
    } else {
        serde_json::to_string_pretty(body).unwrap_or_default()
    }
}

async fn render(state: &AppState, member: &Member, errors: FieldErrors) -> Result<String, PortalError> {
    let client = state.client_for(member, PERMISSION).await?;
    let readable = |e: paydesk_api::ApiError| describe_upstream(&e).0;
    let calls = client
        .sandbox_requests(Some(CALLS_SHOWN))
        .await
        .map_err(readable)
        .map(|j| {
            let call = |entry: JournalEntry| Call {
                request_body: pretty(&entry.request_body),
                response_body: pretty(&entry.response_body),
                entry,
            };
            j.requests.into_iter().map(call).collect()
        });
    let addresses = client
        .list_addresses(&AddressQuery::default())
        .await
        .map(|p| p.addresses)
        .unwrap_or_default();
    Ok(Page {
        shell: Shell::new(member, "/sandbox-tools"),
        now: client.sandbox_clock().await.map(|c| c.now).map_err(readable),
        steps: STEPS,
        calls,
        calls_shown: CALLS_SHOWN,
        deliveries: client
            .sandbox_webhook_deliveries()
            .await
            .map(|d| d.deliveries)
            .map_err(readable),
        prices: client.trading_prices().await.map(|p| p.prices).map_err(readable),
        addresses: addresses.into_iter().map(|a| (a.chain, a.address)).collect(),
        currencies: DEPOSIT_CURRENCIES,
        call_faults: controls::CALL_FAULTS,
        delivery_faults: controls::DELIVERY_FAULTS,
        armed_deliveries: client
            .sandbox_webhook_faults()
            .await
            .map(|f| f.faults)
            .unwrap_or_default(),
        errors,
    }
    .render()?)
}

async fn page(state: Data<AppState>, member: Member) -> Result<HttpResponse, PortalError> {
    require(&member)?;
    Ok(ok(render(&state, &member, FieldErrors::default()).await?))
}

/// Back to the tools with the notice, or the page again with what was
/// refused (422).
async fn after(
    state: &AppState,
    member: &Member,
    result: Result<String, Failure>,
) -> Result<HttpResponse, PortalError> {
    match split(result)? {
        Ok(notice) => Ok(done("/sandbox-tools", notice)),
        Err(refusal) => Ok(unprocessable(render(state, member, refusal.into()).await?)),
    }
}

async fn set_price(
    state: Data<AppState>,
    member: Member,
    form: Form<PriceForm>,
) -> Result<HttpResponse, PortalError> {
    let client = tools(&state, &member).await?;
    let result = controls::set_price(&state, &member, &client, &form).await;
    after(&state, &member, result).await
}

async fn deposit(
    state: Data<AppState>,
    member: Member,
    form: Form<DepositForm>,
) -> Result<HttpResponse, PortalError> {
    let client = tools(&state, &member).await?;
    let result = controls::deposit(&state, &member, &client, &form).await;
    after(&state, &member, result).await
}

async fn arm_call_fault(
    state: Data<AppState>,
    member: Member,
    form: Form<FaultForm>,
) -> Result<HttpResponse, PortalError> {
    let client = tools(&state, &member).await?;
    let result = controls::arm_call_fault(&state, &member, &client, &form).await;
    after(&state, &member, result).await
}

async fn arm_delivery_fault(
    state: Data<AppState>,
    member: Member,
    form: Form<FaultForm>,
) -> Result<HttpResponse, PortalError> {
    let client = tools(&state, &member).await?;
    let result = controls::arm_delivery_fault(&state, &member, &client, &form).await;
    after(&state, &member, result).await
}

async fn clear_faults(state: Data<AppState>, member: Member) -> Result<HttpResponse, PortalError> {
    let client = tools(&state, &member).await?;
    let result = controls::clear_faults(&state, &member, &client).await;
    after(&state, &member, result).await
}

async fn pay_invoice(
    state: Data<AppState>,
    member: Member,
    form: Form<PayerForm>,
) -> Result<HttpResponse, PortalError> {
    let client = tools(&state, &member).await?;
    let result = controls::pay_invoice(&state, &member, &client, &form).await;
    after(&state, &member, result).await
}

#[derive(Debug, Deserialize)]
pub struct AdvanceForm {
    seconds: u64,
}

async fn advance(
    state: Data<AppState>,
    member: Member,
    form: Form<AdvanceForm>,
) -> Result<HttpResponse, PortalError> {
    let client = tools(&state, &member).await?;
    if !STEPS.iter().any(|(s, _)| *s == form.seconds) {
        return Err(PortalError::BadRequest(
            "choose one of the offered steps".to_owned(),
        ));
    }
    let moved = client.sandbox_advance_clock(form.seconds).await?;
    audit::member_did(
        &state.pool,
        &member,
        Event::SandboxClockAdvanced,
        "sandbox:clock",
        json!({"seconds": form.seconds, "now": moved.now}),
    )
    .await?;
    let label = STEPS
        .iter()
        .find(|(secs, _)| *secs == form.seconds)
        .map_or("", |(_, label)| label);
    Ok(done(
        "/sandbox-tools",
        format!("The sandbox clock moved forward {label}; everything that fell due has run."),
    ))
}

/// Sends a webhook delivery again, as the provider's dashboard would.
async fn resend(state: Data<AppState>, member: Member, id: Path<u64>) -> Result<HttpResponse, PortalError> {
    let client = tools(&state, &member).await?;
    let delivery = client.sandbox_resend_delivery(*id).await?;
    audit::member_did(
        &state.pool,
        &member,
        Event::SandboxDeliveryResent,
        format!("sandbox:delivery:{}", delivery.id),
        json!({"event": delivery.event, "event_id": delivery.event_id, "url": delivery.url}),
    )
    .await?;
    Ok(done(
        "/sandbox-tools",
        format!(
            "Delivery {} was sent again; its new attempt is listed below.",
            delivery.id
        ),
    ))
}

/// The sandbox's tools (clock, deposits, spends) on sandbox connections.
pub const AREA: Area = Area {
    routes: configure,
    menu: &[MenuEntry::new(
        MenuGroup::Developers,
        "/sandbox-tools",
        "Sandbox tools",
        ShownTo::When(offered),
    )],
    kinds: crate::area::no_kinds,
};
