use actix_web::web::{self, Data, Form, Path};
use actix_web::HttpResponse;
use askama::Template;
use paydesk_api::models::cards::Card;
use paydesk_api::models::customers::{CardKyc, Customer, CustomerUpdate, KycDetails, KycStatus, NewCustomer};
use paydesk_api::models::virtual_accounts::VirtualAccount;
use paydesk_api::{ApiError, Client};
use serde::Deserialize;
use serde_json::json;
use uuid::Uuid;

use super::{list, manage};
use crate::access::permissions::Permission;
use crate::access::Member;
use crate::area::Area;
use crate::audit;
use crate::audit::Event;
use crate::state::AppState;
use crate::web::confirm::Confirm;
use crate::web::error::{user_fixable, PortalError};
use crate::web::form::split;
use crate::web::menu::{MenuEntry, MenuGroup, ShownTo};
use crate::web::page::{done, html, redirect, unprocessable, Shell};

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.route("/customers", web::get().to(list::list))
        .route("/customers/export.csv", web::get().to(list::export))
        .route("/customers", web::post().to(create))
        .route("/customers/new", web::get().to(new_form))
        .route("/customers/{id}", web::get().to(detail))
        .route("/customers/{id}", web::post().to(update))
        .route("/customers/{id}/active", web::post().to(set_active))
        .route("/customers/{id}/kyc", web::get().to(kyc_status))
        .route("/customers/{id}/kyc", web::post().to(submit_kyc));
}

#[derive(Debug, Default, Deserialize)]
pub struct CustomerForm {
    #[serde(default)]
    email: String,
    #[serde(default)]
    customer_type: String,
    #[serde(default)]
    first_name: String,
    #[serde(default)]
    last_name: String,
    #[serde(default)]
    phone_number: String,
    #[serde(default)]
    country_code: String,
    /// Fixed when the form is shown, so a double submit is one customer.
    #[serde(default)]
    reference: String,
}

#[derive(Template)]
#[template(path = "customers/new.html")]
struct NewPage {
    shell: Shell,
    form: CustomerForm,
    error: Option<String>,
}

async fn new_form(member: Member) -> Result<HttpResponse, PortalError> {
    member.require(Permission::CustomersManage)?;
    html(&NewPage {
        shell: Shell::new(&member, "/customers"),
        form: CustomerForm {
            customer_type: "individual".to_owned(),
            reference: format!("paydesk-customer-{}", Uuid::new_v4().simple()),
            ..CustomerForm::default()
        },
        error: None,
    })
}

/// Checks what Paydesk can before calling: a person's mistakes are named
/// without a round trip.
fn check_customer(form: &CustomerForm) -> Result<NewCustomer, String> {
    let email = form.email.trim();
    if !email.contains('@') || email.starts_with('@') || email.ends_with('@') {
        return Err("Enter the customer's email address, e.g. ada@example.com.".to_owned());
    }
    if !matches!(form.customer_type.as_str(), "individual" | "business") {
        return Err("Choose whether the customer is an individual or a business.".to_owned());
    }
    let phone = form.phone_number.trim();
    if !phone.is_empty() && !phone.starts_with('+') {
        return Err(
            "Write the phone number in international format, starting with + (e.g. +2348012345678)."
                .to_owned(),
        );
    }
    let country = form.country_code.trim();
    if !country.is_empty() && (country.len() != 3 || !country.chars().all(|c| c.is_ascii_alphabetic())) {
        return Err("The country code has three letters, e.g. NGA, KEN or GHA.".to_owned());
    }
    let some = |s: &str| Some(s.trim().to_owned()).filter(|s| !s.is_empty());
    Ok(NewCustomer {
        email: email.to_owned(),
        customer_type: form.customer_type.clone(),
        first_name: some(&form.first_name),
        last_name: some(&form.last_name),
        phone_number: some(phone),
        country_code: some(&country.to_ascii_uppercase()),
        reference: some(&form.reference),
    })
}

async fn create(
    state: Data<AppState>,
    member: Member,
    form: Form<CustomerForm>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::CustomersManage).await?;
    let form = form.into_inner();
    let error = match check_customer(&form) {
        Err(message) => message,
        Ok(body) => match client.create_customer(&body).await {
            Ok(c) => {
                audit::member_did(
                    &state.pool,
                    &member,
                    Event::CustomersCreated,
                    format!(
                        "customer:{}",
                        audit::mask::person(&c.first_name, &c.last_name, &c.email)
                    ),
                    json!({"id": c.id, "email": audit::mask::email(&c.email)}),
                )
                .await?;
                return Ok(redirect(&format!("/customers/{}", c.id)));
            }
            Err(e) => user_fixable(e)?,
        },
    };
    Ok(unprocessable(
        NewPage {
            shell: Shell::new(&member, "/customers"),
            form,
            error: Some(error),
        }
        .render()?,
    ))
}

/// The KYC block: status, and the form when KYC can be (re)submitted.
#[derive(Template)]
#[template(path = "customers/kyc.html")]
struct KycBlock {
    customer_id: String,
    csrf_token: String,
    kyc: Option<CardKyc>,
    can_submit: bool,
    form: KycDetails,
    error: Option<String>,
}

impl KycBlock {
    fn pending(&self) -> bool {
        self.kyc.as_ref().is_some_and(|k| k.status == KycStatus::Pending)
    }

    fn open(&self) -> bool {
        self.can_submit && self.kyc.as_ref().is_none_or(|k| k.status == KycStatus::Rejected)
    }
}

#[derive(Template)]
#[template(path = "customers/detail.html")]
struct DetailPage {
    shell: Shell,
    customer: Customer,
    kyc: KycBlock,
    cards: Vec<Card>,
    /// The customer's NGN virtual accounts, when the member may see them.
    virtual_accounts: Vec<VirtualAccount>,
    /// The reference for issuing one, fixed when the page is shown.
    account_reference: Option<String>,
    can_manage: bool,
    can_issue: bool,
    error: Option<String>,
}

/// The customer's card KYC, `None` when never submitted.
async fn kyc_of(client: &Client, id: &str) -> Result<Option<CardKyc>, PortalError> {
    match client.card_kyc(id).await {
        Ok(k) => Ok(Some(k)),
        Err(ApiError::Problem { status: 404, .. }) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

async fn render_detail(
    state: &AppState,
    member: &Member,
    id: &str,
    error: Option<String>,
    kyc_form: Option<(KycDetails, String)>,
) -> Result<String, PortalError> {
    let client = state.client_for(member, Permission::CustomersRead).await?;
    let customer = client.customer(id).await?;
    let kyc = kyc_of(&client, id).await?;
    let cards = if member.can(Permission::CardsRead) {
        client.customer_cards(id, None, Some(100)).await?.cards
    } else {
        Vec::new()
    };
    let virtual_accounts = match member.can(Permission::VirtualAccountsRead) {
        true => {
            client
                .virtual_accounts(Some(id), None, Some(100))
                .await?
                .virtual_accounts
        }
        false => Vec::new(),
    };
    let (form, kyc_error) = match kyc_form {
        Some((form, e)) => (form, Some(e)),
        None => (
            KycDetails {
                country: customer.country_code.clone().unwrap_or_default(),
                ..KycDetails::default()
            },
            None,
        ),
    };
    Ok(DetailPage {
        shell: Shell::new(member, "/customers"),
        kyc: KycBlock {
            customer_id: id.to_owned(),
            csrf_token: member.user.csrf_token.clone(),
            kyc,
            can_submit: member.can(Permission::CustomersManage),
            form,
            error: kyc_error,
        },
        can_manage: member.can(Permission::CustomersManage),
        can_issue: member.can(Permission::CardsManage),
        account_reference: member
            .can(Permission::VirtualAccountsManage)
            .then(|| format!("paydesk-va-{}", Uuid::new_v4().simple())),
        customer,
        cards,
        virtual_accounts,
        error,
    }
    .render()?)
}

async fn detail(state: Data<AppState>, member: Member, id: Path<Uuid>) -> Result<HttpResponse, PortalError> {
    let id = id.to_string();
    let body = render_detail(&state, &member, &id, None, None).await?;
    Ok(HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(body))
}

#[derive(Debug, Deserialize)]
pub struct EditForm {
    #[serde(default)]
    first_name: String,
    #[serde(default)]
    last_name: String,
}

async fn update(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
    form: Form<EditForm>,
) -> Result<HttpResponse, PortalError> {
    let id = id.to_string();
    let client = state.client_for(&member, Permission::CustomersManage).await?;
    let body = CustomerUpdate {
        first_name: Some(form.first_name.trim().to_owned()),
        last_name: Some(form.last_name.trim().to_owned()),
        is_active: None,
    };
    match client.update_customer(&id, &body).await {
        Ok(_) => {
            audit::member_did(
                &state.pool,
                &member,
                Event::CustomersUpdated,
                format!(
                    "customer:{}",
                    form.first_name.trim().to_owned() + " " + form.last_name.trim()
                ),
                json!({"id": id}),
            )
            .await?;
            Ok(redirect(&format!("/customers/{id}")))
        }
        Err(e) => {
            let message = user_fixable(e)?;
            Ok(unprocessable(
                render_detail(&state, &member, &id, Some(message), None).await?,
            ))
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct ActiveForm {
    active: String,
    #[serde(default)]
    confirmed: String,
}

/// Deactivates (blacklists) or reactivates a customer.
async fn set_active(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
    form: Form<ActiveForm>,
) -> Result<HttpResponse, PortalError> {
    let id = id.to_string();
    let client = state.client_for(&member, Permission::CustomersManage).await?;
    let active = form.active == "yes";
    if !active && form.confirmed != "yes" {
        let customer = client.customer(&id).await?;
        let consequences = [
            format!("{} can't be issued new cards or submit card KYC.", customer.email),
            "Their existing cards and records stay; you can reactivate them later.".to_owned(),
        ];
        let back = format!("/customers/{id}");
        return Confirm {
            title: &format!("Deactivate {}", customer.email),
            consequences: &consequences,
            action: &format!("/customers/{id}/active"),
            back: &back,
            button: "Deactivate customer",
            fields: &[("active", "no")],
        }
        .page(&member);
    }
    match split(manage::set_active(&state, &member, &id, active).await)? {
        Ok(notice) => Ok(done(&format!("/customers/{id}"), notice)),
        Err(refusal) => Ok(unprocessable(
            render_detail(&state, &member, &id, Some(refusal.message), None).await?,
        )),
    }
}

/// The KYC block alone, which polls itself while the review runs.
async fn kyc_status(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
) -> Result<HttpResponse, PortalError> {
    let id = id.to_string();
    let client = state.client_for(&member, Permission::CustomersRead).await?;
    // A 404 here is an unknown customer; below it means "not submitted".
    client.customer(&id).await?;
    let kyc = kyc_of(&client, &id).await?;
    html(&KycBlock {
        customer_id: id,
        csrf_token: member.user.csrf_token.clone(),
        kyc,
        can_submit: member.can(Permission::CustomersManage),
        form: KycDetails::default(),
        error: None,
    })
}

fn check_kyc(form: &KycDetails) -> Result<(), String> {
    let missing: Vec<&str> = [
        ("country", &form.country),
        ("date of birth", &form.date_of_birth),
        ("ID type", &form.id_type),
        ("ID number", &form.id_number),
        ("dial code", &form.dial_code),
        ("phone number", &form.phone_number),
        ("address line", &form.line1),
        ("city", &form.city),
        ("state", &form.state),
        ("postal code", &form.postal_code),
    ]
    .iter()
    .filter(|(_, v)| v.trim().is_empty())
    .map(|(name, _)| *name)
    .collect();
    if !missing.is_empty() {
        return Err(format!("Fill in: {}.", missing.join(", ")));
    }
    match chrono::NaiveDate::parse_from_str(form.date_of_birth.trim(), "%Y-%m-%d") {
        Err(_) => return Err("Write the date of birth as YYYY-MM-DD, e.g. 1990-04-01.".to_owned()),
        Ok(d) if d >= chrono::Utc::now().date_naive() => {
            return Err("The date of birth must be in the past.".to_owned())
        }
        Ok(_) => {}
    }
    Ok(())
}

async fn submit_kyc(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
    form: Form<KycDetails>,
) -> Result<HttpResponse, PortalError> {
    let id = id.to_string();
    let client = state.client_for(&member, Permission::CustomersManage).await?;
    let mut details = form.into_inner();
    details.country = details.country.trim().to_ascii_uppercase();
    let error = match check_kyc(&details) {
        Err(message) => message,
        Ok(()) => match client.submit_card_kyc(&id, &details).await {
            Ok(_) => {
                // The ID number is personal data: the log names the customer only.
                audit::member_did(
                    &state.pool,
                    &member,
                    Event::CustomersKycSubmitted,
                    format!("customer:{id}"),
                    json!({"country": details.country, "id_type": details.id_type}),
                )
                .await?;
                return Ok(redirect(&format!("/customers/{id}")));
            }
            Err(e) => user_fixable(e)?,
        },
    };
    Ok(unprocessable(
        render_detail(&state, &member, &id, None, Some((details, error))).await?,
    ))
}

/// Customers, who hold cards and virtual accounts.
pub const AREA: Area = Area {
    routes: configure,
    menu: &[MenuEntry::new(
        MenuGroup::Cards,
        "/customers",
        "Customers",
        ShownTo::Holding(&[Permission::CustomersRead]),
    )],
    kinds: crate::area::no_kinds,
};
