use actix_web::web::{Data, Form, Path, Query};
use actix_web::{HttpRequest, HttpResponse};
use askama::Template;
use chrono::{DateTime, Utc};
use futures_util::Stream;
use paydesk_api::models::addresses::{
    Address, AddressQuery, AddressStatus, AddressValidation, GenerateAddress, SupportedChain, ValidateAddress,
};
use paydesk_api::{ApiError, Client};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::access::permissions::Permission;
use crate::access::Member;
use crate::audit;
use crate::state::AppState;
use crate::web::error::{describe_upstream, PortalError};
use crate::web::listing::{self, CsvRecord, Dates, Listing, Problem};
use crate::web::page::{html, is_htmx, redirect, unprocessable, Section, Shell};

/// Chains the list filter offers (generation offers the supported ones).
const FILTER_CHAINS: &[&str] = &[
    "avalanche",
    "base",
    "bitcoin",
    "bsc",
    "ethereum",
    "optimism",
    "polygon",
    "solana",
    "stellar",
    "tron",
];

#[derive(Debug, Default, Deserialize, Serialize)]
pub struct Filters {
    #[serde(default)]
    chain: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    address: String,
    #[serde(flatten)]
    dates: Dates,
    #[serde(default)]
    cursor: String,
}

impl Filters {
    fn query(&self) -> AddressQuery {
        AddressQuery {
            chain: Some(self.chain.clone()).filter(|c| !c.is_empty()),
            status: match self.status.as_str() {
                "active" => Some(AddressStatus::Active),
                "inactive" => Some(AddressStatus::Inactive),
                _ => None,
            },
            addresses: self
                .address
                .split([',', ' ', '\n'])
                .map(str::trim)
                .filter(|a| !a.is_empty())
                .map(str::to_owned)
                .collect(),
            cursor: Some(self.cursor.clone()).filter(|c| !c.is_empty()),
            limit: Some(25),
        }
    }
}

#[derive(Template)]
#[template(path = "wallet/address_rows.html")]
struct Rows {
    addresses: Vec<Address>,
    next: Option<String>,
}

/// The generate form, with what was typed and the reason it was refused.
pub struct GenerateForm {
    chains: Vec<String>,
    chain: String,
    label: String,
    reference: String,
    error: Option<String>,
}

#[derive(Template)]
#[template(path = "wallet/addresses.html")]
struct ListPage {
    shell: Shell,
    filters: Filters,
    filter_chains: &'static [&'static str],
    rows: Rows,
    capped: bool,
    error: Problem,
    generate: Option<GenerateForm>,
    export_query: String,
}

async fn generate_form(
    client: &paydesk_api::Client,
    member: &Member,
    chain: &str,
    label: &str,
    error: Option<String>,
) -> Option<GenerateForm> {
    if !member.can(Permission::AddressesCreate) {
        return None;
    }
    let chains = client
        .supported_chains()
        .await
        .map(|c| c.chains.into_iter().map(|c| c.chain).collect())
        .unwrap_or_default();
    Some(GenerateForm {
        chains,
        chain: chain.to_owned(),
        label: label.to_owned(),
        // Fixed when the form is shown, so a double submit is one address.
        reference: format!("paydesk-{}", Uuid::new_v4().simple()),
        error,
    })
}

fn list_page(
    member: &Member,
    filters: Filters,
    (rows, capped): (Rows, bool),
    error: Problem,
    generate: Option<GenerateForm>,
) -> ListPage {
    ListPage {
        shell: Shell::new(member, "/addresses"),
        generate,
        export_query: listing::query(&filters, None),
        capped,
        filters,
        filter_chains: FILTER_CHAINS,
        rows,
        error,
    }
}

fn rows(l: Listing<Address>) -> Rows {
    Rows {
        addresses: l.rows,
        next: l.next,
    }
}

/// When the service made the address (the start of time when it doesn't
/// say, so a date range leaves it out).
fn made(a: &Address) -> DateTime<Utc> {
    a.created_at.unwrap_or_default()
}

/// Every address the filters match (dates aside), newest first, a page at
/// a time.
fn every(client: &Client, filters: &Filters) -> impl Stream<Item = Result<Address, ApiError>> + 'static {
    let (client, query) = (client.clone(), filters.query());
    listing::all_pages(move |cursor| {
        let (client, query) = (
            client.clone(),
            AddressQuery {
                cursor,
                limit: Some(100),
                ..query.clone()
            },
        );
        async move {
            let p = client.list_addresses(&query).await?;
            Ok((p.addresses, p.has_more.then_some(p.next_cursor)))
        }
    })
}

/// The page the filters ask for (see `listing::page_or_range`).
async fn first_page(client: &Client, filters: &Filters) -> Result<Listing<Address>, ApiError> {
    let page = async {
        let p = client.list_addresses(&filters.query()).await?;
        let next = p.has_more.then_some(p.next_cursor.as_str());
        Ok(Listing::new(p.addresses, 0, next, filters))
    };
    listing::page_or_range(filters.dates.range(), page, every(client, filters), made, filters).await
}

impl CsvRecord for Address {
    const HEADER: &'static [&'static str] = &[
        "created_at",
        "id",
        "chain",
        "address",
        "label",
        "status",
        "reference",
    ];

    fn fields(self) -> Vec<String> {
        vec![
            self.created_at.map(|t| t.to_rfc3339()).unwrap_or_default(),
            self.id.to_string(),
            self.chain.clone(),
            self.address.clone(),
            self.label.clone(),
            format!("{:?}", self.status).to_lowercase(),
            self.reference.clone(),
        ]
    }
}

/// Streams every address the filters match as CSV, on record.
pub async fn export(
    state: Data<AppState>,
    member: Member,
    filters: Query<Filters>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::AddressesRead).await?;
    let rows = filters.dates.range().within(every(&client, &filters), made);
    let response = listing::export("addresses", rows).await?;
    audit::exported(&state.pool, &member, "addresses", &*filters).await?;
    Ok(response)
}

pub async fn list(
    state: Data<AppState>,
    member: Member,
    req: HttpRequest,
    filters: Query<Filters>,
) -> Result<HttpResponse, PortalError> {
    let filters = filters.into_inner();
    let client = state.client_for(&member, Permission::AddressesRead).await?;
    let more = !filters.cursor.is_empty();
    let loaded = first_page(&client, &filters).await;
    // "Load more" needs only the rows, not the form's chains.
    let generate = match is_htmx(&req) && more {
        true => None,
        false => generate_form(&client, &member, "", "", None).await,
    };
    listing::respond(
        &req,
        more,
        loaded,
        |l| rows(l).render(),
        |l, error| {
            let capped = l.capped;
            list_page(&member, filters, (rows(l), capped), error, generate).render()
        },
    )
}

#[derive(Deserialize)]
pub struct GenerateInput {
    chain: String,
    #[serde(default)]
    label: String,
    reference: String,
}

/// Generates an address with the reference fixed in the form; a refusal
/// shows the form again with the service's reason.
pub async fn generate(
    state: Data<AppState>,
    member: Member,
    form: Form<GenerateInput>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::AddressesCreate).await?;
    let input = form.into_inner();
    let request = GenerateAddress {
        chain: input.chain.clone(),
        label: Some(input.label.trim().to_owned()).filter(|l| !l.is_empty()),
        reference: Some(input.reference.clone()),
        ..Default::default()
    };
    let refused = match client.generate_address(&request).await {
        Ok(address) => return Ok(redirect(&format!("/addresses/{}?new=1", address.id))),
        Err(
            e @ ApiError::Problem {
                status: 400..=499, ..
            },
        ) => describe_upstream(&e).0,
        Err(e) => return Err(e.into()),
    };
    let generate = generate_form(&client, &member, &input.chain, &input.label, Some(refused)).await;
    let filters = Filters::default();
    let listed = first_page(&client, &filters)
        .await
        .unwrap_or_else(|_| Listing::new(Vec::new(), 0, None, &filters));
    Ok(unprocessable(
        list_page(&member, filters, (rows(listed), false), None, generate).render()?,
    ))
}

#[derive(Template)]
#[template(path = "wallet/address.html")]
struct DetailPage {
    shell: Shell,
    address: Address,
    is_new: bool,
}

#[derive(Deserialize)]
pub struct NewFlag {
    #[serde(default)]
    new: Option<String>,
}

pub async fn one(
    state: Data<AppState>,
    member: Member,
    id: Path<Uuid>,
    flag: Query<NewFlag>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::AddressesRead).await?;
    let address = client.address(&id.to_string()).await?;
    html(&DetailPage {
        shell: Shell::new(&member, "/addresses"),
        address,
        is_new: flag.new.is_some(),
    })
}

#[derive(Template)]
#[template(path = "wallet/validation.html")]
struct ValidationResult {
    result: Result<AddressValidation, String>,
}

#[derive(Template)]
#[template(path = "wallet/validate_page.html")]
struct ValidationPage {
    shell: Shell,
    result: Result<AddressValidation, String>,
}

#[derive(Deserialize)]
pub struct ValidateInput {
    chain: String,
    address: String,
}

/// Checks an address; the result is a fragment for htmx or a full page.
pub async fn validate(
    state: Data<AppState>,
    member: Member,
    req: HttpRequest,
    form: Form<ValidateInput>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::AddressesRead).await?;
    let input = form.into_inner();
    let result = client
        .validate_address(&ValidateAddress {
            address: input.address.trim().to_owned(),
            chain: input.chain,
        })
        .await
        .map_err(|e| describe_upstream(&e).0);
    if is_htmx(&req) {
        html(&ValidationResult { result })
    } else {
        html(&ValidationPage {
            shell: Shell::new(&member, "/addresses"),
            result,
        })
    }
}

#[derive(Template)]
#[template(path = "wallet/chains.html")]
struct ChainsPage {
    shell: Shell,
    chains: Section<Vec<SupportedChain>>,
}

pub async fn chains(state: Data<AppState>, member: Member) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::AddressesRead).await?;
    let chains = Section::from_result(client.supported_chains().await.map(|c| c.chains));
    html(&ChainsPage {
        shell: Shell::new(&member, "/chains"),
        chains,
    })
}
