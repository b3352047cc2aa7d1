//! `--data-dir DIR`: the sandbox's state kept in an embedded SQLite
//! database (`DIR/sandbox.sqlite3`, through rusqlite with SQLite bundled),
//! so that every write the sandbox acknowledged survives `kill -9` and a
//! restart, and clock-driven steps resume.
//!
//! One mechanism for every area: each area keeps its records in a record
//! book (`book::Book<R>`), and each record is its own row of `records`,
//! keyed by its company's slot, its kind and its order in the book (one
//! integer, so new records append) and holding the record's JSON; a book
//! hands out only the records changed since the last keep (and the keys
//! it dropped), so a write costs what it changed, not the company's
//! history. What is not in a book (name, webhook setting, wallets'
//! totals, faults, pending clock-driven steps…) is the company's head
//! row: its snapshot document with every book left empty. A keep writes,
//! in one transaction before the answer is sent, the head and changed
//! rows of the companies touched since the last keep, the shared state
//! (clock offset, market prices, the Lightning node key) when it changed,
//! and the nonces of the writes kept. Writes are kept by one keeper thread
//! (`Shared::keep_write`) that takes every write waiting and keeps them in
//! one transaction (group commit); the worker goes on serving meanwhile.
//! Under the state's lock the keeper only copies the changed records; it
//! serializes them after releasing it, as it writes them.
//! Write nonces are keyed by their expiry, so they too append, and expired
//! ones are deleted once a minute. A reset or a
//! restored snapshot rewrites all of its company's rows. A directory an
//! older sandbox wrote (one whole snapshot document per company, table
//! `companies`) is read at start and then kept as rows.
//!
//! Why SQLite: its write-ahead log with `synchronous=NORMAL` is documented
//! to keep every committed transaction across an application crash (only a
//! power loss may roll back the last ones), without an fsync per commit,
//! and it is the most widely used embedded store there is. redb, the other
//! candidate, would fsync every commit for the same guarantee.
//!
//! Decisions where the documents are silent: the nonces of GET requests
//! are not kept (replaying a read changes nothing); webhook deliveries
//! waiting for a retry and the request journal are not kept (after a
//! restart, events not yet delivered are not retried); the fixture the
//! directory was first started with is kept in it and used on every later
//! start, and another fixture given for the same directory is refused.

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{params, Connection, OptionalExtension};
use uuid::Uuid;

use crate::book::RowChange;
use crate::fixture::Fixture;

#[derive(Debug, thiserror::Error)]
pub enum DiskError {
    #[error("the data directory {path} can't be used: {source}")]
    Directory { path: String, source: std::io::Error },
    #[error("the sandbox's database failed: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("the data directory holds state this sandbox can't read: {0}")]
    Unreadable(String),
    #[error("keeping the state was interrupted: {0}")]
    Interrupted(String),
    #[error("the data directory was started with another fixture; give the same fixture, none, or an empty directory")]
    OtherFixture,
}

/// The kept shared state besides the companies.
pub struct Globals {
    pub clock_offset_ms: i64,
    /// The market as JSON.
    pub market: String,
    pub node_secret: String,
}

/// What one write keeps of a company: its head row (the snapshot
/// document with its books left empty) and the rows of its books that
/// changed.
pub struct CompanyWrite {
    pub id: Uuid,
    /// The company's place in the fixture (part of its rows' ids).
    pub slot: usize,
    /// Every row of the company is written anew (a reset or a restored
    /// snapshot): the rows it had are dropped first.
    pub replaced: bool,
    /// None when the head did not change since it was last written.
    pub head: Option<String>,
    /// (kind, the kind's place among the company's books, change) of each
    /// changed record.
    pub rows: Vec<(&'static str, usize, RowChange)>,
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

/// A company as a start finds it: its head row and its records' rows
/// (kind, order, JSON), in order.
pub struct KeptCompany {
    pub head: String,
    pub rows: Vec<(String, u64, String)>,
}

/// What a start finds in the directory.
pub struct Kept {
    pub companies: Vec<KeptCompany>,
    /// Whole snapshot documents an older sandbox kept (one per company);
    /// read once and then written as rows.
    pub documents: Vec<String>,
    pub globals: Option<Globals>,
    pub nonces: Vec<(Uuid, String, i64)>,
}

pub struct Disk {
    conn: Mutex<Connection>,
    /// When expired nonces were last deleted (Unix seconds).
    purged_at: Mutex<i64>,
}

/// Pages the write-ahead log may hold before the commit that passes it
/// copies them into the database (SQLite's default). The commits are the
/// keeper's own, so each checkpoint completes and the log starts again
/// from its beginning: a log left to grow under steady writes (as it did
/// when another thread checkpointed) costs more per write (new pages for
/// the file each time) than the checkpoints do.
const CHECKPOINT_PAGES: u32 = 1_000;

/// A record's row id: its company's slot, its kind's place among the
/// company's books and its order in the book, in one integer, so a
/// book's new records are appended at the end of their range (SQLite
/// writes few pages per commit) and a company's rows are one range.
const ORD_BITS: u32 = 45;
const KIND_BITS: u32 = 6;
const SLOT_BITS: u32 = 12;

fn row_id(slot: usize, kind: usize, ord: u64) -> Result<i64, DiskError> {
    if slot >= 1 << SLOT_BITS || kind >= 1 << KIND_BITS || ord >= 1 << ORD_BITS {
        return Err(DiskError::Unreadable(format!(
            "a record beyond what a row id holds (company {slot}, kind {kind}, order {ord})"
        )));
    }
    Ok(((slot as i64) << (ORD_BITS + KIND_BITS)) | ((kind as i64) << ORD_BITS) | ord as i64)
}

/// The row ids of a company's records.
fn company_rows(slot: usize) -> (i64, i64) {
    let low = (slot as i64) << (ORD_BITS + KIND_BITS);
    (low, low + (1i64 << (ORD_BITS + KIND_BITS)) - 1)
}

impl Disk {
    /// Opens (or creates) the database in `dir`.
    pub fn open(dir: &Path) -> Result<Self, DiskError> {
        std::fs::create_dir_all(dir).map_err(|source| DiskError::Directory {
            path: dir.display().to_string(),
            source,
        })?;
        let conn = Connection::open(dir.join("sandbox.sqlite3"))?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "wal_autocheckpoint", CHECKPOINT_PAGES)?;
        // Another sandbox may open the same directory (the portal's tests
        // start a second one beside the first): wait for its write rather
        // than fail.
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        // `companies` (whole documents) and `nonces` are what older
        // sandboxes wrote: still read, no longer written.
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS companies (id TEXT PRIMARY KEY, state TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS heads (company TEXT PRIMARY KEY, state TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS records (id INTEGER PRIMARY KEY, company TEXT NOT NULL,
                 kind TEXT NOT NULL, body TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS nonces (client TEXT NOT NULL, nonce TEXT NOT NULL,
                 expires INTEGER NOT NULL, PRIMARY KEY (client, nonce));
             CREATE TABLE IF NOT EXISTS write_nonces (expires INTEGER NOT NULL, client TEXT NOT NULL,
                 nonce TEXT NOT NULL, PRIMARY KEY (expires, client, nonce)) WITHOUT ROWID;",
        )?;
        Ok(Disk {
            conn: Mutex::new(conn),
            purged_at: Mutex::new(0),
        })
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
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

    /// Everything kept, for a start.
    pub fn load(&self, now_unix: i64) -> Result<Kept, DiskError> {
        let conn = self.conn();
        let documents = conn
            .prepare("SELECT state FROM companies")?
            .query_map([], |row| row.get::<_, String>(0))?
            .collect::<Result<Vec<_>, _>>()?;
        let heads = conn
            .prepare("SELECT company, state FROM heads")?
            .query_map([], |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?)))?
            .collect::<Result<Vec<_>, _>>()?;
        let mut rows_of: std::collections::HashMap<String, Vec<(String, u64, String)>> = Default::default();
        {
            let mut all = conn.prepare("SELECT id, company, kind, body FROM records ORDER BY id")?;
            let mut rows = all.query([])?;
            while let Some(row) = rows.next()? {
                let ord = (row.get::<_, i64>(0)? as u64) & ((1 << ORD_BITS) - 1);
                rows_of
                    .entry(row.get(1)?)
                    .or_default()
                    .push((row.get(2)?, ord, row.get(3)?));
            }
        }
        let companies = heads
            .into_iter()
            .map(|(company, head)| KeptCompany {
                rows: rows_of.remove(&company).unwrap_or_default(),
                head,
            })
            .collect();
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
        let nonces = conn
            .prepare(
                "SELECT client, nonce, expires FROM nonces WHERE expires > ?1
                 UNION ALL SELECT client, nonce, expires FROM write_nonces WHERE expires > ?1
                 ORDER BY expires",
            )?
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
            documents,
            globals,
            nonces,
        })
    }

    /// Keeps one write, in one transaction.
    pub fn keep(&self, write: Write, now_unix: i64) -> Result<(), DiskError> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        {
            let mut put_head = tx.prepare_cached(
                "INSERT INTO heads (company, state) VALUES (?1, ?2)
                 ON CONFLICT (company) DO UPDATE SET state = excluded.state",
            )?;
            let mut put = tx.prepare_cached(
                "INSERT INTO records (id, company, kind, body) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (id) DO UPDATE SET body = excluded.body",
            )?;
            let mut delete = tx.prepare_cached("DELETE FROM records WHERE id = ?1")?;
            // Records are serialized here, on the keeper thread after the
            // state's lock was released, into one buffer reused row by row.
            let mut json = Vec::with_capacity(1024);
            for company in &write.companies {
                let id = company.id.to_string();
                if company.replaced {
                    let (low, high) = company_rows(company.slot);
                    tx.execute("DELETE FROM records WHERE id BETWEEN ?1 AND ?2", [low, high])?;
                    tx.execute("DELETE FROM companies WHERE id = ?1", [&id])?;
                }
                if let Some(head) = &company.head {
                    put_head.execute(params![id, head])?;
                }
                for (kind, kind_slot, change) in &company.rows {
                    match change {
                        RowChange::Put { ord, record, .. } => {
                            json.clear();
                            record
                                .write_json(&mut json)
                                .map_err(|e| DiskError::Unreadable(format!("a record of {kind}: {e}")))?;
                            let text = std::str::from_utf8(&json)
                                .map_err(|e| DiskError::Unreadable(format!("a record of {kind}: {e}")))?;
                            put.execute(params![row_id(company.slot, *kind_slot, *ord)?, id, kind, text])?;
                        }
                        RowChange::Delete { ord, .. } => {
                            delete.execute([row_id(company.slot, *kind_slot, *ord)?])?;
                        }
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
                tx.execute(
                    "INSERT INTO meta (key, value) VALUES (?1, ?2)
                     ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    params![key, value],
                )?;
            }
        }
        {
            let mut put = tx.prepare_cached(
                "INSERT OR IGNORE INTO write_nonces (expires, client, nonce) VALUES (?1, ?2, ?3)",
            )?;
            for (client, nonce, expires) in &write.nonces {
                put.execute(params![expires, client.to_string(), nonce])?;
            }
        }
        // Expired nonces go once a minute, not at every write.
        let mut purged = self.purged_at.lock().unwrap_or_else(|p| p.into_inner());
        if now_unix >= *purged + 60 {
            tx.execute("DELETE FROM nonces WHERE expires <= ?1", [now_unix])?;
            tx.execute("DELETE FROM write_nonces WHERE expires <= ?1", [now_unix])?;
            *purged = now_unix;
        }
        tx.commit()?;
        Ok(())
    }
}
