//! The journal's frames and entries: how a keep is written, sealed with
//! its CRC-32, and read back, telling a torn frame from a damaged one.

use super::rows::{row_id, SLOT_BITS};
use super::RowChange;
use super::{DiskError, Write, JOURNAL_FILE};

/// A journal frame: this mark, the entries' length (u32) and their CRC-32
/// (u32), little-endian, then the entries. The mark lets a reader find
/// the next frame after a torn one.
pub(super) const FRAME_MARK: [u8; 4] = *b"PDJ4";
pub(super) const FRAME_HEAD: usize = 12;

/// Writes one keep's entries after `out`'s frame head.
pub(super) fn put_entries(write: &Write, out: &mut Vec<u8>) -> Result<(), DiskError> {
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
pub(super) fn seal(frame: &mut [u8]) -> Result<(), DiskError> {
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
pub(super) struct Scan<'a> {
    /// The entries of the whole frames before any damage, in order.
    pub(super) whole: Vec<&'a [u8]>,
    /// Byte offsets of frames cut short (skipped).
    pub(super) torn: Vec<usize>,
    /// The first damaged frame, where reading stopped.
    pub(super) damage: Option<Damage>,
}

/// A damaged journal frame: bytes where a frame should start that are no
/// frame, or a frame whose size fits but whose checksum fails (a flipped
/// byte). A frame cut short by a crash is torn, not damaged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Damage {
    /// 1-based: the whole frames before it, plus one.
    pub(super) frame: usize,
    pub(super) offset: usize,
    pub(super) checksum: bool,
    /// Whole frames after it, which a repair drops with it.
    pub(super) whole_after: usize,
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
pub(super) fn scan(journal: &[u8]) -> Scan<'_> {
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

/// The entries of the frame `journal` starts with, if it is whole.
pub(super) fn frame_at(journal: &[u8]) -> Option<&[u8]> {
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
pub(super) const PUT: u8 = 1;
/// A record's row removed: row id.
pub(super) const DELETE: u8 = 2;
/// Every record row of a company removed (a reset or a restored
/// snapshot; its rows follow): slot.
pub(super) const CLEAR: u8 = 3;
/// A company's head row: slot, body.
pub(super) const HEAD: u8 = 4;
/// A write's nonce: expiry (Unix seconds), client (16 bytes), nonce.
pub(super) const NONCE: u8 = 5;
/// A shared value of table `meta`: key, value.
pub(super) const META: u8 = 6;

pub(super) fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// Reads a journal frame's entries in turn.
pub(super) struct Entries<'a>(pub(super) &'a [u8]);

impl<'a> Entries<'a> {
    pub(super) fn take(&mut self, n: usize) -> Result<&'a [u8], DiskError> {
        if self.0.len() < n {
            return Err(DiskError::Unreadable("a journal entry cut short".to_owned()));
        }
        let (taken, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(taken)
    }

    pub(super) fn i64(&mut self) -> Result<i64, DiskError> {
        Ok(i64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }

    pub(super) fn u32(&mut self) -> Result<u32, DiskError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }

    pub(super) fn bytes(&mut self) -> Result<&'a [u8], DiskError> {
        let len = self.u32()? as usize;
        self.take(len)
    }
}
