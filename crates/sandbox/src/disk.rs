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

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write as _};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use rusqlite::{params, Connection, OptionalExtension};
use rustix::fs::FlockOperation;
use serde::de::DeserializeOwned;
use serde::Serialize;
use uuid::Uuid;

use crate::book::RowChange;
use crate::fixture::Fixture;

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

/// Files of the data directory hold client secrets and revealed card
/// numbers: readable and writable by their owner only.
const FILE_MODE: u32 = 0o600;
const DIR_MODE: u32 = 0o700;

/// A journal frame: this mark, the entries' length (u32) and their CRC-32
/// (u32), little-endian, then the entries. The mark lets a reader find
/// the next frame after a torn one.
const FRAME_MARK: [u8; 4] = *b"PDJ4";
const FRAME_HEAD: usize = 12;

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

/// A record's row id: its company's slot, its order (one counter for all
/// books, `book::NEXT_ORD`) and its kind's place among the company's
/// books, in one integer, so the records a write adds are appended side
/// by side at the end of the company's range (SQLite writes one leaf page
/// for them, not one per kind) and a company's rows are one range.
const ORD_BITS: u32 = 45;
const KIND_BITS: u32 = 6;
const SLOT_BITS: u32 = 12;

fn row_id(slot: usize, kind: usize, ord: u64) -> Result<i64, DiskError> {
    if slot >= 1 << SLOT_BITS || kind >= 1 << KIND_BITS || ord >= 1 << ORD_BITS {
        return Err(DiskError::Unreadable(format!(
            "a record beyond what a row id holds (company {slot}, kind {kind}, order {ord})"
        )));
    }
    Ok(((slot as i64) << (ORD_BITS + KIND_BITS)) | ((ord as i64) << KIND_BITS) | kind as i64)
}

/// (slot, kind, order) of a row id.
fn row_parts(id: i64) -> (i64, usize, u64) {
    (
        id >> (ORD_BITS + KIND_BITS),
        (id & ((1 << KIND_BITS) - 1)) as usize,
        ((id >> KIND_BITS) & ((1 << ORD_BITS) - 1)) as u64,
    )
}

/// The row ids of a company's records.
fn company_rows(slot: usize) -> (i64, i64) {
    let low = (slot as i64) << (ORD_BITS + KIND_BITS);
    (low, low + (1i64 << (ORD_BITS + KIND_BITS)) - 1)
}

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

impl Disk {
    /// Opens (or creates) the database in `dir`; refuses a format this
    /// sandbox does not read.
    ///
    /// `repair` (`--repair`): go on past a damaged journal record (dropping
    /// it and every record after it) and from a store that lost data,
    /// saying so in the log; without it both refuse the start.
    pub fn open(dir: &Path, repair: bool) -> Result<Self, DiskError> {
        let directory = |source| DiskError::Directory {
            path: dir.display().to_string(),
            source,
        };
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(DIR_MODE)
            .create(dir)
            .map_err(directory)?;
        // SQLite creates its database, and its WAL and shared-memory files
        // with the database's mode: created here first, owner-only, and an
        // older directory's files narrowed to it.
        let store = dir.join(STORE_FILE);
        owner_only(&store, true).map_err(directory)?;
        for extra in ["sandbox.sqlite3-wal", "sandbox.sqlite3-shm", MARKER_FILE] {
            owner_only(&dir.join(extra), false).map_err(directory)?;
        }
        let mut conn = Connection::open(&store)?;
        // Before anything is written, so that a refused start changes
        // nothing.
        let lost = Self::lost_store(&conn, dir)?;
        if let (Some(lost), false) = (&lost, repair) {
            return Err(DiskError::StoreLost(lost.clone()));
        }
        // Before anything is written: a database keeps the page size it was
        // created with (one made by an earlier sandbox keeps 4 KiB).
        conn.pragma_update(None, "page_size", PAGE_BYTES)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "cache_size", CACHE_KIB)?;
        // Another sandbox may open the same directory (the portal's tests
        // start a second one beside the first): wait for its write rather
        // than fail.
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS company_heads (slot INTEGER PRIMARY KEY, body BLOB NOT NULL);
             CREATE TABLE IF NOT EXISTS record_rows (id INTEGER PRIMARY KEY, body BLOB NOT NULL);
             CREATE TABLE IF NOT EXISTS write_nonces (expires INTEGER NOT NULL, client TEXT NOT NULL,
                 nonce TEXT NOT NULL, PRIMARY KEY (expires, client, nonce)) WITHOUT ROWID;",
        )?;
        let mut legacy = Vec::new();
        for table in LEGACY_TABLES {
            if table_exists(&conn, table)? {
                legacy.push(table);
            }
        }
        match Self::meta(&conn, "format")? {
            Some(found) if found == FORMAT.to_string() => {}
            // Format 2 is format 4 with an empty journal, format 3 format 4
            // with the journal in a table.
            Some(found) if found == "2" || found == "3" => {
                let tx = conn.transaction()?;
                if table_exists(&tx, "journal")? {
                    {
                        let mut folder = Folder::new(&tx)?;
                        let mut rows = tx.prepare("SELECT body FROM journal ORDER BY seq")?;
                        let mut rows = rows.query([])?;
                        while let Some(row) = rows.next()? {
                            let body = row
                                .get_ref(0)?
                                .as_blob()
                                .map_err(|e| DiskError::Unreadable(e.to_string()))?;
                            folder.apply(body)?;
                        }
                    }
                    tx.execute_batch("DROP TABLE journal")?;
                }
                tx.execute(
                    "UPDATE meta SET value = ?1 WHERE key = 'format'",
                    [FORMAT.to_string()],
                )?;
                tx.commit()?;
            }
            Some(found) => return Err(DiskError::Format { found }),
            // Format 1 and the first one wrote no format: they are read,
            // and the first keep writes the format with their rows.
            None if !legacy.is_empty() => {}
            None => {
                conn.execute(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES ('format', ?1)",
                    [FORMAT.to_string()],
                )?;
            }
        }
        let journal = File::options()
            .read(true)
            .append(true)
            .create(true)
            .mode(FILE_MODE)
            .open(dir.join(JOURNAL_FILE))?;
        journal.set_permissions(std::fs::Permissions::from_mode(FILE_MODE))?;
        let disk = Disk {
            conn: Mutex::new(conn),
            upkeep: Mutex::new(Upkeep::default()),
            legacy: Mutex::new(legacy),
            journal,
            repair,
            marker: dir.join(MARKER_FILE),
        };
        if let Some(lost) = lost {
            disk.drop_journal(&lost)?;
        }
        disk.settle_marker()?;
        Ok(disk)
    }

    /// Compares the store with the marker and the journal, before
    /// anything is written: a store whose id is not the marker's (emptied
    /// or replaced), that committed fewer folds than the marker saw, or
    /// that holds nothing while the journal holds writes, lost what it
    /// held. Says how, if so.
    fn lost_store(conn: &Connection, dir: &Path) -> Result<Option<String>, DiskError> {
        // The marker first: it is written after the store committed, so
        // read before the store it never says more than another sandbox
        // on the directory committed meanwhile.
        let marker = match std::fs::read_to_string(dir.join(MARKER_FILE)) {
            Ok(text) => Some(
                Marker::parse(&text)
                    .ok_or_else(|| DiskError::StoreLost(format!("{MARKER_FILE} can't be read ({text:?})")))?,
            ),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e.into()),
        };
        let meta = |key: &str| -> Result<Option<String>, DiskError> {
            if table_exists(conn, "meta")? {
                Self::meta(conn, key)
            } else {
                Ok(None)
            }
        };
        let store_id = meta("store_id")?;
        let folds: u64 = meta("folds")?.and_then(|f| f.parse().ok()).unwrap_or(0);
        let journal_bytes = match std::fs::metadata(dir.join(JOURNAL_FILE)) {
            Ok(m) => m.len(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
            Err(e) => return Err(e.into()),
        };
        let holds_nothing = store_id.is_none() && meta("fixture")?.is_none();
        Ok(match (&marker, &store_id) {
            (Some(m), None) => Some(format!(
                "{STORE_FILE} holds no store, while {MARKER_FILE} says it held store {} after {} folds",
                m.store_id, m.folds
            )),
            (Some(m), Some(id)) if *id != m.store_id => Some(format!(
                "{STORE_FILE} holds store {id}, while {MARKER_FILE} says it held store {}",
                m.store_id
            )),
            (Some(m), Some(_)) if folds < m.folds => Some(format!(
                "{STORE_FILE} committed {folds} folds of the journal, while {MARKER_FILE} saw {}",
                m.folds
            )),
            (None, None) if holds_nothing && journal_bytes > 0 => Some(format!(
                "{STORE_FILE} holds nothing, while {JOURNAL_FILE} holds {journal_bytes} bytes of writes made on a store"
            )),
            _ => None,
        })
    }

    /// After a repaired loss, drops the journal's writes: they were made
    /// on the store that was lost, and on what is left they would make a
    /// state that never was.
    fn drop_journal(&self, lost: &str) -> Result<(), DiskError> {
        let bytes = self.journal.metadata()?.len();
        tracing::warn!(
            "--repair: {lost}; going on from what the store holds now, the journal's {bytes} bytes of writes on the lost store dropped"
        );
        flock(&self.journal, FlockOperation::LockExclusive)?;
        let emptied = self.journal.set_len(0);
        flock(&self.journal, FlockOperation::Unlock)?;
        Ok(emptied?)
    }

    /// Gives a new store its id and writes the marker with what the store
    /// holds.
    fn settle_marker(&self) -> Result<(), DiskError> {
        let conn = self.conn();
        conn.execute(
            "INSERT OR IGNORE INTO meta (key, value) VALUES ('store_id', ?1)",
            [Uuid::new_v4().to_string()],
        )?;
        let store_id = Self::meta(&conn, "store_id")?.unwrap_or_default();
        let folds: u64 = Self::meta(&conn, "folds")?
            .and_then(|f| f.parse().ok())
            .unwrap_or(0);
        self.write_marker(&Marker { store_id, folds })
    }

    /// Writes the marker whole (a new file renamed over the old one).
    fn write_marker(&self, marker: &Marker) -> Result<(), DiskError> {
        let next = self.marker.with_extension("next");
        let mut file = File::options()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(FILE_MODE)
            .open(&next)?;
        file.write_all(marker.to_string().as_bytes())?;
        drop(file);
        std::fs::rename(&next, &self.marker)?;
        Ok(())
    }

    fn upkeep(&self) -> MutexGuard<'_, Upkeep> {
        self.upkeep
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn legacy(&self) -> MutexGuard<'_, Vec<&'static str>> {
        self.legacy
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn meta(conn: &Connection, key: &str) -> Result<Option<String>, DiskError> {
        Ok(conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |row| row.get(0))
            .optional()?)
    }

    /// The fixture the directory was first started with, if any.
    pub fn kept_fixture(&self) -> Result<Option<Fixture>, DiskError> {
        Self::meta(&self.conn(), "fixture")?
            .map(|text| serde_json::from_str(&text).map_err(|e| DiskError::Unreadable(e.to_string())))
            .transpose()
    }

    /// The fixture to build from: the kept one (the given one must match
    /// it), else the given one, kept now with every company's id filled in
    /// so ids stay the same across starts.
    pub fn settle_fixture(&self, given: &Fixture) -> Result<Fixture, DiskError> {
        if let Some(kept) = self.kept_fixture()? {
            let same = kept.companies.len() == given.companies.len()
                && kept.companies.iter().zip(&given.companies).all(|(k, g)| {
                    g.id.is_none_or(|id| Some(id) == k.id)
                        && serde_json::to_value(&k.clients).ok() == serde_json::to_value(&g.clients).ok()
                        && k.balances == g.balances
                });
            return if same {
                Ok(kept)
            } else {
                Err(DiskError::OtherFixture)
            };
        }
        let mut fixture = given.clone();
        for company in &mut fixture.companies {
            company.id.get_or_insert_with(Uuid::new_v4);
        }
        let text = serde_json::to_string(&fixture).map_err(|e| DiskError::Unreadable(e.to_string()))?;
        self.conn()
            .execute("INSERT INTO meta (key, value) VALUES ('fixture', ?1)", [text])?;
        Ok(fixture)
    }

    /// Everything kept, for a start. `kinds` names the books' kinds in
    /// their order (the rows of format 1 name their kind).
    pub fn load(&self, kinds: &[&str], now_unix: i64) -> Result<Kept, DiskError> {
        self.fold(&mut self.upkeep(), now_unix, false)?;
        let conn = self.conn();
        let mut rows_of: BTreeMap<i64, Vec<KeptRow>> = BTreeMap::new();
        {
            let mut all = conn.prepare("SELECT id, body FROM record_rows ORDER BY id")?;
            let mut rows = all.query([])?;
            while let Some(row) = rows.next()? {
                let (slot, kind, ord) = row_parts(row.get(0)?);
                rows_of.entry(slot).or_default().push(KeptRow {
                    kind,
                    ord,
                    body: Body::Packed(row.get(1)?),
                });
            }
        }
        let mut companies = conn
            .prepare("SELECT slot, body FROM company_heads")?
            .query_map([], |row| Ok((row.get::<_, i64>(0)?, row.get::<_, Vec<u8>>(1)?)))?
            .map(|row| {
                let (slot, head) = row?;
                Ok(KeptCompany {
                    head: Body::Packed(head),
                    rows: rows_of.remove(&slot).unwrap_or_default(),
                })
            })
            .collect::<Result<Vec<_>, DiskError>>()?;
        let legacy = self.legacy().clone();
        companies.extend(Self::load_legacy(&conn, &legacy, kinds)?);
        let globals = match (
            Self::meta(&conn, "clock_offset_ms")?,
            Self::meta(&conn, "market")?,
            Self::meta(&conn, "node_secret")?,
        ) {
            (Some(offset), Some(market), Some(node_secret)) => Some(Globals {
                clock_offset_ms: offset
                    .parse()
                    .map_err(|_| DiskError::Unreadable("the clock offset".to_owned()))?,
                market,
                node_secret,
            }),
            _ => None,
        };
        let query = if legacy.contains(&"nonces") {
            "SELECT client, nonce, expires FROM nonces WHERE expires > ?1
             UNION ALL SELECT client, nonce, expires FROM write_nonces WHERE expires > ?1
             ORDER BY expires"
        } else {
            "SELECT client, nonce, expires FROM write_nonces WHERE expires > ?1"
        };
        let nonces = conn
            .prepare(query)?
            .query_map([now_unix], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, i64>(2)?,
                ))
            })?
            .filter_map(|row| {
                row.ok()
                    .and_then(|(c, n, e)| Uuid::parse_str(&c).ok().map(|c| (c, n, e)))
            })
            .collect();
        Ok(Kept {
            companies,
            globals,
            nonces,
            legacy: !legacy.is_empty(),
        })
    }

    /// The companies an older format kept: whole documents (table
    /// `companies`), or JSON heads and rows (format 1).
    fn load_legacy(
        conn: &Connection,
        tables: &[&str],
        kinds: &[&str],
    ) -> Result<Vec<KeptCompany>, DiskError> {
        let mut companies = Vec::new();
        if tables.contains(&"companies") {
            let mut documents = conn.prepare("SELECT state FROM companies")?;
            for document in documents.query_map([], |row| row.get::<_, String>(0))? {
                companies.push(KeptCompany {
                    head: Body::Json(document?),
                    rows: Vec::new(),
                });
            }
        }
        if !(tables.contains(&"heads") && tables.contains(&"records")) {
            return Ok(companies);
        }
        let mut rows_of: BTreeMap<String, Vec<KeptRow>> = BTreeMap::new();
        let mut all = conn.prepare("SELECT id, company, kind, body FROM records ORDER BY id")?;
        let mut rows = all.query([])?;
        while let Some(row) = rows.next()? {
            let kind_name: String = row.get(2)?;
            let kind = kinds
                .iter()
                .position(|k| *k == kind_name)
                .ok_or_else(|| DiskError::Unreadable(format!("records of an unknown kind {kind_name}")))?;
            rows_of.entry(row.get(1)?).or_default().push(KeptRow {
                kind,
                // Format 1's row ids put the kind above the order.
                ord: (row.get::<_, i64>(0)? & ((1 << ORD_BITS) - 1)) as u64,
                body: Body::Json(row.get(3)?),
            });
        }
        let mut heads = conn.prepare("SELECT company, state FROM heads")?;
        for head in heads.query_map([], |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?)))? {
            let (company, head) = head?;
            companies.push(KeptCompany {
                head: Body::Json(head),
                rows: rows_of.remove(&company).unwrap_or_default(),
            });
        }
        Ok(companies)
    }

    /// Keeps one write: its records, heads, nonces and shared state as
    /// one frame appended to the journal, folded into the tables once the
    /// journal passes `JOURNAL_BYTES` (see the module's comment).
    pub fn keep(&self, write: Write, now_unix: i64) -> Result<(), DiskError> {
        let mut upkeep = self.upkeep();
        let mut frame = std::mem::take(&mut upkeep.frame);
        frame.clear();
        frame.extend_from_slice(&[0; FRAME_HEAD]);
        let written = put_entries(&write, &mut frame).and_then(|()| {
            if frame.len() > FRAME_HEAD {
                seal(&mut frame)?;
                self.append(&frame)?;
                upkeep.journal_bytes += frame.len();
            }
            Ok(())
        });
        upkeep.frame = frame;
        written?;
        // The first keep after reading an older format (it rewrote every
        // company) folds the rewrite in at once and drops that format's
        // tables.
        let rewritten = !self.legacy().is_empty();
        if rewritten || upkeep.journal_bytes >= JOURNAL_BYTES {
            self.fold(&mut upkeep, now_unix, rewritten)?;
        }
        Ok(())
    }

    /// Appends one sealed frame to the journal in one `write`, under the
    /// file's shared lock (a fold elsewhere holds it exclusively).
    fn append(&self, frame: &[u8]) -> Result<(), DiskError> {
        flock(&self.journal, FlockOperation::LockShared)?;
        let written = (&self.journal).write_all(frame);
        flock(&self.journal, FlockOperation::Unlock)?;
        Ok(written?)
    }

    /// Folds the journal into the tables in one transaction, then empties
    /// it; `rewritten`: the keep rewrote every company an older format
    /// held, whose tables go in the same transaction.
    fn fold(&self, upkeep: &mut Upkeep, now_unix: i64, rewritten: bool) -> Result<(), DiskError> {
        let mut conn = self.conn();
        let mut legacy = self.legacy();
        flock(&self.journal, FlockOperation::LockExclusive)?;
        let folded = (|| -> Result<(), DiskError> {
            let mut journal = Vec::new();
            let mut file = &self.journal;
            file.seek(SeekFrom::Start(0))?;
            file.read_to_end(&mut journal)?;
            let scan = scan(&journal);
            for torn in &scan.torn {
                tracing::warn!(
                    "{JOURNAL_FILE}: a record cut short at byte {torn} (a write interrupted by a crash, never answered) was skipped"
                );
            }
            if let Some(damage) = &scan.damage {
                if !self.repair {
                    return Err(DiskError::Damaged(damage.to_string()));
                }
                tracing::warn!("--repair: {damage}; that record and every one after it were dropped");
            }
            let tx = conn.transaction()?;
            {
                let mut folder = Folder::new(&tx)?;
                for entries in &scan.whole {
                    folder.apply(entries)?;
                }
            }
            tx.execute(
                "INSERT INTO meta (key, value) VALUES ('folds', '1')
                 ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
                [],
            )?;
            let folds: u64 = Self::meta(&tx, "folds")?
                .and_then(|f| f.parse().ok())
                .unwrap_or(0);
            let store_id = Self::meta(&tx, "store_id")?.unwrap_or_default();
            if rewritten {
                if legacy.contains(&"nonces") {
                    tx.execute_batch(
                        "INSERT OR IGNORE INTO write_nonces (expires, client, nonce)
                         SELECT expires, client, nonce FROM nonces",
                    )?;
                }
                for table in legacy.iter() {
                    tx.execute_batch(&format!("DROP TABLE {table}"))?;
                }
                tx.execute(
                    "INSERT INTO meta (key, value) VALUES ('format', ?1)
                     ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    [FORMAT.to_string()],
                )?;
            }
            if now_unix >= upkeep.purged_at + 60 {
                tx.execute("DELETE FROM write_nonces WHERE expires <= ?1", [now_unix])?;
                upkeep.purged_at = now_unix;
            }
            tx.commit()?;
            self.journal.set_len(0)?;
            self.write_marker(&Marker { store_id, folds })?;
            Ok(())
        })();
        flock(&self.journal, FlockOperation::Unlock)?;
        folded?;
        upkeep.journal_bytes = 0;
        if rewritten {
            legacy.clear();
        }
        Ok(())
    }
}

/// Takes or gives back the journal file's lock (`flock(2)`: the whole
/// file, given back by the kernel if the process dies holding it).
fn flock(file: &File, operation: FlockOperation) -> Result<(), DiskError> {
    rustix::fs::flock(file, operation).map_err(|e| DiskError::Journal(e.into()))
}

/// Writes one keep's entries after `out`'s frame head.
fn put_entries(write: &Write, out: &mut Vec<u8>) -> Result<(), DiskError> {
    for company in &write.companies {
        let slot = u32::try_from(company.slot)
            .ok()
            .filter(|slot| *slot < 1 << SLOT_BITS)
            .ok_or_else(|| DiskError::Unreadable(format!("a company beyond the {}th", 1 << SLOT_BITS)))?;
        if company.replaced {
            out.push(CLEAR);
            out.extend_from_slice(&slot.to_le_bytes());
        }
        if let Some(head) = &company.head {
            out.push(HEAD);
            out.extend_from_slice(&slot.to_le_bytes());
            put_bytes(out, head);
        }
        for (kind, change) in &company.rows {
            match change {
                RowChange::Put { ord, body, .. } => {
                    out.push(PUT);
                    out.extend_from_slice(&row_id(company.slot, *kind, *ord)?.to_le_bytes());
                    put_bytes(out, body);
                }
                RowChange::Delete { ord, .. } => {
                    out.push(DELETE);
                    out.extend_from_slice(&row_id(company.slot, *kind, *ord)?.to_le_bytes());
                }
            }
        }
    }
    if let Some(g) = &write.globals {
        for (key, value) in [
            ("clock_offset_ms", g.clock_offset_ms.to_string()),
            ("market", g.market.clone()),
            ("node_secret", g.node_secret.clone()),
        ] {
            out.push(META);
            put_bytes(out, key.as_bytes());
            put_bytes(out, value.as_bytes());
        }
    }
    for (client, nonce, expires) in &write.nonces {
        out.push(NONCE);
        out.extend_from_slice(&expires.to_le_bytes());
        out.extend_from_slice(client.as_bytes());
        put_bytes(out, nonce.as_bytes());
    }
    Ok(())
}

/// Fills in the head of a frame whose entries follow it.
fn seal(frame: &mut [u8]) -> Result<(), DiskError> {
    let (head, entries) = frame.split_at_mut(FRAME_HEAD);
    let len = u32::try_from(entries.len())
        .map_err(|_| DiskError::Unreadable("a write of more than 4 GiB".to_owned()))?;
    head[..4].copy_from_slice(&FRAME_MARK);
    head[4..8].copy_from_slice(&len.to_le_bytes());
    head[8..].copy_from_slice(&crc32fast::hash(entries).to_le_bytes());
    Ok(())
}

/// What a read of the journal found.
#[derive(Debug, Default)]
struct Scan<'a> {
    /// The entries of the whole frames before any damage, in order.
    whole: Vec<&'a [u8]>,
    /// Byte offsets of frames cut short (skipped).
    torn: Vec<usize>,
    /// The first damaged frame, where reading stopped.
    damage: Option<Damage>,
}

/// A damaged journal frame: bytes where a frame should start that are no
/// frame, or a frame whose size fits but whose checksum fails (a flipped
/// byte). A frame cut short by a crash is torn, not damaged.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Damage {
    /// 1-based: the whole frames before it, plus one.
    frame: usize,
    offset: usize,
    checksum: bool,
    /// Whole frames after it, which a repair drops with it.
    whole_after: usize,
}

impl std::fmt::Display for Damage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = if self.checksum {
            "fails its checksum"
        } else {
            "is not a record"
        };
        write!(
            f,
            "{JOURNAL_FILE} record {} (at byte {}) {what}, and {} whole records follow it",
            self.frame, self.offset, self.whole_after
        )
    }
}

/// Reads the journal's frames. A frame cut short (its declared size runs
/// past the end, or into a whole frame another sandbox appended after it)
/// was a write interrupted by a crash, never answered: skipped. Anything
/// else that is not a whole frame is damage: reading stops there.
fn scan(journal: &[u8]) -> Scan<'_> {
    let mut found = Scan::default();
    let mut pos = 0;
    while pos < journal.len() {
        let rest = &journal[pos..];
        if let Some(entries) = frame_at(rest) {
            found.whole.push(entries);
            pos += FRAME_HEAD + entries.len();
            continue;
        }
        let next_whole = (1..rest.len())
            .find(|&at| rest[at..].starts_with(&FRAME_MARK) && frame_at(&rest[at..]).is_some());
        let declared_end = rest
            .get(..FRAME_HEAD)
            .filter(|head| head[..4] == FRAME_MARK)
            .map(|head| FRAME_HEAD + u32::from_le_bytes(head[4..8].try_into().expect("4 bytes")) as usize);
        let head_cut_short = rest.len() < FRAME_HEAD && FRAME_MARK.starts_with(&rest[..rest.len().min(4)]);
        match (declared_end, next_whole) {
            (Some(end), None) if end > rest.len() => found.torn.push(pos),
            (None, None) if head_cut_short => found.torn.push(pos),
            (Some(end), Some(at)) if end > at => {
                found.torn.push(pos);
                pos += at;
                continue;
            }
            _ => {
                let whole_after = next_whole.map_or(0, |at| scan(&rest[at..]).whole.len());
                found.damage = Some(Damage {
                    frame: found.whole.len() + 1,
                    offset: pos,
                    checksum: declared_end.is_some(),
                    whole_after,
                });
            }
        }
        break;
    }
    found
}

/// The marker file's content: `store <id> folds <n>`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Marker {
    store_id: String,
    folds: u64,
}

impl Marker {
    fn parse(text: &str) -> Option<Marker> {
        let mut words = text.split_whitespace();
        match (
            words.next(),
            words.next(),
            words.next(),
            words.next(),
            words.next(),
        ) {
            (Some("store"), Some(id), Some("folds"), Some(folds), None) => Some(Marker {
                store_id: id.to_owned(),
                folds: folds.parse().ok()?,
            }),
            _ => None,
        }
    }
}

impl std::fmt::Display for Marker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "store {} folds {}", self.store_id, self.folds)
    }
}

/// Makes `path` readable and writable by its owner only: creates it so
/// when `create` and it is missing, narrows it when it exists.
fn owner_only(path: &Path, create: bool) -> std::io::Result<()> {
    if create {
        File::options()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(FILE_MODE)
            .open(path)?;
    }
    match std::fs::set_permissions(path, std::fs::Permissions::from_mode(FILE_MODE)) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// The entries of the frame `journal` starts with, if it is whole.
fn frame_at(journal: &[u8]) -> Option<&[u8]> {
    let head = journal.get(..FRAME_HEAD)?;
    if head[..4] != FRAME_MARK {
        return None;
    }
    let len = u32::from_le_bytes(head[4..8].try_into().ok()?) as usize;
    let crc = u32::from_le_bytes(head[8..].try_into().ok()?);
    let entries = journal.get(FRAME_HEAD..FRAME_HEAD.checked_add(len)?)?;
    (crc32fast::hash(entries) == crc).then_some(entries)
}

/// The journal's entries: one byte naming the entry, then its fields
/// (integers little-endian, byte strings after their length as a u32).
/// A record's row: row id, body.
const PUT: u8 = 1;
/// A record's row removed: row id.
const DELETE: u8 = 2;
/// Every record row of a company removed (a reset or a restored
/// snapshot; its rows follow): slot.
const CLEAR: u8 = 3;
/// A company's head row: slot, body.
const HEAD: u8 = 4;
/// A write's nonce: expiry (Unix seconds), client (16 bytes), nonce.
const NONCE: u8 = 5;
/// A shared value of table `meta`: key, value.
const META: u8 = 6;

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// Reads a journal frame's entries in turn.
struct Entries<'a>(&'a [u8]);

impl<'a> Entries<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DiskError> {
        if self.0.len() < n {
            return Err(DiskError::Unreadable("a journal entry cut short".to_owned()));
        }
        let (taken, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(taken)
    }

    fn i64(&mut self) -> Result<i64, DiskError> {
        Ok(i64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }

    fn u32(&mut self) -> Result<u32, DiskError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }

    fn bytes(&mut self) -> Result<&'a [u8], DiskError> {
        let len = self.u32()? as usize;
        self.take(len)
    }
}

/// Applies journal entries to the tables they stand for
/// (`record_rows`, `company_heads`, `write_nonces`, `meta`).
struct Folder<'t> {
    put_head: rusqlite::CachedStatement<'t>,
    put: rusqlite::CachedStatement<'t>,
    delete: rusqlite::CachedStatement<'t>,
    clear: rusqlite::CachedStatement<'t>,
    put_nonce: rusqlite::CachedStatement<'t>,
    put_meta: rusqlite::CachedStatement<'t>,
}

impl<'t> Folder<'t> {
    fn new(tx: &'t rusqlite::Transaction<'_>) -> Result<Self, DiskError> {
        Ok(Folder {
            put_head: tx.prepare_cached(
                "INSERT INTO company_heads (slot, body) VALUES (?1, ?2)
                 ON CONFLICT (slot) DO UPDATE SET body = excluded.body",
            )?,
            put: tx.prepare_cached(
                "INSERT INTO record_rows (id, body) VALUES (?1, ?2)
                 ON CONFLICT (id) DO UPDATE SET body = excluded.body",
            )?,
            delete: tx.prepare_cached("DELETE FROM record_rows WHERE id = ?1")?,
            clear: tx.prepare_cached("DELETE FROM record_rows WHERE id BETWEEN ?1 AND ?2")?,
            put_nonce: tx.prepare_cached(
                "INSERT OR IGNORE INTO write_nonces (expires, client, nonce) VALUES (?1, ?2, ?3)",
            )?,
            put_meta: tx.prepare_cached(
                "INSERT INTO meta (key, value) VALUES (?1, ?2)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            )?,
        })
    }

    /// Applies one keep's entries, in order.
    fn apply(&mut self, entries: &[u8]) -> Result<(), DiskError> {
        let mut entries = Entries(entries);
        let text = |bytes: &[u8]| {
            std::str::from_utf8(bytes)
                .map(str::to_owned)
                .map_err(|_| DiskError::Unreadable("a journal entry that is not text".to_owned()))
        };
        while let Some(&tag) = entries.0.first() {
            entries.take(1)?;
            match tag {
                PUT => {
                    let id = entries.i64()?;
                    self.put.execute(params![id, entries.bytes()?])?;
                }
                DELETE => {
                    self.delete.execute([entries.i64()?])?;
                }
                CLEAR => {
                    let (low, high) = company_rows(entries.u32()? as usize);
                    self.clear.execute([low, high])?;
                }
                HEAD => {
                    let slot = entries.u32()?;
                    self.put_head.execute(params![slot, entries.bytes()?])?;
                }
                NONCE => {
                    let expires = entries.i64()?;
                    let client = Uuid::from_slice(entries.take(16)?).expect("16 bytes");
                    let nonce = text(entries.bytes()?)?;
                    self.put_nonce
                        .execute(params![expires, client.to_string(), nonce])?;
                }
                META => {
                    let key = text(entries.bytes()?)?;
                    self.put_meta.execute(params![key, text(entries.bytes()?)?])?;
                }
                other => {
                    return Err(DiskError::Unreadable(format!(
                        "a journal entry of an unknown kind {other}"
                    )));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::book::RowChange;

    fn put(kind: usize, ord: u64, text: String) -> (usize, RowChange) {
        let mut body = Vec::new();
        encode(&text, &mut body).unwrap();
        (
            kind,
            RowChange::Put {
                key: ord.to_string(),
                ord,
                body,
            },
        )
    }

    fn write(rows: Vec<(usize, RowChange)>, nonces: Vec<(Uuid, String, i64)>) -> Write {
        Write {
            companies: vec![CompanyWrite {
                id: Uuid::nil(),
                slot: 1,
                replaced: false,
                head: Some(b"head".to_vec()),
                rows,
            }],
            globals: None,
            nonces,
        }
    }

    /// Keeps that take the journal past its size fold it, in order; what
    /// is still in the journal at a start is read back too, a torn frame
    /// skipped.
    #[test]
    fn journal_frames_are_folded_in_order_and_read_back_past_a_torn_one() {
        let dir = std::env::temp_dir().join(format!("paydesk-disk-{}", Uuid::new_v4()));
        let big = "x".repeat(JOURNAL_BYTES / 2 + 1);
        let client = Uuid::new_v4();
        let disk = Disk::open(&dir, false).unwrap();
        disk.keep(
            write(vec![put(0, 1, "first".into()), put(2, 2, big.clone())], vec![]),
            0,
        )
        .unwrap();
        disk.keep(
            write(
                vec![put(0, 1, "changed".into()), put(2, 3, big.clone())],
                vec![(client, "n1".into(), 100)],
            ),
            0,
        )
        .unwrap();
        let journal_bytes = || std::fs::metadata(dir.join(JOURNAL_FILE)).unwrap().len();
        assert_eq!(journal_bytes(), 0, "the second keep folded the journal");
        disk.keep(
            write(
                vec![
                    (
                        2,
                        RowChange::Delete {
                            key: "2".into(),
                            ord: 2,
                        },
                    ),
                    put(0, 4, "last".into()),
                ],
                vec![(client, "n2".into(), 100)],
            ),
            0,
        )
        .unwrap();
        assert!(journal_bytes() > 0);
        // A write cut short by kill -9 leaves a torn frame; one that
        // follows it (another sandbox's) is still read.
        (&disk.journal).write_all(&FRAME_MARK).unwrap();
        (&disk.journal).write_all(&[200, 0, 0, 0, 1, 2]).unwrap();
        disk.keep(write(vec![put(1, 5, "after".into())], vec![]), 0)
            .unwrap();
        drop(disk);

        let kept = Disk::open(&dir, false).unwrap().load(&[], 50).unwrap();
        let rows: Vec<(usize, u64, String)> = kept.companies[0]
            .rows
            .iter()
            .map(|r| (r.kind, r.ord, r.body.decode().unwrap()))
            .collect();
        assert_eq!(
            rows,
            vec![
                (0, 1, "changed".into()),
                (2, 3, big),
                (0, 4, "last".into()),
                (1, 5, "after".into())
            ]
        );
        let mut nonces: Vec<String> = kept
            .nonces
            .into_iter()
            .map(|(c, n, _)| {
                assert_eq!(c, client);
                n
            })
            .collect();
        nonces.sort();
        assert_eq!(nonces, ["n1", "n2"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn sealed(entries: &[u8]) -> Vec<u8> {
        let mut frame = vec![0; FRAME_HEAD];
        frame.extend_from_slice(entries);
        seal(&mut frame).unwrap();
        frame
    }

    /// A frame cut short is torn and skipped; a whole-sized frame that
    /// fails its checksum, or bytes that are no frame, are damage, where
    /// reading stops.
    #[test]
    fn torn_frames_are_skipped_and_damaged_ones_stop_the_read() {
        let (a, b, c) = (sealed(b"first"), sealed(b"second"), sealed(b"third"));
        let whole = [a.clone(), b.clone(), c.clone()].concat();
        let read = scan(&whole);
        assert_eq!(read.whole, [&b"first"[..], b"second", b"third"]);
        assert!(read.torn.is_empty() && read.damage.is_none());

        // Cut short at the end (a write a crash interrupted).
        let torn_end = [&whole[..], &c[..c.len() - 2]].concat();
        let read = scan(&torn_end);
        assert_eq!((read.whole.len(), read.torn.clone()), (3, vec![whole.len()]));
        assert!(read.damage.is_none());
        let head_only = [&whole[..], &FRAME_MARK[..2]].concat();
        assert_eq!(scan(&head_only).torn, vec![whole.len()]);

        // A flipped byte inside the second frame.
        let mut flipped = whole.clone();
        flipped[a.len() + FRAME_HEAD + 1] ^= 1;
        let read = scan(&flipped);
        assert_eq!(read.whole, [&b"first"[..]]);
        let damage = read.damage.unwrap();
        assert_eq!(
            damage,
            Damage {
                frame: 2,
                offset: a.len(),
                checksum: true,
                whole_after: 1
            }
        );
        assert!(damage
            .to_string()
            .contains("record 2 (at byte 17) fails its checksum"));

        // A flipped byte in a mark: no frame starts there.
        let mut unmarked = whole.clone();
        unmarked[a.len()] ^= 1;
        let damage = scan(&unmarked).damage.unwrap();
        assert!(!damage.checksum);
        assert_eq!(damage.whole_after, 1);
    }

    #[test]
    fn the_marker_reads_back_what_it_wrote() {
        let marker = Marker {
            store_id: Uuid::nil().to_string(),
            folds: 42,
        };
        assert_eq!(Marker::parse(&marker.to_string()), Some(marker));
        assert_eq!(Marker::parse("store x folds"), None);
    }
}
