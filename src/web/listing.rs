//! Filtered, paged lists: one page type with the query of the next page,
//! one way to answer (the whole page, or only the next rows for htmx's
//! "load more"), and a CSV export of the current filter, streamed page by
//! page so a long history never sits in memory. The `load_more` macro in
//! `macros.html` draws the link.

use std::future::Future;

use actix_web::http::header;
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse};
use chrono::{DateTime, NaiveDate, Utc};
use futures_util::{stream, Stream, StreamExt, TryFutureExt, TryStreamExt};
use paydesk_api::{ApiError, Client};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::csv;
use super::error::{describe_upstream, PortalError};
use super::page::{is_htmx, ok};

/// One page of a list: its rows, how many match in all, and the query
/// string of the next page (same filters), when there is one.
pub struct Listing<T> {
    pub rows: Vec<T>,
    pub total: u64,
    pub next: Option<String>,
    /// A date range matched more rows than a page shows (the export has
    /// them all).
    pub capped: bool,
}

impl<T> Listing<T> {
    pub fn new(rows: Vec<T>, total: u64, next_cursor: Option<&str>, filters: &impl Serialize) -> Self {
        Listing {
            rows,
            total,
            next: next_cursor
                .filter(|c| !c.is_empty())
                .map(|c| query(filters, Some(c))),
            capped: false,
        }
    }

    fn empty() -> Self {
        Listing {
            rows: Vec::new(),
            total: 0,
            next: None,
            capped: false,
        }
    }
}

/// The filters as a query string at `cursor` (none: the first page, as
/// the export link uses it). Empty filters are left out.
pub fn query(filters: &impl Serialize, cursor: Option<&str>) -> String {
    let mut fields: Vec<(String, String)> = match serde_json::to_value(filters) {
        Ok(Value::Object(map)) => map
            .into_iter()
            .filter(|(k, _)| k != "cursor")
            .filter_map(|(k, v)| match v {
                Value::String(s) if !s.is_empty() => Some((k, s)),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    fields.extend(cursor.map(|c| ("cursor".to_owned(), c.to_owned())));
    serde_urlencoded::to_string(fields).unwrap_or_default()
}

/// What a list page shows instead of rows when they could not be loaded:
/// the sentence and the service's correlation id.
pub type Problem = Option<(String, Option<String>)>;

/// Answers a list request. An htmx "load more" (`more`: a cursor was asked
/// for) gets only the next rows; anything else gets the whole page, which
/// says why the rows are missing when the service failed.
pub fn respond<T>(
    req: &HttpRequest,
    more: bool,
    loaded: Result<Listing<T>, ApiError>,
    rows: impl FnOnce(Listing<T>) -> Result<String, askama::Error>,
    page: impl FnOnce(Listing<T>, Problem) -> Result<String, askama::Error>,
) -> Result<HttpResponse, PortalError> {
    if is_htmx(req) && more {
        return Ok(ok(rows(loaded?)?));
    }
    let (listing, problem) = match loaded {
        Ok(listing) => (listing, None),
        Err(e) => (Listing::empty(), Some(describe_upstream(&e))),
    };
    Ok(ok(page(listing, problem)?))
}

/// A date range typed into a list's From and To boxes (UTC calendar days,
/// both ends included). The service's lists have no date filter, so a
/// range is applied to their newest-first stream: reading stops at the
/// first row older than `from`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    pub from: Option<NaiveDate>,
    pub to: Option<NaiveDate>,
}

impl Range {
    /// The range, with a note for each box that is not a date and is
    /// therefore left out.
    pub fn parse(from: &str, to: &str) -> (Range, Vec<String>) {
        let mut notes = Vec::new();
        let mut day = |text: &str, what: &str| {
            let text = text.trim();
            if text.is_empty() {
                return None;
            }
            let parsed = NaiveDate::parse_from_str(text, "%Y-%m-%d").ok();
            if parsed.is_none() {
                notes.push(format!(
                    "'{text}' is not a date (use YYYY-MM-DD); no {what} date applied"
                ));
            }
            parsed
        };
        let range = Range {
            from: day(from, "start"),
            to: day(to, "end"),
        };
        (range, notes)
    }

    pub fn is_set(&self) -> bool {
        self.from.is_some() || self.to.is_some()
    }

    /// Whether `at` falls on one of the range's days.
    pub fn contains(&self, at: DateTime<Utc>) -> bool {
        let day = at.date_naive();
        self.from.is_none_or(|f| day >= f) && self.to.is_none_or(|t| day <= t)
    }

    /// The range as instants for a query: from the start of `from`
    /// (included) to the start of the day after `to` (excluded).
    pub fn bounds(&self) -> (Option<DateTime<Utc>>, Option<DateTime<Utc>>) {
        let start = |d: NaiveDate| d.and_hms_opt(0, 0, 0).map(|t| t.and_utc());
        (
            self.from.and_then(start),
            self.to.and_then(|d| d.succ_opt()).and_then(start),
        )
    }

    /// The rows of a newest-first stream that fall in the range.
    pub fn within<T, E>(
        self,
        rows: impl Stream<Item = Result<T, E>>,
        at: impl Fn(&T) -> DateTime<Utc> + Copy,
    ) -> impl Stream<Item = Result<T, E>> {
        let from = self.from;
        rows.try_take_while(move |row| {
            let keep = from.is_none_or(|f| at(row).date_naive() >= f);
            std::future::ready(Ok(keep))
        })
        .try_filter(move |row| std::future::ready(self.contains(at(row))))
    }
}

/// A list's From and To boxes as they appear in its query string; each
/// list's filters take them in with `#[serde(flatten)]`.
#[derive(Debug, Default, Clone, Deserialize, Serialize)]
pub struct Dates {
    #[serde(default)]
    pub from: String,
    #[serde(default)]
    pub to: String,
}

impl Dates {
    pub fn range(&self) -> Range {
        Range::parse(&self.from, &self.to).0
    }

    /// A sentence for each box that is not a date (and is left out).
    pub fn notes(&self) -> Vec<String> {
        Range::parse(&self.from, &self.to).1
    }
}

/// A page of a date range shows at most this many rows; the export has all.
pub const RANGE_ROWS: usize = 500;

/// The page a list's filters ask for: without dates, the one page `page`
/// loads (with its cursor); with dates, the range's first rows read from
/// the newest-first stream `all` (no further pages: the export has the
/// rest). Only the one needed is ever polled.
pub async fn page_or_range<T>(
    range: Range,
    page: impl Future<Output = Result<Listing<T>, ApiError>>,
    all: impl Stream<Item = Result<T, ApiError>>,
    at: impl Fn(&T) -> DateTime<Utc> + Copy,
    filters: &impl Serialize,
) -> Result<Listing<T>, ApiError> {
    if !range.is_set() {
        return page.await;
    }
    let rows: Vec<T> = range.within(all, at).take(RANGE_ROWS).try_collect().await?;
    let total = rows.len() as u64;
    let mut listing = Listing::new(rows, total, None, filters);
    listing.capped = listing.rows.len() >= RANGE_ROWS;
    Ok(listing)
}

/// Every row of every page, each page fetched when the stream reaches it.
/// `fetch` takes the cursor (none for the first page) and gives the page's
/// rows and the next cursor (none or empty on the last page).
pub fn all_pages<T, E, F, Fut>(mut fetch: F) -> impl Stream<Item = Result<T, E>>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, Option<String>), E>>,
{
    stream::try_unfold(Some(None), move |cursor: Option<Option<String>>| {
        let next = cursor.map(&mut fetch);
        async move {
            let Some(next) = next else {
                return Ok(None);
            };
            let (rows, cursor) = next.await?;
            let after = cursor.filter(|c| !c.is_empty()).map(Some);
            Ok(Some((stream::iter(rows.into_iter().map(Ok)), after)))
        }
    })
    .try_flatten()
}

/// One page of a list the service reads by cursor: its rows, how many
/// match in all, and the next page's cursor (none on the last).
pub struct Page<T> {
    pub rows: Vec<T>,
    pub total: u64,
    pub next: Option<String>,
}

/// The filters of a list the service reads by cursor. An area says how to
/// fetch one page; `load` answers the list page (a page of 25, or every
/// row of the date range chosen) and `every` streams all of it (exports).
pub trait Cursored: Serialize + Clone + Send + 'static {
    type Row: Send + 'static;

    /// The page at `cursor` (none: the first) of at most `limit` rows.
    fn fetch(
        &self,
        client: &Client,
        cursor: Option<String>,
        limit: u32,
    ) -> impl Future<Output = Result<Page<Self::Row>, ApiError>> + Send + 'static + use<Self>;

    /// The "load more" link's cursor, when the filters hold one.
    fn cursor(&self) -> Option<String>;

    fn range(&self) -> Range;

    /// When a row was created, for the date range.
    fn created(row: &Self::Row) -> DateTime<Utc>;
}

/// Every row the filters match (dates aside), newest first, fetched a
/// page of 100 at a time as the stream reaches it.
pub fn every<F: Cursored>(
    client: &Client,
    filters: &F,
) -> impl Stream<Item = Result<F::Row, ApiError>> + 'static {
    let (client, filters) = (client.clone(), filters.clone());
    all_pages(move |cursor| {
        filters
            .fetch(&client, cursor, 100)
            .map_ok(|page| (page.rows, page.next))
    })
}

/// The page the filters ask for (see `page_or_range`).
pub async fn load<F: Cursored>(client: &Client, filters: &F) -> Result<Listing<F::Row>, ApiError> {
    let page = async {
        let p = filters.fetch(client, filters.cursor(), 25).await?;
        Ok(Listing::new(p.rows, p.total, p.next.as_deref(), filters))
    };
    page_or_range(filters.range(), page, every(client, filters), F::created, filters).await
}

/// A row of a CSV export: the file's header and the row's fields.
pub trait CsvRecord {
    const HEADER: &'static [&'static str];
    fn fields(self) -> Vec<String>;
}

/// The line that ends an export a failure cut short.
fn incomplete(e: PortalError) -> Bytes {
    let reason = match &e {
        PortalError::Upstream(api) => describe_upstream(api).0,
        other => {
            tracing::error!(error = %other, "an export stopped");
            "something went wrong on our side; export again".to_owned()
        }
    };
    Bytes::from(format!("# export incomplete: {reason}\n"))
}

/// Records per chunk of an export, at most.
const EXPORT_CHUNK: usize = 1000;

/// Streams `records` as a CSV download named `name-<time>.csv`. The first
/// record is fetched before answering, so a refusal is a readable error
/// page rather than a broken download; a failure later ends the file with
/// a line saying it is incomplete.
pub async fn export<T, E>(
    name: &str,
    records: impl Stream<Item = Result<T, E>> + 'static,
) -> Result<HttpResponse, PortalError>
where
    T: CsvRecord + 'static,
    E: Into<PortalError> + 'static,
{
    let mut records = Box::pin(records);
    let first = records.next().await.transpose().map_err(Into::into)?;
    let mut head = csv::Lines::new();
    head.record(T::HEADER);
    if let Some(r) = first {
        head.record(r.fields());
    }
    let head = stream::iter([Ok::<_, actix_web::Error>(head.finish())]);
    // The lines of the records already read go out as one chunk, written
    // by one writer: a chunk or a writer per line costs more than the line.
    let body = head.chain(records.ready_chunks(EXPORT_CHUNK).map(|batch| {
        let mut chunk = csv::Lines::new();
        for record in batch {
            match record {
                Ok(r) => chunk.record(r.fields()),
                Err(e) => chunk.raw(&incomplete(e.into())),
            }
        }
        Ok(chunk.finish())
    }));
    let filename = format!("{name}-{}.csv", chrono::Utc::now().format("%Y%m%d-%H%M%S"));
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "text/csv; charset=utf-8"))
        .insert_header((
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{filename}\""),
        ))
        .streaming(body))
}

/// A CSV download of rows already read (lists the service or the portal
/// hands over whole), as `export` streams it.
pub async fn export_rows<T: CsvRecord + 'static>(
    name: &str,
    rows: Vec<T>,
) -> Result<HttpResponse, PortalError> {
    export(name, stream::iter(rows.into_iter().map(Ok::<_, PortalError>))).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Filters {
        #[serde(rename = "type")]
        kind: String,
        status: String,
        cursor: String,
    }

    #[test]
    fn the_next_page_keeps_the_filters_and_drops_empty_ones() {
        let f = Filters {
            kind: "DEPOSIT".into(),
            status: String::new(),
            cursor: "old".into(),
        };
        assert_eq!(query(&f, Some("c 2")), "type=DEPOSIT&cursor=c+2");
        assert_eq!(query(&f, None), "type=DEPOSIT");
        let page = Listing::new(vec![1], 3, Some(""), &f);
        assert_eq!(page.next, None, "an empty cursor is the last page");
    }

    #[tokio::test]
    async fn all_pages_reads_until_the_last_cursor() {
        let pages = all_pages(|cursor: Option<String>| async move {
            Ok::<_, ApiError>(match cursor.as_deref() {
                None => (vec![1, 2], Some("b".to_owned())),
                Some("b") => (vec![3], Some(String::new())),
                _ => unreachable!("no page after the last"),
            })
        });
        let rows: Vec<i32> = pages.try_collect().await.unwrap();
        assert_eq!(rows, vec![1, 2, 3]);
    }
}
