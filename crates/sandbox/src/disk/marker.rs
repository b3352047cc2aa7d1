//! Damage detection: the marker file, and a store that lost what it held
//! (emptied, replaced or older than the marker).

use std::fs::File;
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use rusqlite::Connection;
use rustix::fs::FlockOperation;
use uuid::Uuid;

use super::files::{flock, FILE_MODE};
use super::*;

impl Disk {
    /// Compares the store with the marker and the journal, before
    /// anything is written: a store whose id is not the marker's (emptied
    /// or replaced), that committed fewer folds than the marker saw, or
    /// that holds nothing while the journal holds writes, lost what it
    /// held. Says how, if so.
    pub(super) fn lost_store(conn: &Connection, dir: &Path) -> Result<Option<String>, DiskError> {
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
    pub(super) fn drop_journal(&self, lost: &str) -> Result<(), DiskError> {
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
    pub(super) fn settle_marker(&self) -> Result<(), DiskError> {
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
    pub(super) fn write_marker(&self, marker: &Marker) -> Result<(), DiskError> {
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
}

/// The marker file's content: `store <id> folds <n>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Marker {
    pub(super) store_id: String,
    pub(super) folds: u64,
}

impl Marker {
    pub(super) fn parse(text: &str) -> Option<Marker> {
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
