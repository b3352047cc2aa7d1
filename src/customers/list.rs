//! The customer list: its filters, pages, search and CSV export.

use std::future::Future;

use actix_web::web::{Data, Query};
use actix_web::{HttpRequest, HttpResponse};
use askama::Template;

use chrono::{DateTime, Utc};
use paydesk_api::models::customers::{Customer, CustomerQuery};
use paydesk_api::{ApiError, Client};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::access::permissions::Permission;
use crate::access::Member;
use crate::audit;
use crate::audit::Event;
use crate::state::AppState;
use crate::web::error::PortalError;
use crate::web::listing::{self, CsvRecord, Dates, Listing, Problem, Range};
use crate::web::page::Shell;

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct Filters {
    #[serde(default)]
    email: String,
    #[serde(default)]
    customer_type: String,
    #[serde(default)]
    active: String,
    #[serde(flatten)]
    dates: Dates,
    #[serde(default)]
    cursor: String,
}

impl Filters {
    fn query(&self) -> CustomerQuery {
        let some = |s: &str| Some(s.trim().to_owned()).filter(|s| !s.is_empty());
        CustomerQuery {
            email: some(&self.email),
            customer_type: some(&self.customer_type),
            is_active: match self.active.as_str() {
                "yes" => Some(true),
                "no" => Some(false),
                _ => None,
            },
            cursor: some(&self.cursor),
            limit: Some(25),
            ..CustomerQuery::default()
        }
    }
}

#[derive(Template)]
#[template(path = "customers/rows.html")]
struct Rows {
    customers: Vec<Customer>,
    next: Option<String>,
}

#[derive(Template)]
#[template(path = "customers/list.html")]
struct ListPage {
    shell: Shell,
    filters: Filters,
    rows: Rows,
    total: u64,
    capped: bool,
    error: Problem,
    can_manage: bool,
    can_export: bool,
    export_query: String,
}

impl listing::Cursored for Filters {
    type Row = Customer;

    fn fetch(
        &self,
        client: &Client,
        cursor: Option<String>,
        limit: u32,
    ) -> impl Future<Output = Result<listing::Page<Customer>, ApiError>> + Send + use<> {
        let client = client.clone();
        let query = CustomerQuery {
            cursor,
            limit: Some(limit),
            ..self.query()
        };
        async move {
            let p = client.customers(&query).await?;
            let next = p.has_more.then_some(p.next_cursor);
            Ok(listing::Page {
                rows: p.customers,
                total: p.total,
                next,
            })
        }
    }

    fn cursor(&self) -> Option<String> {
        Some(self.cursor.clone()).filter(|c| !c.is_empty())
    }

    fn range(&self) -> Range {
        self.dates.range()
    }

    fn created(row: &Customer) -> DateTime<Utc> {
        row.created_at
    }
}

pub(super) async fn list(
    state: Data<AppState>,
    member: Member,
    req: HttpRequest,
    filters: Query<Filters>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::CustomersRead).await?;
    let filters = filters.into_inner();
    let loaded = listing::load(&client, &filters).await;
    let rows = |l: Listing<Customer>| Rows {
        customers: l.rows,
        next: l.next,
    };
    listing::respond(
        &req,
        !filters.cursor.is_empty(),
        loaded,
        |l| rows(l).render(),
        |l, error| {
            ListPage {
                shell: Shell::new(&member, "/customers"),
                can_manage: member.can(Permission::CustomersManage),
                can_export: member.can(Permission::CustomersRead),
                export_query: listing::query(&filters, None),
                total: l.total,
                capped: l.capped,
                rows: rows(l),
                filters,
                error,
            }
            .render()
        },
    )
}

impl CsvRecord for Customer {
    const HEADER: &'static [&'static str] = &[
        "customer_id",
        "created_at",
        "type",
        "email",
        "name",
        "reference",
        "country",
        "active",
    ];

    fn fields(self) -> Vec<String> {
        vec![
            self.id.to_string(),
            self.created_at.to_rfc3339(),
            self.customer_type.clone(),
            self.email.clone(),
            self.full_name(),
            self.reference.clone(),
            self.country
                .clone()
                .or_else(|| self.country_code.clone())
                .unwrap_or_default(),
            self.is_active.to_string(),
        ]
    }
}

/// Every customer matching the filters, as CSV (audited: it holds
/// personal data).
pub(super) async fn export(
    state: Data<AppState>,
    member: Member,
    filters: Query<Filters>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::CustomersRead).await?;
    let rows = filters
        .dates
        .range()
        .within(listing::every(&client, &*filters), |c| c.created_at);
    let response = listing::export("customers", rows).await?;
    let details = json!({ "filters": listing::query(&*filters, None) });
    audit::member_did(
        &state.pool,
        &member,
        Event::CustomersExported,
        "customers".to_owned(),
        details,
    )
    .await?;
    Ok(response)
}
