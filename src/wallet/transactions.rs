use actix_web::http::header;
use actix_web::web::{Bytes, Data, Path, Query};
use actix_web::{HttpRequest, HttpResponse};
use askama::Template;
use futures_util::{stream, StreamExt};
use paydesk_api::models::transactions::{Transaction, TransactionQuery, TransactionState, TransactionType};
use paydesk_api::units::Currency;
use serde::Deserialize;

use crate::access::permissions::Permission;
use crate::access::Member;
use crate::audit::Event;
use crate::audit::{self, outcome, NewRecord};
use crate::startup::AppState;
use crate::web::csv;
use crate::web::error::{describe_upstream, PortalError};
use crate::web::page::{html, is_htmx, Shell};

const PAGE_SIZE: u32 = 25;

/// The list's filters, as they appear in the query string.
#[derive(Debug, Default, Deserialize)]
pub struct Filters {
    #[serde(default, rename = "type")]
    kind: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    currency: String,
    #[serde(default)]
    cursor: String,
}

impl Filters {
    /// The upstream query; a value that is not one of the options is
    /// dropped with a note for the page.
    fn query(&self, limit: Option<u32>) -> (TransactionQuery, Vec<String>) {
        let mut notes = Vec::new();
        let kind = Some(self.kind.as_str())
            .filter(|v| !v.is_empty())
            .and_then(TransactionType::parse);
        let status = Some(self.status.as_str())
            .filter(|v| !v.is_empty())
            .and_then(TransactionState::parse);
        let currency = Some(self.currency.as_str())
            .filter(|v| !v.is_empty())
            .and_then(|v| Currency::parse(v).ok());
        if !self.kind.is_empty() && kind.is_none() {
            notes.push(format!(
                "'{}' is not a transaction type; showing every type",
                self.kind
            ));
        }
        if !self.status.is_empty() && status.is_none() {
            notes.push(format!("'{}' is not a state; showing every state", self.status));
        }
        if !self.currency.is_empty() && currency.is_none() {
            notes.push(format!(
                "'{}' is not a currency; showing every currency",
                self.currency
            ));
        }
        let query = TransactionQuery {
            kind,
            status,
            currency,
            cursor: Some(self.cursor.clone()).filter(|c| !c.is_empty()),
            limit,
        };
        (query, notes)
    }

    /// The query string for the same filters at another cursor.
    fn with_cursor(&self, cursor: &str) -> String {
        serde_urlencoded::to_string([
            ("type", self.kind.as_str()),
            ("status", self.status.as_str()),
            ("currency", self.currency.as_str()),
            ("cursor", cursor),
        ])
        .unwrap_or_default()
    }

    fn export_query(&self) -> String {
        serde_urlencoded::to_string([
            ("type", self.kind.as_str()),
            ("status", self.status.as_str()),
            ("currency", self.currency.as_str()),
        ])
        .unwrap_or_default()
    }
}

/// The rows and the "load more" link: the same fragment serves the full
/// page and each htmx "load more".
#[derive(Template)]
#[template(path = "wallet/transaction_rows.html")]
struct Rows {
    transactions: Vec<Transaction>,
    next: Option<String>,
}

#[derive(Template)]
#[template(path = "wallet/transactions.html")]
struct ListPage {
    shell: Shell,
    filters: Filters,
    types: &'static [TransactionType],
    states: &'static [TransactionState],
    notes: Vec<String>,
    error: Option<(String, Option<String>)>,
    total: u64,
    rows: Rows,
    can_export: bool,
    export_query: String,
}

pub async fn list(
    state: Data<AppState>,
    member: Member,
    req: HttpRequest,
    filters: Query<Filters>,
) -> Result<HttpResponse, PortalError> {
    let filters = filters.into_inner();
    let client = state.client_for(&member, Permission::TransactionsRead).await?;
    let (query, notes) = filters.query(Some(PAGE_SIZE));
    let result = client.transactions(&query).await;
    if is_htmx(&req) && !filters.cursor.is_empty() {
        let page = result?;
        let next = page.has_more.then(|| filters.with_cursor(&page.next_cursor));
        return html(&Rows {
            transactions: page.transactions,
            next,
        });
    }
    let (rows, total, error) = match result {
        Ok(page) => {
            let next = page.has_more.then(|| filters.with_cursor(&page.next_cursor));
            (
                Rows {
                    transactions: page.transactions,
                    next,
                },
                page.total_count,
                None,
            )
        }
        Err(e) => (
            Rows {
                transactions: Vec::new(),
                next: None,
            },
            0,
            Some(describe_upstream(&e)),
        ),
    };
    html(&ListPage {
        shell: Shell::new(&member, "/transactions"),
        export_query: filters.export_query(),
        filters,
        types: TransactionType::ALL,
        states: TransactionState::ALL,
        notes,
        error,
        total,
        rows,
        can_export: member.can(Permission::TransactionsExport),
    })
}

#[derive(Template)]
#[template(path = "wallet/transaction.html")]
struct DetailPage {
    shell: Shell,
    tx: Transaction,
    metadata: Vec<(String, String)>,
}

pub async fn one(
    state: Data<AppState>,
    member: Member,
    id: Path<String>,
) -> Result<HttpResponse, PortalError> {
    let client = state.client_for(&member, Permission::TransactionsRead).await?;
    let tx = client.transaction(&id).await?;
    let metadata = tx
        .metadata
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().map_or_else(|| v.to_string(), str::to_owned)))
        .collect();
    html(&DetailPage {
        shell: Shell::new(&member, "/transactions"),
        tx,
        metadata,
    })
}

const CSV_HEADER: [&str; 12] = [
    "transaction_id",
    "created_at",
    "type",
    "state",
    "side",
    "currency",
    "amount",
    "fee",
    "amount_formatted",
    "reference",
    "account_number",
    "value_date",
];

fn csv_row(t: &Transaction) -> Bytes {
    csv::line(&[
        t.transaction_id.to_string(),
        t.created_at.to_rfc3339(),
        t.kind.to_string(),
        t.state.to_string(),
        format!("{:?}", t.side),
        t.currency.to_string(),
        t.amount.to_string(),
        t.fee.to_string(),
        t.amount_formatted.clone(),
        csv::safe(&t.reference),
        t.account_number.clone(),
        t.value_date.to_string(),
    ])
}

/// Streams every transaction matching the filters as CSV, page by page, so
/// a large history never sits in memory. A failure part-way ends the file
/// with a line saying it is incomplete.
pub async fn export(
    state: Data<AppState>,
    member: Member,
    filters: Query<Filters>,
) -> Result<HttpResponse, PortalError> {
    member.require(Permission::TransactionsRead)?;
    let client = state.client_for(&member, Permission::TransactionsExport).await?;
    let (query, _) = filters.query(Some(100));
    let mut rows = Box::pin(client.all_transactions(query));
    // The first page is fetched before answering, so an upstream refusal is
    // a readable error page rather than a broken download.
    let first = rows.next().await.transpose()?;
    audit::store::append(
        &state.pool,
        &[NewRecord::new(
            &member.actor(),
            Some(member.tenant_id),
            Event::TransactionsExported,
            "transactions",
            outcome::SUCCESS,
        )
        .with_details(serde_json::json!({ "filters": filters.export_query() }))],
    )
    .await?;
    let header_line = csv::line(&CSV_HEADER.map(str::to_owned));
    let head = stream::iter([Ok::<_, actix_web::Error>(header_line)])
        .chain(stream::iter(first.map(|t| Ok(csv_row(&t)))));
    let body = head.chain(rows.map(|row| {
        Ok(match row {
            Ok(t) => csv_row(&t),
            Err(e) => Bytes::from(format!("# export incomplete: {}\n", describe_upstream(&e).0)),
        })
    }));
    let filename = format!("transactions-{}.csv", chrono::Utc::now().format("%Y%m%d-%H%M%S"));
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "text/csv; charset=utf-8"))
        .insert_header((
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{filename}\""),
        ))
        .streaming(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_filter_values_are_dropped_with_a_note() {
        let f = Filters {
            kind: "GIFT".into(),
            status: "settled".into(),
            currency: "USDT".into(),
            cursor: String::new(),
        };
        let (q, notes) = f.query(None);
        assert!(q.kind.is_none());
        assert_eq!(q.status, Some(TransactionState::Settled));
        assert_eq!(notes.len(), 1);
    }
}
