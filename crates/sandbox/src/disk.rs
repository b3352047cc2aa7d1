//! `--data-dir DIR`: the sandbox's state kept in an embedded SQLite
//! database (`DIR/sandbox.sqlite3`, through rusqlite with SQLite bundled),
//! so that every write the sandbox acknowledged survives `kill -9` and a
//! restart, and clock-driven steps resume.
//!
//! One mechanism for every area: the unit kept is a company's snapshot
//! document (`snapshot.rs`: its records of every area, ledger, idempotency
//! records, webhook setting and pending clock-driven steps), written in one
//! transaction with the shared state (clock offset, market prices, the
//! Lightning node key) and the write's nonce, before the answer is sent.
//! Only companies touched since the last write are written, and a write
//! whose change an earlier keep already covered writes only its nonce, so
//! concurrent writes share one serialization (kept on the blocking pool,
//! the worker goes on serving meanwhile). The cost: a company's whole
//! document is serialized per keep, so writes slow down as its history
//! grows (see `bench/README.md`); keeping each record as its own row is
//! the way past that.
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
    pub market: serde_json::Value,
    pub node_secret: String,
}

/// What one acknowledged write keeps.
pub struct Write {
    /// Snapshot documents of the companies touched, by id.
    pub companies: Vec<(Uuid, String)>,
    /// None when an earlier write already covered the state.
    pub globals: Option<Globals>,
    /// The write's nonce: client, nonce, and when it may be forgotten
    /// (Unix seconds).
    pub nonce: Option<(Uuid, String, i64)>,
}

/// What a start finds in the directory.
pub struct Kept {
    pub companies: Vec<String>,
    pub globals: Option<Globals>,
    pub nonces: Vec<(Uuid, String, i64)>,
}

pub struct Disk {
    conn: Mutex<Connection>,
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
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS companies (id TEXT PRIMARY KEY, state TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS nonces (client TEXT NOT NULL, nonce TEXT NOT NULL,
                 expires INTEGER NOT NULL, PRIMARY KEY (client, nonce));",
        )?;
        Ok(Disk {
            conn: Mutex::new(conn),
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
        let companies = conn
            .prepare("SELECT state FROM companies")?
            .query_map([], |row| row.get::<_, String>(0))?
            .collect::<Result<Vec<_>, _>>()?;
        let globals = match (
            Self::meta(&conn, "clock_offset_ms")?,
            Self::meta(&conn, "market")?,
            Self::meta(&conn, "node_secret")?,
        ) {
            (Some(offset), Some(market), Some(node_secret)) => Some(Globals {
                clock_offset_ms: offset
                    .parse()
                    .map_err(|_| DiskError::Unreadable("the clock offset".to_owned()))?,
                market: serde_json::from_str(&market).map_err(|e| DiskError::Unreadable(e.to_string()))?,
                node_secret,
            }),
            _ => None,
        };
        let nonces = conn
            .prepare("SELECT client, nonce, expires FROM nonces WHERE expires > ?1 ORDER BY expires")?
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
        })
    }

    /// Keeps one write, in one transaction.
    pub fn keep(&self, write: Write, now_unix: i64) -> Result<(), DiskError> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        for (id, state) in &write.companies {
            tx.execute(
                "INSERT INTO companies (id, state) VALUES (?1, ?2)
                 ON CONFLICT (id) DO UPDATE SET state = excluded.state",
                params![id.to_string(), state],
            )?;
        }
        if let Some(g) = &write.globals {
            for (key, value) in [
                ("clock_offset_ms", g.clock_offset_ms.to_string()),
                ("market", g.market.to_string()),
                ("node_secret", g.node_secret.clone()),
            ] {
                tx.execute(
                    "INSERT INTO meta (key, value) VALUES (?1, ?2)
                     ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    params![key, value],
                )?;
            }
        }
        if let Some((client, nonce, expires)) = &write.nonce {
            tx.execute(
                "INSERT OR IGNORE INTO nonces (client, nonce, expires) VALUES (?1, ?2, ?3)",
                params![client.to_string(), nonce, expires],
            )?;
            tx.execute("DELETE FROM nonces WHERE expires <= ?1", [now_unix])?;
        }
        tx.commit()?;
        Ok(())
    }
}
