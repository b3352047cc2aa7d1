//! `/lightning`: invoices and payments with filters; creating an invoice
//! and watching it get paid; paying a request through the gate.

use actix_web::web::{self, Data, Form, Path, Query};
use actix_web::{HttpRequest, HttpResponse};
use askama::Template;
use chrono::Utc;
use futures_util::Stream;
use paydesk_api::models::lightning::{Invoice, InvoiceStatus};
use paydesk_api::{ApiError, Client};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::invoices::{self, InvoiceForm};
use super::payments::{self, Checked, PayForm};
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::approvals::ActionRequest;
use crate::approvals::{answer_gate, Submission};
use crate::area::Area;
use crate::audit;
use crate::state::AppState;
use crate::web::error::PortalError;
use crate::web::form::{split, FieldErrors, Refusal};
use crate::web::listing::{self, CsvRecord, Dates, Listing, Problem};
use crate::web::menu::{MenuEntry, MenuGroup, ShownTo};
use crate::web::page::{done, html, refused_or_ok, unprocessable, Shell};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/lightning", web::get().to(page))
        .route("/lightning/export.csv", web::get().to(export))
        .route("/lightning/invoices/new", web::get().to(new_invoice))
        .route("/lightning/invoices", web::post().to(create_invoice))
        .route("/lightning/invoices/{id}", web::get().to(invoice_page))
        .route("/lightning/invoices/{id}/live", web::get().to(live))
        .route("/lightning/pay", web::get().to(pay_form))
        .route("/lightning/pay/check", web::post().to(check))
        .route("/lightning/payments", web::post().to(pay));
}

const PAGE_SIZE: u32 = 25;

#[derive(Debug, Default, Deserialize, Serialize)]
pub struct Filters {
    /// `pending`, `paid`, `expired` or `failed`.
    #[serde(default)]
    status: String,
    /// `incoming` (invoices) or `outgoing` (payments).
    #[serde(default)]
    direction: String,
    #[serde(flatten)]
    dates: Dates,
    /// The page number of the service's list (1 when empty).
    #[serde(default)]
    cursor: String,
}

#[derive(Template)]
#[template(path = "lightning/rows.html")]
struct Rows {
    invoices: Vec<Invoice>,
    next: Option<String>,
}

#[derive(Template)]
#[template(path = "lightning/page.html")]
struct Page {
    shell: Shell,
    filters: Filters,
    rows: Rows,
    capped: bool,
    error: Problem,
    can_request: bool,
    export_query: String,
}

/// The service's page `page` (from 1) of `size` invoices and payments with
/// the status and direction filters, and the number of the next page.
async fn numbered(
    client: &Client,
    (status, direction): &(Option<String>, Option<String>),
    page: u32,
    size: u32,
) -> Result<(Vec<Invoice>, u64, Option<String>), ApiError> {
    let found = client
        .invoices(Some(page), Some(size), status.as_deref(), direction.as_deref())
        .await?;
    let total = found.total_count.parse::<u64>().unwrap_or(0);
    let next = (u64::from(page) * u64::from(size) < total).then(|| (page + 1).to_string());
    Ok((found.invoices, total, next))
}

impl Filters {
    fn service_filters(&self) -> (Option<String>, Option<String>) {
        let given = |s: &str| Some(s.to_owned()).filter(|s| !s.is_empty());
        (given(&self.status), given(&self.direction))
    }
}

/// Every invoice and payment of the filters (dates aside), newest first.
fn every(client: &Client, filters: &Filters) -> impl Stream<Item = Result<Invoice, ApiError>> + 'static {
    let (client, wanted) = (client.clone(), filters.service_filters());
    listing::all_pages(move |cursor| {
        let (client, wanted) = (client.clone(), wanted.clone());
        let page = cursor.and_then(|c| c.parse().ok()).unwrap_or(1);
        async move {
            let (rows, _, next) = numbered(&client, &wanted, page, 100).await?;
            Ok((rows, next))
        }
    })
}

/// The page the filters ask for (see `listing::page_or_range`).
async fn listed(client: &Client, filters: &Filters) -> Result<Listing<Invoice>, ApiError> {
    let page = async {
        let number = filters.cursor.parse::<u32>().unwrap_or(1).max(1);
        let (rows, total, next) = numbered(client, &filters.service_filters(), number, PAGE_SIZE).await?;
        Ok(Listing::new(rows, total, next.as_deref(), filters))
    };
    let all = every(client, filters);
    listing::page_or_range(filters.dates.range(), page, all, |i| i.created_at, filters).await
}

impl CsvRecord for Invoice {
    const HEADER: &'static [&'static str] = &[
        "created_at",
        "id",
        "direction",
        "status",
        "amount_sat",
        "fee_sat",
        "description",
        "payment_hash",
        "reference",
        "customer_id",
    ];

    fn fields(self) -> Vec<String> {
        vec![
            self.created_at.to_rfc3339(),
            self.id.to_string(),
            self.direction.clone(),
            self.status.to_string(),
            self.amount_sat.to_string(),
            self.fee_sat.to_string(),
            self.description.clone(),
            self.payment_hash.clone(),
            self.reference.clone(),
            self.customer_id.map(|c| c.to_string()).unwrap_or_default(),
        ]
    }
}

/// Streams every invoice and payment the filters match as CSV, on record.
async fn export(
    state: Data<AppState>,
    member: Member,
    filters: Query<Filters>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::LightningRead).await?;
    let rows = filters
        .dates
        .range()
        .within(every(&client, &filters), |i| i.created_at);
    let response = listing::export("lightning", rows).await?;
    audit::exported(&state.pool, &member, "lightning", &*filters).await?;
    Ok(response)
}

async fn page(
    state: Data<AppState>,
    member: Member,
    req: HttpRequest,
    filters: Query<Filters>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::LightningRead).await?;
    let filters = filters.into_inner();
    let loaded = listed(&client, &filters).await;
    let more = !filters.cursor.is_empty();
    let rows = |l: Listing<Invoice>| Rows {
        invoices: l.rows,
        next: l.next,
    };
    listing::respond(
        &req,
        more,
        loaded,
        |l| rows(l).render(),
        |l, error| {
            Page {
                shell: Shell::new(&member, "/lightning"),
                can_request: member.can(Permission::LightningRequest),
                export_query: listing::query(&filters, None),
                filters,
                capped: l.capped,
                rows: rows(l),
                error,
            }
            .render()
        },
    )
}

#[derive(Template)]
#[template(path = "lightning/new_invoice.html")]
struct NewInvoice {
    shell: Shell,
    form: InvoiceForm,
    errors: FieldErrors,
}

async fn new_invoice(state: Data<AppState>, member: Member) -> Result<HttpResponse, PortalError> {
    state.client_for(&member, Permission::LightningRequest).await?;
    let (shell, form, errors) = (
        Shell::new(&member, "/lightning"),
        InvoiceForm::default(),
        FieldErrors::default(),
    );
    html(&NewInvoice { shell, form, errors })
}

async fn create_invoice(
    state: Data<AppState>,
    member: Member,
    form: Form<InvoiceForm>,
) -> Result<HttpResponse, PortalError> {
    let form = form.into_inner();
    match split(invoices::create(&state, &member, &form).await)? {
        Ok(invoice) => Ok(done(
            &format!("/lightning/invoices/{}", invoice.id),
            "Invoice created.",
        )),
        Err(refusal) => {
            let shell = Shell::new(&member, "/lightning");
            Ok(unprocessable(
                NewInvoice {
                    shell,
                    form,
                    errors: refusal.into(),
                }
                .render()?,
            ))
        }
    }
}

/// The part of an invoice's page that changes: status, countdown,
/// preimage. It polls while the invoice is pending.
#[derive(Template)]
#[template(path = "lightning/live.html")]
struct Live {
    invoice: Invoice,
    seconds_left: i64,
    countdown: String,
}

impl Live {
    fn new(invoice: Invoice) -> Self {
        let seconds_left = match invoice.status {
            InvoiceStatus::Pending => invoices::seconds_left(&invoice, Utc::now()),
            _ => 0,
        };
        Live {
            countdown: invoices::countdown(seconds_left),
            seconds_left,
            invoice,
        }
    }

    fn polling(&self) -> bool {
        self.invoice.status == InvoiceStatus::Pending
    }
}

#[derive(Template)]
#[template(path = "lightning/invoice.html")]
struct InvoicePage {
    shell: Shell,
    qr: String,
    live: Live,
}

async fn invoice_page(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::LightningRead).await?;
    let invoice = client.invoice(&id.to_string()).await?;
    // A QR code only for an invoice someone can still pay.
    let qr = match (invoice.direction.as_str(), &invoice.status) {
        ("incoming", InvoiceStatus::Pending) => invoices::qr_svg(&invoice.request),
        _ => String::new(),
    };
    let shell = Shell::new(&member, "/lightning");
    html(&InvoicePage {
        shell,
        qr,
        live: Live::new(invoice),
    })
}

/// The live part again, for htmx's polling.
async fn live(state: Data<AppState>, member: Member, id: Path<Uuid>) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::LightningRead).await?;
    html(&Live::new(client.invoice(&id.to_string()).await?))
}

/// The pay form: paste a request; once checked, what paying it does.
#[derive(Template)]
#[template(path = "lightning/pay.html")]
struct PayPage {
    shell: Shell,
    form: PayForm,
    errors: FieldErrors,
    checked: Option<Checked>,
    /// The checked request can't be paid (the reason is beside the field).
    unpayable: bool,
}

impl PayPage {
    fn new(member: &Member, form: PayForm, errors: FieldErrors, checked: Option<Checked>) -> Self {
        let why = checked.as_ref().and_then(Checked::unpayable);
        let unpayable = why.is_some();
        let errors = match why {
            Some(why) if errors.is_empty() => Refusal::field("request", why).into(),
            _ => errors,
        };
        PayPage {
            shell: Shell::new(member, "/lightning"),
            unpayable,
            form,
            errors,
            checked,
        }
    }

    fn expires(&self) -> String {
        let at = self.checked.as_ref().and_then(Checked::expires_at);
        at.map_or_else(String::new, |t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
    }
}

async fn pay_form(state: Data<AppState>, member: Member) -> Result<HttpResponse, PortalError> {
    state.client_for(&member, Permission::LightningRequest).await?;
    html(&PayPage::new(
        &member,
        PayForm::default(),
        FieldErrors::default(),
        None,
    ))
}

/// Decodes and previews the pasted request.
async fn check(
    state: Data<AppState>,
    member: Member,
    form: Form<PayForm>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::LightningRequest).await?;
    let form = form.into_inner();
    let (checked, errors) = match split(payments::check(&client, &form).await)? {
        Ok(checked) => (Some(checked), FieldErrors::default()),
        Err(refusal) => (None, refusal.into()),
    };
    let page = PayPage::new(&member, form, errors, checked);
    let refused = page.checked.is_none() || page.unpayable;
    Ok(refused_or_ok(page.render()?, refused))
}

/// Pays the request: a confirmation that says what is sent first, then
/// the gate.
async fn pay(
    state: Data<AppState>,
    member: Member,
    form: Form<Vec<(String, String)>>,
) -> Result<HttpResponse, PortalError> {
    let submission = Submission(form.into_inner());
    let form: PayForm = submission.draft()?;
    let gated = payments::pay(&state, &member, &form, submission.confirmed()).await;
    let ran = |request: Box<ActionRequest>| match request
        .progress_as::<crate::lightning::action::LightningPaymentProgress>()
        .payment_id
    {
        Some(id) => Ok(done(&format!("/lightning/invoices/{id}"), "Payment sent.")),
        None => Err(Refusal::form(
            "The payment was not sent; check the request and try again.",
        )),
    };
    let confirm = ("Pay a Lightning request", "/lightning/payments", "/lightning/pay");
    let refusal = match answer_gate(&member, gated, confirm, &submission, ran)? {
        Ok(answer) => return Ok(answer),
        Err(refusal) => refusal,
    };
    refused_payment(&state, &member, form, refusal).await
}

/// The pay page again with the refusal beside its field, and what the
/// request would do when it can still be read.
async fn refused_payment(
    state: &AppState,
    member: &Member,
    form: PayForm,
    refusal: Refusal,
) -> Result<HttpResponse, PortalError> {
    let checked = match refusal.field {
        Some("max_fee") => {
            let client = state.client_for(member, Permission::LightningRequest).await?;
            payments::check(&client, &form).await.ok()
        }
        _ => None,
    };
    Ok(unprocessable(
        PayPage::new(member, form, refusal.into(), checked).render()?,
    ))
}

/// Lightning invoices and payments, through the gate.
pub const AREA: Area = Area {
    routes: configure,
    menu: &[MenuEntry::new(
        MenuGroup::Money,
        "/lightning",
        "Lightning",
        ShownTo::Holding(&[Permission::LightningRead]),
    )],
    kinds: |gate| gate.with(super::action::LightningPaymentAction),
};
