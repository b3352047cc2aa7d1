//! `--data-dir DIR`: the sandbox's state kept in an embedded SQLite
//! database (`DIR/sandbox.sqlite3`, through rusqlite with SQLite bundled),
//! so that every write the sandbox acknowledged survives `kill -9` and a
//! restart, and clock-driven steps resume.
//!
//! One mechanism for every area: each area keeps its records in a record
//! book (`book::Book<R>`), and each record is its own row of `record_rows`,
//! keyed by one integer made of its company's slot, its order (one counter
//! for every book, so the records a write adds append side by side) and
//! its kind (the key is all a row needs besides its body); a book hands out only the records changed since the
//! last keep (and the keys it dropped), so a write costs what it changed,
//! not the company's history. What is not in a book (name, webhook
//! setting, wallets, faults, pending clock-driven steps…) is the company's
//! head row in `company_heads`, keyed by its slot: its snapshot document
//! with every book left empty, written only when it changed. What is
//! derived from records is not kept at all (wallet totals, a quote's
//! consumption: `Company::reindex` rebuilds it at load). A keep writes,
//! in one journal frame before the answer is sent, the changed heads and
//! rows of the companies touched since the last keep, the shared state
//! (clock offset, market prices, the Lightning node key) when it changed,
//! and the nonces of the writes kept. Writes are kept by one keeper thread
//! (`Shared::keep_write`) that takes every write waiting and keeps them in
//! one frame (group commit); the worker goes on serving meanwhile.
//! Under the state's lock the keeper takes the changed records encoded
//! (encoding them costs about what copying them to encode later did).
//!
//! A keep does not write those rows where they belong: it appends them,
//! with the nonces and the shared state, as one frame of the journal file
//! `DIR/journal.log` (one `write` of entries one after the other, see
//! `PUT` and the others), and the write is answered once that returned.
//! A keep that takes the journal past `JOURNAL_BYTES`, and every start,
//! folds the journal into `record_rows`, `company_heads`, `write_nonces`
//! and `meta` in one SQLite transaction and then empties it. So a commit
//! is one system call, not a SQLite transaction with its log frames and
//! their checkpoints (the journal used to be a table: every commit's pages
//! were written to SQLite's log, copied into the database by a checkpoint
//! with its fsyncs, read back by the fold and freed again), and the fold
//! writes each page of those tables once for many commits (measured in
//! `bench/README.md`). A write cut short by `kill -9` was never answered:
//! its frame, cut short (its declared size runs past the journal's end or
//! into a whole frame another sandbox appended after it), is skipped with
//! a warning. A frame whose size fits but whose CRC-32 fails (a flipped
//! byte), or bytes that are no frame, are damage to an acknowledged
//! write: the start refuses, naming the record, its byte offset and the
//! records after it, and `--repair` drops that record and every one after
//! it (a consistent prefix of the writes), saying so in the log. The
//! marker file (`MARKER_FILE`, rewritten after each fold) names the
//! store's id and its count of folds: a store that no longer holds that
//! id (emptied, replaced) or committed fewer folds, or one that holds
//! nothing while the journal holds writes, lost what it held, and the
//! start refuses; `--repair` goes on from what it holds, dropping the
//! journal's writes on the lost store. The directory is created 0700 and
//! its files 0600 (they hold client secrets and revealed card numbers). Replaying a frame twice changes nothing (each
//! entry sets a row, removes one or inserts a nonce if missing), so a
//! crash between a fold's commit and the journal being emptied only
//! replays it at the next start. Another sandbox on the same directory
//! appends to the same file (`O_APPEND`); a fold holds the file's
//! exclusive lock and each append a shared one, so no frame lands between
//! a fold's read and its emptying. Write nonces are keyed by their expiry,
//! so they append, and expired ones are deleted by a fold once a minute at
//! most. A reset or a restored snapshot rewrites all of its company's rows.
//!
//! The format is versioned (`meta` key `format`, `FORMAT`): format 4 is
//! format 2 with the journal file; format 3 kept the journal as table
//! `journal`, which is folded and dropped when a format 3 directory is
//! opened, and a format 2 directory (no journal) gets format 4 as it is. Format 2 keeps heads and records as MessagePack (rmp-serde, fields by name). Named
//! fields keep it self-describing, which the records need: amounts and
//! decimals read either strings or numbers (`deserialize_any`), metadata
//! are JSON values and many fields are skipped when empty, none of which a
//! positional format (postcard, bincode) reads back. Against JSON it drops
//! the quotes, separators and escaping, and writes ids as 16 bytes. A
//! directory of an older format is read and rewritten whole at the start:
//! format 1 (JSON rows, tables `heads` and `records` with company and kind
//! columns) and the first one (one whole snapshot document per company,
//! table `companies`, and table `nonces`); their tables are dropped in the
//! same transaction. A directory of any other format (a newer sandbox's)
//! is refused with the format it holds.
//!
//! Why SQLite for the tables: it is the most widely used embedded store
//! there is, and with the journal in front of it, it sees one transaction
//! per fold, not one per write. redb, the other candidate, would fsync
//! every commit. Durability: a frame is in the kernel's page cache once
//! its `write` returned, so it survives the sandbox's crash or `kill -9`
//! (not a power loss: the journal is not synced at each write). The
//! tables are kept with `synchronous=NORMAL`: a fold's commit is synced
//! at the next checkpoint, not at once, so a power loss may lose what was
//! written since the last checkpoint (the journal emptied, the fold not
//! on disk), as the journal table with its commits did before. Syncing
//! every fold measured stalls of the keeper, and every client waiting on
//! it, whenever the disk was busy (`bench/README.md`).
//!
//! Decisions where the documents are silent: the nonces of GET requests
//! are not kept (replaying a read changes nothing); webhook deliveries
//! waiting for a retry and the request journal are not kept (after a
//! restart, events not yet delivered are not retried); the fixture the
//! directory was first started with is kept in it and used on every later
//! start, and another fixture given for the same directory is refused.

mod files;
mod journal;
mod keep;
mod load;
mod marker;
mod open;
mod rows;
#[cfg(test)]
mod tests;

use std::fs::File;
use std::path::PathBuf;
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension};
use serde::de::DeserializeOwned;
use serde::Serialize;
use uuid::Uuid;

/// One changed row of a book, as the data directory writes it.
pub enum RowChange {
    /// Insert or replace the record with this key: its order and its row
    /// (`disk::encode`). The row is encoded under the state's lock, where
    /// a copy of the record used to be taken to encode later: MessagePack
    /// costs about what the copy did, and the copy's allocations go.
    Put { key: String, ord: u64, body: Vec<u8> },
    /// The record with this key and order is gone.
    Delete { key: String, ord: u64 },
}

/// The format this sandbox writes (see the module's comment).
pub const FORMAT: u32 = 4;

/// Tables of the older formats, read once and then dropped.
const LEGACY_TABLES: [&str; 4] = ["companies", "heads", "records", "nonces"];

#[derive(Debug, thiserror::Error)]
pub enum DiskError {
    #[error("the data directory {path} can't be used: {source}")]
    Directory { path: String, source: std::io::Error },
    #[error("the sandbox's database failed: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("the data directory holds state this sandbox can't read: {0}")]
    Unreadable(String),
    #[error("the data directory holds format {found}, which a newer sandbox wrote; this sandbox reads formats up to {FORMAT}: use that sandbox, or an empty directory")]
    Format { found: String },
    #[error("the data directory's journal failed: {0}")]
    Journal(#[from] std::io::Error),
    #[error("keeping the state was interrupted: {0}")]
    Interrupted(String),
    #[error("the data directory was started with another fixture; give the same fixture, none, or an empty directory")]
    OtherFixture,
    /// The journal holds a record that is whole in size but fails its
    /// checksum (or bytes that are no record): an acknowledged write was
    /// damaged on disk. Refused unless the start repairs.
    #[error("the data directory is damaged: {0}; start with --repair to drop the damaged record and every record after it (a start never drops them without saying so)")]
    Damaged(String),
    /// The store holds less than the journal or the marker says it held.
    #[error("the data directory's store lost what it held: {0}; restore the directory from a copy, or start with --repair to go on from what the store holds now")]
    StoreLost(String),
}

/// A row's body as kept: MessagePack (format 2), or the JSON text of an
/// older format.
pub enum Body {
    Packed(Vec<u8>),
    Json(String),
}

impl Body {
    pub fn decode<T: DeserializeOwned>(&self) -> Result<T, String> {
        match self {
            Body::Packed(bytes) => rmp_serde::from_slice(bytes).map_err(|e| e.to_string()),
            Body::Json(text) => serde_json::from_str(text).map_err(|e| e.to_string()),
        }
    }
}

/// Appends `value` as format 2 keeps it.
pub fn encode<T: Serialize + ?Sized>(value: &T, out: &mut Vec<u8>) -> Result<(), rmp_serde::encode::Error> {
    value.serialize(&mut rmp_serde::Serializer::new(out).with_struct_map())
}

/// The kept shared state besides the companies.
pub struct Globals {
    pub clock_offset_ms: i64,
    /// The market as JSON.
    pub market: String,
    pub node_secret: String,
}

/// What one write keeps of a company: its head row (the snapshot
/// document with its books left empty, encoded) when it changed, and the
/// rows of its books that changed.
pub struct CompanyWrite {
    pub id: Uuid,
    /// The company's place in the fixture (part of its rows' ids).
    pub slot: usize,
    /// Every row of the company is written anew (a reset or a restored
    /// snapshot): the rows it had are dropped first.
    pub replaced: bool,
    /// None when the head did not change since it was last written.
    pub head: Option<Vec<u8>>,
    /// (the kind's place among the company's books, change) of each
    /// changed record.
    pub rows: Vec<(usize, RowChange)>,
}

/// What one acknowledged write keeps.
pub struct Write {
    pub companies: Vec<CompanyWrite>,
    /// None when an earlier write already covered the state.
    pub globals: Option<Globals>,
    /// The nonces of the writes kept: client, nonce, and when it may be
    /// forgotten (Unix seconds).
    pub nonces: Vec<(Uuid, String, i64)>,
}

/// A record as a start finds it.
pub struct KeptRow {
    /// The kind's place among the company's books.
    pub kind: usize,
    pub ord: u64,
    pub body: Body,
}

/// A company as a start finds it: its head row (or an older format's
/// whole document) and its records' rows, in order.
pub struct KeptCompany {
    pub head: Body,
    pub rows: Vec<KeptRow>,
}

/// What a start finds in the directory.
pub struct Kept {
    pub companies: Vec<KeptCompany>,
    pub globals: Option<Globals>,
    pub nonces: Vec<(Uuid, String, i64)>,
    /// Read from an older format: every company is to be written anew.
    pub legacy: bool,
}

pub struct Disk {
    conn: Mutex<Connection>,
    upkeep: Mutex<Upkeep>,
    /// The older format's tables still there (dropped by the next keep,
    /// which rewrites every company).
    legacy: Mutex<Vec<&'static str>>,
    /// The journal file, opened for appending.
    journal: File,
    /// `--repair`: a damaged journal record and those after it are
    /// dropped (and said), a store that lost data is accepted as it is.
    repair: bool,
    /// Where the marker file is (see `MARKER_FILE`).
    marker: PathBuf,
}

/// What the keeps carry from one to the next.
#[derive(Default)]
struct Upkeep {
    /// When expired nonces were last deleted (Unix seconds).
    purged_at: i64,
    /// The bytes this process appended to the journal since it was last
    /// folded (a second sandbox on the directory appends its own; either
    /// folds all of it).
    journal_bytes: usize,
    /// The journal frame being written, its buffer reused keep after keep.
    frame: Vec<u8>,
}

/// The journal file in the data directory.
const JOURNAL_FILE: &str = "journal.log";

/// The database file in the data directory.
const STORE_FILE: &str = "sandbox.sqlite3";

/// The marker file: the store's id and how many folds it committed
/// (`store_id` and `folds` in its `meta`), written after each fold. A
/// store that lost what it held (emptied, replaced, or older than the
/// marker) no longer matches it, and the start refuses instead of going
/// on from less than was acknowledged.
const MARKER_FILE: &str = "store.marker";

/// The journal bytes past which a keep folds the journal into the tables
/// (see the module's comment).
const JOURNAL_BYTES: usize = 1 << 20;

/// SQLite's page cache, in KiB as its negative value says (its default
/// is 2 MiB): the pages a fold writes stay in memory instead of being
/// read again from the file.
const CACHE_KIB: i64 = -16_384;

/// SQLite's page size for a new database (its default is 4 KiB): when
/// the journal was a table, 8 KiB pages measured about a tenth less
/// keeper CPU per quote+order pair than 4 KiB, and 16 KiB no better than 8
/// (`bench/README.md`).
const PAGE_BYTES: u32 = 8_192;

fn table_exists(conn: &Connection, name: &str) -> Result<bool, DiskError> {
    Ok(conn
        .query_row(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1",
            [name],
            |_| Ok(()),
        )
        .optional()?
        .is_some())
}
