//! Cursor pagination, newest first. A cursor names the position of a
//! record (its sequence number), so pages stay stable while records are
//! added: a new record never repeats or hides one on the next page.

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;

use crate::error::ApiError;
use crate::respond::At;

/// Records with a position that only grows.
pub trait Sequenced {
    fn seq(&self) -> u64;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cursor {
    /// Records older than this position (the next page).
    Older(u64),
    /// Records newer than this position (the previous page).
    Newer(u64),
}

impl Cursor {
    fn encode(self) -> String {
        let text = match self {
            Cursor::Older(seq) => format!("older:{seq}"),
            Cursor::Newer(seq) => format!("newer:{seq}"),
        };
        URL_SAFE_NO_PAD.encode(text)
    }

    fn decode(raw: &str) -> Result<Self, ApiError> {
        let invalid = || {
            ApiError::field(
                "cursor",
                "is not a cursor this service issued; start again without it",
            )
        };
        let trimmed = raw.trim_end_matches('=');
        let bytes = URL_SAFE_NO_PAD
            .decode(trimmed)
            .or_else(|_| STANDARD.decode(raw))
            .map_err(|_| invalid())?;
        let text = String::from_utf8(bytes).map_err(|_| invalid())?;
        let (kind, seq) = text.split_once(':').ok_or_else(invalid)?;
        let seq = seq.parse().map_err(|_| invalid())?;
        match kind {
            "older" => Ok(Cursor::Older(seq)),
            "newer" => Ok(Cursor::Newer(seq)),
            _ => Err(invalid()),
        }
    }
}

/// One page of records.
#[derive(Debug)]
pub struct Page<'a, T> {
    pub items: Vec<&'a T>,
    pub next_cursor: String,
    pub previous_cursor: String,
    pub has_more: bool,
    pub total: usize,
    /// The place of the page's first record among all matching (0-based).
    pub start: usize,
}

/// Pages `records` (kept oldest first) newest first, keeping those that
/// match `keep`, starting `at` a cursor or a page number.
pub fn paginate<'a, T: Sequenced>(
    records: &'a [T],
    keep: impl Fn(&T) -> bool,
    at: At<'_>,
    limit: usize,
) -> Result<Page<'a, T>, ApiError> {
    let matching: Vec<&T> = records.iter().rev().filter(|r| keep(r)).collect();
    let total = matching.len();
    let cursor = match at {
        At::Cursor(raw) => Some(Cursor::decode(raw)?),
        At::First | At::Page(_) | At::Offset(_) => None,
    };
    let (start, end) = match cursor {
        None => {
            let start = match at {
                At::Page(n) => (n - 1).saturating_mul(limit).min(total),
                At::Offset(n) => n.min(total),
                At::First | At::Cursor(_) => 0,
            };
            (start, start.saturating_add(limit).min(total))
        }
        Some(Cursor::Older(seq)) => {
            let start = matching.iter().position(|r| r.seq() < seq).unwrap_or(total);
            (start, (start + limit).min(total))
        }
        Some(Cursor::Newer(seq)) => {
            let end = matching.iter().position(|r| r.seq() <= seq).unwrap_or(total);
            (end.saturating_sub(limit), end)
        }
    };
    let items = matching[start..end].to_vec();
    let has_more = end < total;
    let next_cursor = match items.last() {
        Some(last) if has_more => Cursor::Older(last.seq()).encode(),
        _ => String::new(),
    };
    let previous_cursor = match items.first() {
        Some(first) if start > 0 => Cursor::Newer(first.seq()).encode(),
        _ => String::new(),
    };
    Ok(Page {
        items,
        next_cursor,
        previous_cursor,
        has_more,
        total,
        start,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct R(u64);
    impl Sequenced for R {
        fn seq(&self) -> u64 {
            self.0
        }
    }

    fn seqs(page: &Page<'_, R>) -> Vec<u64> {
        page.items.iter().map(|r| r.0).collect()
    }

    #[test]
    fn walks_forward_and_back_and_stays_stable_when_records_arrive() {
        let mut records: Vec<R> = (1..=5).map(R).collect();
        let first = paginate(&records, |_| true, At::First, 2).unwrap();
        assert_eq!(seqs(&first), vec![5, 4]);
        assert!(first.has_more && first.previous_cursor.is_empty());
        assert_eq!(first.total, 5);
        let next = first.next_cursor.clone();

        records.push(R(6));
        let second = paginate(&records, |_| true, At::Cursor(&next), 2).unwrap();
        assert_eq!(seqs(&second), vec![3, 2]);
        let third = paginate(&records, |_| true, At::Cursor(&second.next_cursor), 2).unwrap();
        assert_eq!(seqs(&third), vec![1]);
        assert!(!third.has_more && third.next_cursor.is_empty());

        let back = paginate(&records, |_| true, At::Cursor(&third.previous_cursor), 2).unwrap();
        assert_eq!(seqs(&back), vec![3, 2]);
    }

    #[test]
    fn filters_count_across_pages_and_bad_cursors_are_refused() {
        let records: Vec<R> = (1..=10).map(R).collect();
        let page = paginate(&records, |r| r.0 % 2 == 0, At::First, 3).unwrap();
        assert_eq!(seqs(&page), vec![10, 8, 6]);
        assert_eq!(page.total, 5);
        assert!(paginate(&records, |_| true, At::Cursor("!!!"), 3).is_err());
        let second = paginate(&records, |r| r.0 % 2 == 0, At::Page(2), 3).unwrap();
        assert_eq!(seqs(&second), vec![4, 2]);
        assert_eq!(second.total, 5);
        assert!(!second.has_more && !second.previous_cursor.is_empty());
        assert!(seqs(&paginate(&records, |_| true, At::Page(9), 3).unwrap()).is_empty());
        assert!(paginate(
            &records,
            |_| true,
            At::Cursor(&URL_SAFE_NO_PAD.encode("sideways:3")),
            3
        )
        .is_err());
    }
}
