//! Opening a data directory: its format and tables, the fixture it was
//! first started with, and the locks around its connection and upkeep.

use std::fs::File;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use rusqlite::{Connection, OptionalExtension};

use super::files::{owner_only, DIR_MODE, FILE_MODE};
use super::keep::Folder;
use super::*;
use crate::fixture::Fixture;

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
    pub(super) fn upkeep(&self) -> MutexGuard<'_, Upkeep> {
        self.upkeep
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(super) fn legacy(&self) -> MutexGuard<'_, Vec<&'static str>> {
        self.legacy
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(super) fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(super) fn meta(conn: &Connection, key: &str) -> Result<Option<String>, DiskError> {
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
}
