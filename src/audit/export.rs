//! Writing a log's bundle (see `bundle`): the checkpoint of the log's head
//! signed first, so that an export of everything is covered to its last
//! record; then the records of the range, read in batches and streamed.

use actix_web::web::Bytes;
use chrono::{DateTime, Utc};
use futures_util::{stream, Stream, StreamExt, TryStreamExt};
use serde_json::json;
use sqlx::PgPool;
use tokio::sync::mpsc;

use super::bundle::{Header, Line, Record, FORMAT};
use super::store::{self, AuditFilter, AuditRow, Log};
use super::{checkpoint, outcome, Actor, Event, NewRecord};
use crate::crypto::MasterKey;

/// What a bundle holds: one log's records between two moments (either
/// open).
pub struct Range {
    pub from: Option<DateTime<Utc>>,
    pub to: Option<DateTime<Utc>>,
}

fn line(l: &Line) -> Bytes {
    let mut text = serde_json::to_string(l).expect("bundle lines serialize");
    text.push('\n');
    Bytes::from(text)
}

/// `log`'s bundle for `range`, as lines to stream. The export itself is
/// audited in that log (after the range, so it is in the next one).
pub async fn bundle_for(
    pool: &PgPool,
    key: &MasterKey,
    log: Log,
    actor: &Actor,
    range: Range,
) -> Result<impl Stream<Item = Result<Bytes, sqlx::Error>> + 'static, sqlx::Error> {
    let signing = key.derive_audit_signing_key();
    store::link(pool, log).await?;
    if range.to.is_none() {
        checkpoint::sign(pool, &signing, log, None).await?;
    }
    let seqs = store::seq_range(pool, log, range.from, range.to).await?;
    let checkpoints = match seqs {
        Some(covering) => store::checkpoints(pool, log, Some(covering), i64::MAX).await?,
        None => Vec::new(),
    };
    let details = json!({ "format": FORMAT, "records": seqs.map_or(0, |(a, b)| b - a + 1) });
    let exported = NewRecord::new(
        actor,
        log.tenant_id(),
        Event::AuditExported,
        "audit_log",
        outcome::SUCCESS,
    );
    store::append(pool, &[exported.with_details(details)]).await?;
    let header = Line::Header(Header {
        format: FORMAT.to_owned(),
        log: log.to_string(),
        public_key: hex::encode(signing.verifying_key().as_bytes()),
        exported_at: Utc::now(),
    });
    let head = std::iter::once(header)
        .chain(checkpoints.into_iter().map(Line::Checkpoint))
        .map(|l| Ok(line(&l)));
    let (first, last) = seqs.unwrap_or((1, 0));
    Ok(stream::iter(head).chain(records(pool.clone(), log, first - 1, last)))
}

/// The log's records after `after` through `through`, in order, as lines.
fn records(
    pool: PgPool,
    log: Log,
    after: i64,
    through: i64,
) -> impl Stream<Item = Result<Bytes, sqlx::Error>> {
    stream::try_unfold(Some(after), move |cursor| {
        let pool = pool.clone();
        async move {
            let Some(after) = cursor.filter(|a| *a < through) else {
                return Ok::<_, sqlx::Error>(None);
            };
            let rows = store::in_log(&pool, log, after, through, 1000).await?;
            let next = rows.last().and_then(|r| r.seq);
            let lines = rows.into_iter().filter_map(|r| {
                let seq = r.seq?;
                Some(Ok(line(&Line::Record(Record::of(r, seq)))))
            });
            Ok(Some((stream::iter(lines.collect::<Vec<_>>()), next)))
        }
    })
    .try_flatten()
}

/// Records read ahead of the CSV being written, at most, in batches of
/// `SEND_BATCH`: a wake-up per record cost more than the record (a fifth
/// of a profiled export was threads waking each other).
const READ_AHEAD: usize = 16;
const SEND_BATCH: usize = 256;

/// Every record matching `filter`, newest first, from one streamed
/// statement read by a task of its own: Postgres and the decoding run
/// while the CSV is written, and the bounded channel between them keeps
/// memory flat. The statement ends when the stream is dropped.
pub fn matching(
    pool: PgPool,
    log: Log,
    filter: AuditFilter,
) -> impl Stream<Item = Result<AuditRow, sqlx::Error>> {
    let (tx, mut rx) = mpsc::channel(READ_AHEAD);
    tokio::spawn(async move {
        if let Err(e) = store::send_matching(&pool, log, &filter, SEND_BATCH, &tx).await {
            // The reader has gone when this fails too; nothing to tell.
            let _ = tx.send(Err(e)).await;
        }
    });
    stream::poll_fn(move |cx| rx.poll_recv(cx)).flat_map(|batch| match batch {
        Ok(rows) => stream::iter(rows.into_iter().map(Ok)).left_stream(),
        Err(e) => stream::iter([Err(e)]).right_stream(),
    })
}
