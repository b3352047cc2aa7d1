//! Reading back what a start finds: the records, heads, nonces and
//! shared state, and the tables of older formats.

use std::collections::BTreeMap;

use rusqlite::Connection;
use uuid::Uuid;

use super::rows::{row_parts, ORD_BITS};
use super::*;

impl Disk {
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
    pub(super) fn load_legacy(
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
}
