//! The export bundle and its offline verifier. A bundle is JSON lines: a
//! header (format, log, public key), then the checkpoints that cover the
//! range, then the records in log order, each with its hashes. The
//! verifier needs nothing but the file: it re-hashes every record, checks
//! every link and every signature, and names the first record that was
//! edited, removed, reordered or cut off.

use std::io::BufRead;

use chrono::{DateTime, Utc};
use ed25519_dalek::VerifyingKey;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::chain::{self, Hashed, GENESIS};
use super::checkpoint::Checkpoint;
use super::details::Details;
use super::store::AuditRow;

pub const FORMAT: &str = "paydesk-audit-bundle/1";

/// One line of a bundle.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Line {
    Header(Header),
    Checkpoint(Checkpoint),
    Record(Record),
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Header {
    pub format: String,
    /// `tenant:<id>` or `platform`.
    pub log: String,
    /// The Ed25519 key that signs the checkpoints, hex.
    pub public_key: String,
    pub exported_at: DateTime<Utc>,
}

/// A record as exported: every hashed field, its position and its hashes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    pub seq: i64,
    pub id: i64,
    pub occurred_at: DateTime<Utc>,
    pub tenant_id: Option<Uuid>,
    pub actor_id: Option<Uuid>,
    pub actor_email: String,
    pub action: String,
    pub target: String,
    pub outcome: String,
    pub ip: String,
    pub user_agent: String,
    pub details: Details,
    pub prev_hash: String,
    pub hash: String,
}

impl Record {
    pub fn of(row: AuditRow, seq: i64) -> Self {
        Record {
            seq,
            id: row.id,
            occurred_at: row.occurred_at,
            tenant_id: row.tenant_id,
            actor_id: row.actor_id,
            actor_email: row.actor_email,
            action: row.action,
            target: row.target,
            outcome: row.outcome,
            ip: row.ip,
            user_agent: row.user_agent,
            details: row.details,
            prev_hash: hex::encode(row.prev_hash),
            hash: hex::encode(row.hash),
        }
    }

    fn hash_after(&self, prev: &[u8]) -> [u8; 32] {
        chain::hash(
            prev,
            &Hashed {
                occurred_at: self.occurred_at,
                tenant_id: self.tenant_id,
                actor_id: self.actor_id,
                actor_email: &self.actor_email,
                action: &self.action,
                target: &self.target,
                outcome: &self.outcome,
                ip: &self.ip,
                user_agent: &self.user_agent,
                details: &self.details,
            },
        )
    }
}

/// What a bundle that holds up contains.
#[derive(Debug, PartialEq, Eq)]
pub struct Verified {
    pub log: String,
    pub public_key: String,
    pub records: u64,
    /// The first and last record's position in the log.
    pub range: Option<(i64, i64)>,
    pub checkpoints: u64,
    /// Records after the last checkpoint: linked, not yet signed.
    pub unsigned_tail: u64,
}

impl Verified {
    /// What the verifier says of a bundle that holds up.
    pub fn describe(&self) -> String {
        let range = self
            .range
            .map_or_else(|| "no records".to_owned(), |(a, b)| format!("records {a} to {b}"));
        let tail = match self.unsigned_tail {
            0 => String::new(),
            n => format!("; the last {n} are linked but after the last checkpoint (not yet signed)"),
        };
        format!(
            "OK: {} ({}, {} records) intact; {} checkpoint(s) verified with public key {}{tail}",
            self.log, range, self.records, self.checkpoints, self.public_key
        )
    }
}

/// Why a bundle does not hold up; the message names the record.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Broken {
    #[error("line {0}: not a bundle line ({1})")]
    Unreadable(usize, String),
    #[error("the file does not start with a {FORMAT} header")]
    NoHeader,
    #[error("the public key is {found}, not the expected {expected}")]
    OtherKey { found: String, expected: String },
    #[error("checkpoint {id}: {reason}")]
    BadCheckpoint { id: i64, reason: &'static str },
    #[error("record {seq} (id {id}) was edited: its contents do not match its hash")]
    Edited { seq: i64, id: i64 },
    #[error("record {expected} is missing or out of place: record {seq} (id {id}) comes where it should be")]
    OutOfPlace { seq: i64, id: i64, expected: i64 },
    #[error("record {seq} (id {id}) does not follow the record before it: a record was removed or the order changed")]
    Unlinked { seq: i64, id: i64 },
    #[error("record {seq} (id {id}) is not the head that checkpoint {checkpoint} signed")]
    NotTheHead { seq: i64, id: i64, checkpoint: i64 },
    #[error("the bundle is cut off after {after}: checkpoint {checkpoint} signed {length} records")]
    CutOff {
        after: String,
        checkpoint: i64,
        length: i64,
    },
}

fn parse(n: usize, line: &str) -> Result<Line, Broken> {
    serde_json::from_str(line).map_err(|e| Broken::Unreadable(n, e.to_string()))
}

/// Checks a bundle line by line (a million records need no more memory
/// than one). `expected_key`, when given, must be the bundle's key.
pub fn verify(input: impl BufRead, expected_key: Option<&str>) -> Result<Verified, Broken> {
    let mut lines = input
        .lines()
        .enumerate()
        .filter(|(_, l)| !matches!(l, Ok(l) if l.trim().is_empty()));
    let mut next = move || {
        lines
            .next()
            .map(|(i, l)| {
                l.map_err(|e| Broken::Unreadable(i + 1, e.to_string()))
                    .and_then(|l| parse(i + 1, &l))
            })
            .transpose()
    };
    let Some(Line::Header(header)) = next()? else {
        return Err(Broken::NoHeader);
    };
    if header.format != FORMAT {
        return Err(Broken::NoHeader);
    }
    if let Some(expected) = expected_key.filter(|k| !k.eq_ignore_ascii_case(&header.public_key)) {
        return Err(Broken::OtherKey {
            found: header.public_key,
            expected: expected.to_owned(),
        });
    }
    let key = hex::decode(&header.public_key)
        .ok()
        .and_then(|b| <[u8; 32]>::try_from(b).ok())
        .and_then(|b| VerifyingKey::from_bytes(&b).ok())
        .ok_or(Broken::BadCheckpoint {
            id: 0,
            reason: "the bundle's public key is not an Ed25519 key",
        })?;
    let mut checker = Checker::new(key);
    while let Some(line) = next()? {
        match line {
            Line::Header(_) => return Err(Broken::NoHeader),
            Line::Checkpoint(c) => checker.checkpoint(c)?,
            Line::Record(r) => checker.record(r)?,
        }
    }
    checker.finish(header.log, header.public_key)
}

/// The state of a walk through a bundle.
struct Checker {
    key: VerifyingKey,
    checkpoints: Vec<Checkpoint>,
    /// The next checkpoint whose head is still to come.
    pending: usize,
    last: Option<Record>,
    first_seq: Option<i64>,
    records: u64,
}

impl Checker {
    fn new(key: VerifyingKey) -> Self {
        Checker {
            key,
            checkpoints: Vec::new(),
            pending: 0,
            last: None,
            first_seq: None,
            records: 0,
        }
    }

    fn checkpoint(&mut self, c: Checkpoint) -> Result<(), Broken> {
        let bad = |reason| Broken::BadCheckpoint { id: c.id, reason };
        c.check(&self.key).map_err(bad)?;
        if let Some(before) = self.checkpoints.last() {
            if c.prev_hash != before.hash || c.length < before.length {
                return Err(bad("it does not follow the checkpoint before it"));
            }
        }
        if self.last.is_some() {
            return Err(bad("it comes after the records; checkpoints come first"));
        }
        self.checkpoints.push(c);
        Ok(())
    }

    fn record(&mut self, r: Record) -> Result<(), Broken> {
        let (seq, id) = (r.seq, r.id);
        let prev = match &self.last {
            Some(last) if r.seq != last.seq + 1 => {
                return Err(Broken::OutOfPlace {
                    seq,
                    id,
                    expected: last.seq + 1,
                })
            }
            Some(last) => hex::decode(&last.hash).unwrap_or_default(),
            // The first record of the log links to the genesis hash; a
            // later range starts from the link it carries.
            None if r.seq == 1 => GENESIS.to_vec(),
            None => hex::decode(&r.prev_hash).unwrap_or_default(),
        };
        if hex::encode(r.hash_after(&prev)) != r.hash {
            let claimed = hex::decode(&r.prev_hash).unwrap_or_default();
            let self_consistent = hex::encode(r.hash_after(&claimed)) == r.hash;
            return Err(match self_consistent && claimed != prev {
                true => Broken::Unlinked { seq, id },
                false => Broken::Edited { seq, id },
            });
        }
        // Checkpoints before this range's first record say nothing about it.
        while self.checkpoints.get(self.pending).is_some_and(|c| c.length < seq) {
            self.pending += 1;
        }
        while let Some(c) = self.checkpoints.get(self.pending).filter(|c| c.length == seq) {
            if c.head_hash != r.hash {
                return Err(Broken::NotTheHead {
                    seq,
                    id,
                    checkpoint: c.id,
                });
            }
            self.pending += 1;
        }
        self.first_seq.get_or_insert(seq);
        self.records += 1;
        self.last = Some(r);
        Ok(())
    }

    fn finish(self, log: String, public_key: String) -> Result<Verified, Broken> {
        if let Some(c) = self.checkpoints.get(self.pending) {
            let after = match &self.last {
                Some(r) => format!("record {} (id {})", r.seq, r.id),
                None => "the header (it holds no records)".to_owned(),
            };
            return Err(Broken::CutOff {
                after,
                checkpoint: c.id,
                length: c.length,
            });
        }
        let last_seq = self.last.as_ref().map(|r| r.seq);
        let signed_to = self.checkpoints.last().map_or(0, |c| c.length);
        Ok(Verified {
            log,
            public_key,
            records: self.records,
            range: self.first_seq.zip(last_seq),
            checkpoints: self.checkpoints.len() as u64,
            unsigned_tail: last_seq.map_or(0, |l| {
                (l - signed_to.max(self.first_seq.unwrap_or(1) - 1)).max(0) as u64
            }),
        })
    }
}
