//! Keeping a write: one frame appended to the journal, and the fold of
//! the journal into the tables.

use std::io::{Read, Seek, SeekFrom, Write as _};

use rusqlite::params;
use rustix::fs::FlockOperation;
use uuid::Uuid;

use super::files::flock;
use super::journal::{put_entries, scan, seal, Entries, CLEAR, DELETE, FRAME_HEAD, HEAD, META, NONCE, PUT};
use super::marker::Marker;
use super::rows::company_rows;
use super::*;

impl Disk {
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
    pub(super) fn append(&self, frame: &[u8]) -> Result<(), DiskError> {
        flock(&self.journal, FlockOperation::LockShared)?;
        let written = (&self.journal).write_all(frame);
        flock(&self.journal, FlockOperation::Unlock)?;
        Ok(written?)
    }

    /// Folds the journal into the tables in one transaction, then empties
    /// it; `rewritten`: the keep rewrote every company an older format
    /// held, whose tables go in the same transaction.
    pub(super) fn fold(&self, upkeep: &mut Upkeep, now_unix: i64, rewritten: bool) -> Result<(), DiskError> {
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

/// Applies journal entries to the tables they stand for
/// (`record_rows`, `company_heads`, `write_nonces`, `meta`).
pub(super) struct Folder<'t> {
    put_head: rusqlite::CachedStatement<'t>,
    put: rusqlite::CachedStatement<'t>,
    delete: rusqlite::CachedStatement<'t>,
    clear: rusqlite::CachedStatement<'t>,
    put_nonce: rusqlite::CachedStatement<'t>,
    put_meta: rusqlite::CachedStatement<'t>,
}

impl<'t> Folder<'t> {
    pub(super) fn new(tx: &'t rusqlite::Transaction<'_>) -> Result<Self, DiskError> {
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
    pub(super) fn apply(&mut self, entries: &[u8]) -> Result<(), DiskError> {
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
