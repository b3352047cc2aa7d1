//! The record book every area keeps its records in: `Book<R>`, an ordered
//! list of records with an index by key that also remembers which records
//! changed since the data directory last kept them. That is what lets
//! `--data-dir` write only the records a call changed (one row each, keyed
//! by company, kind and order) instead of the company's whole state.
//!
//! Reading a book is reading a slice (`Deref<Target = [R]>`); changing one
//! goes through `push`, `IndexMut` (`book[i].field = …`), `get_mut`,
//! `remove` and `retain`, each of which marks what it touched. There is no
//! `iter_mut`: a change always names its record.
//!
//! A book serializes as a plain JSON array of its records (the snapshot
//! document's shape). While `with_books_elided` runs, every book
//! serializes as an empty array instead: that is how a company's "head"
//! (everything that is not in a book) is written as one small row.

use std::cell::Cell;
use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;
use std::marker::PhantomData;
use std::ops::{Deref, Index, IndexMut};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::de::{DeserializeOwned, MapAccess, SeqAccess, Visitor};
use serde::ser::SerializeSeq;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::disk::{self, Body, RowChange};

/// A record kept in a book.
pub trait Record: Serialize + DeserializeOwned + Clone + Send + 'static {
    /// What identifies a record within its book.
    type Key: Eq + Hash + Clone + ToString;

    fn key(&self) -> Self::Key;

    /// Reading an older document that kept the book as a JSON object keyed
    /// by the record's key: the key, for records that don't hold it.
    fn adopt_key(&mut self, _key: String) {}
}

/// The next order number. One counter for every book of the process, so
/// the records one write adds, of whatever kind, get neighbouring row ids
/// in the data directory and land in the same pages (one leaf written per
/// commit rather than one per kind).
static NEXT_ORD: AtomicU64 = AtomicU64::new(0);

pub struct Book<R: Record> {
    records: Vec<R>,
    /// Insertion order numbers, parallel to `records`: the rows' order.
    ords: Vec<u64>,
    index: HashMap<R::Key, usize>,
    /// Positions changed since the last `take_changes`.
    dirty: Vec<usize>,
    /// Keys and orders removed since the last `take_changes`.
    removed: Vec<(String, u64)>,
}

impl<R: Record> Default for Book<R> {
    fn default() -> Self {
        Book {
            records: Vec::new(),
            ords: Vec::new(),
            index: HashMap::new(),
            dirty: Vec::new(),
            removed: Vec::new(),
        }
    }
}

impl<R: Record + fmt::Debug> fmt::Debug for Book<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(&self.records).finish()
    }
}

impl<R: Record + Clone> Clone for Book<R> {
    fn clone(&self) -> Self {
        Book {
            records: self.records.clone(),
            ords: self.ords.clone(),
            index: self.index.clone(),
            dirty: self.dirty.clone(),
            removed: self.removed.clone(),
        }
    }
}

impl<R: Record> Book<R> {
    /// Adds a record at the end (a record with the key of one already in
    /// the book replaces it in place).
    pub fn push(&mut self, record: R) {
        let key = record.key();
        if let Some(&i) = self.index.get(&key) {
            self.records[i] = record;
            self.dirty.push(i);
            return;
        }
        self.append(record, None);
        self.dirty.push(self.records.len() - 1);
    }

    fn append(&mut self, record: R, ord: Option<u64>) {
        let ord = match ord {
            Some(ord) => {
                NEXT_ORD.fetch_max(ord + 1, Ordering::Relaxed);
                ord
            }
            None => NEXT_ORD.fetch_add(1, Ordering::Relaxed),
        };
        self.index.insert(record.key(), self.records.len());
        self.records.push(record);
        self.ords.push(ord);
    }

    /// The position of the record with `key`.
    pub fn position_of(&self, key: &R::Key) -> Option<usize> {
        self.index.get(key).copied()
    }

    /// The record with `key`.
    pub fn by_key(&self, key: &R::Key) -> Option<&R> {
        self.position_of(key).map(|i| &self.records[i])
    }

    /// The record with `key`, to change (marked as changed).
    pub fn by_key_mut(&mut self, key: &R::Key) -> Option<&mut R> {
        let i = self.position_of(key)?;
        Some(&mut self[i])
    }

    /// The record at `index`, to change (marked as changed).
    pub fn get_mut(&mut self, index: usize) -> Option<&mut R> {
        (index < self.records.len()).then(|| &mut self[index])
    }

    /// The last record, to change (marked as changed).
    pub fn last_mut(&mut self) -> Option<&mut R> {
        let last = self.records.len().checked_sub(1)?;
        Some(&mut self[last])
    }

    /// The record at `index`, to change what is derived from other
    /// records (not marked: the data directory does not write the change,
    /// and whoever reads the records back derives it again).
    pub fn derived_mut(&mut self, index: usize) -> Option<&mut R> {
        self.records.get_mut(index)
    }

    /// Removes and returns the record at `index`.
    pub fn remove(&mut self, index: usize) -> R {
        let record = self.records.remove(index);
        let ord = self.ords.remove(index);
        self.removed.push((record.key().to_string(), ord));
        self.dirty.retain(|&d| d != index);
        for d in &mut self.dirty {
            if *d > index {
                *d -= 1;
            }
        }
        self.reindex();
        record
    }

    /// Keeps only the records `keep` accepts.
    pub fn retain(&mut self, mut keep: impl FnMut(&R) -> bool) {
        let before = self.records.len();
        let mut kept_records = Vec::with_capacity(before);
        let mut kept_ords = Vec::with_capacity(before);
        let mut dirty_keys = Vec::new();
        let dirty: std::collections::HashSet<usize> = self.dirty.drain(..).collect();
        for (i, (record, ord)) in self.records.drain(..).zip(self.ords.drain(..)).enumerate() {
            if keep(&record) {
                if dirty.contains(&i) {
                    dirty_keys.push(kept_records.len());
                }
                kept_records.push(record);
                kept_ords.push(ord);
            } else {
                self.removed.push((record.key().to_string(), ord));
            }
        }
        self.records = kept_records;
        self.ords = kept_ords;
        self.dirty = dirty_keys;
        if self.records.len() != before {
            self.reindex();
        }
    }

    fn reindex(&mut self) {
        self.index = self
            .records
            .iter()
            .enumerate()
            .map(|(i, r)| (r.key(), i))
            .collect();
    }

    /// Forgets what changed (nothing keeps the changes: no data
    /// directory).
    pub fn forget_changes(&mut self) {
        self.dirty.clear();
        self.removed.clear();
    }

    /// Marks every record as changed (the book was replaced).
    pub fn mark_all(&mut self) {
        self.dirty = (0..self.records.len()).collect();
    }

    /// The rows changed since the last call (copies of the records, not
    /// yet serialized), and forgets them.
    pub fn take_changes(&mut self, out: &mut Vec<RowChange>) -> Result<(), rmp_serde::encode::Error> {
        for (key, ord) in self.removed.drain(..) {
            out.push(RowChange::Delete { key, ord });
        }
        let mut dirty = std::mem::take(&mut self.dirty);
        dirty.sort_unstable();
        dirty.dedup();
        for i in dirty {
            if let Some(record) = self.records.get(i) {
                let mut body = Vec::new();
                disk::encode(record, &mut body)?;
                out.push(RowChange::Put {
                    key: record.key().to_string(),
                    ord: self.ords[i],
                    body,
                });
            }
        }
        Ok(())
    }

    /// Adds a record read back from the data directory (rows arrive in
    /// `ord` order); not marked as changed.
    pub fn load_row(&mut self, ord: u64, body: &Body) -> Result<(), String> {
        let record: R = body.decode()?;
        self.append(record, Some(ord));
        Ok(())
    }
}

impl<R: Record> Deref for Book<R> {
    type Target = [R];

    fn deref(&self) -> &[R] {
        &self.records
    }
}

impl<R: Record> Index<usize> for Book<R> {
    type Output = R;

    fn index(&self, index: usize) -> &R {
        &self.records[index]
    }
}

/// Changing a record in place marks it. The key must not change (a
/// record's key is what the row is written under).
impl<R: Record> IndexMut<usize> for Book<R> {
    fn index_mut(&mut self, index: usize) -> &mut R {
        self.dirty.push(index);
        &mut self.records[index]
    }
}

/// The kept-state side of a book, without its record type: what the data
/// directory asks of each of a company's books.
pub trait Shelf {
    fn take_changes(&mut self, out: &mut Vec<RowChange>) -> Result<(), rmp_serde::encode::Error>;
    fn forget_changes(&mut self);
    fn mark_all(&mut self);
    fn load_row(&mut self, ord: u64, body: &Body) -> Result<(), String>;
}

impl<R: Record> Shelf for Book<R> {
    fn take_changes(&mut self, out: &mut Vec<RowChange>) -> Result<(), rmp_serde::encode::Error> {
        Book::take_changes(self, out)
    }

    fn forget_changes(&mut self) {
        Book::forget_changes(self)
    }

    fn mark_all(&mut self) {
        Book::mark_all(self)
    }

    fn load_row(&mut self, ord: u64, body: &Body) -> Result<(), String> {
        Book::load_row(self, ord, body)
    }
}

thread_local! {
    static ELIDED: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with every book serializing as an empty array (a company's
/// head row: everything that is not in a book).
pub fn with_books_elided<T>(f: impl FnOnce() -> T) -> T {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            ELIDED.with(|e| e.set(self.0));
        }
    }
    let _restore = Restore(ELIDED.with(|e| e.replace(true)));
    f()
}

impl<R: Record> Serialize for Book<R> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if ELIDED.with(Cell::get) {
            return serializer.serialize_seq(Some(0))?.end();
        }
        let mut seq = serializer.serialize_seq(Some(self.records.len()))?;
        for record in &self.records {
            seq.serialize_element(record)?;
        }
        seq.end()
    }
}

/// A book reads from a JSON array of its records, or from an object keyed
/// by the records' keys (the shape older snapshot documents kept some
/// books in).
impl<'de, R: Record> Deserialize<'de> for Book<R> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct BookVisitor<R>(PhantomData<R>);

        impl<'de, R: Record> Visitor<'de> for BookVisitor<R> {
            type Value = Book<R>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of records")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Book<R>, A::Error> {
                let mut book = Book::default();
                while let Some(record) = seq.next_element::<R>()? {
                    book.append(record, None);
                }
                Ok(book)
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Book<R>, A::Error> {
                let mut book = Book::default();
                while let Some((key, mut record)) = map.next_entry::<String, R>()? {
                    record.adopt_key(key);
                    book.append(record, None);
                }
                Ok(book)
            }
        }

        deserializer.deserialize_any(BookVisitor(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
    struct Note {
        id: u32,
        text: String,
    }

    impl Record for Note {
        type Key = u32;
        fn key(&self) -> u32 {
            self.id
        }
    }

    fn note(id: u32, text: &str) -> Note {
        Note {
            id,
            text: text.to_owned(),
        }
    }

    fn keys(changes: &[RowChange]) -> Vec<String> {
        changes
            .iter()
            .map(|c| match c {
                RowChange::Put { key, .. } => format!("put {key}"),
                RowChange::Delete { key, .. } => format!("delete {key}"),
            })
            .collect()
    }

    #[test]
    fn only_changed_records_are_handed_out_and_then_forgotten() {
        let mut book = Book::default();
        book.push(note(1, "a"));
        book.push(note(2, "b"));
        let mut out = Vec::new();
        book.take_changes(&mut out).unwrap();
        assert_eq!(keys(&out), ["put 1", "put 2"]);

        out.clear();
        book.take_changes(&mut out).unwrap();
        assert!(out.is_empty(), "nothing changed since");

        let _read = book[1].text.clone();
        book.take_changes(&mut out).unwrap();
        assert!(out.is_empty(), "a read marks nothing");

        book[1].text = "B".into();
        book.push(note(3, "c"));
        book.take_changes(&mut out).unwrap();
        assert_eq!(keys(&out), ["put 2", "put 3"]);
    }

    #[test]
    fn removals_are_deletes_and_positions_stay_right() {
        let mut book = Book::default();
        for i in 1..=4 {
            book.push(note(i, "x"));
        }
        book.take_changes(&mut Vec::new()).unwrap();
        book[3].text = "changed".into();
        book.remove(0);
        book.retain(|n| n.id != 2);
        let mut out = Vec::new();
        book.take_changes(&mut out).unwrap();
        assert_eq!(keys(&out), ["delete 1", "delete 2", "put 4"]);
        assert_eq!(book.by_key(&4).unwrap().text, "changed");
        assert_eq!(book.position_of(&3), Some(0));
    }

    #[test]
    fn a_derived_change_is_not_handed_out() {
        let mut book = Book::default();
        book.push(note(1, "a"));
        book.take_changes(&mut Vec::new()).unwrap();
        book.derived_mut(0).unwrap().text = "derived".into();
        let mut out = Vec::new();
        book.take_changes(&mut out).unwrap();
        assert!(out.is_empty());
        assert_eq!(book[0].text, "derived");
    }

    #[test]
    fn forgotten_changes_are_not_handed_out() {
        let mut book = Book::default();
        book.push(note(1, "a"));
        book.push(note(2, "b"));
        book.remove(0);
        book.forget_changes();
        let mut out = Vec::new();
        book.take_changes(&mut out).unwrap();
        assert!(out.is_empty());
        assert_eq!(book.by_key(&2).unwrap().text, "b");
    }

    #[test]
    fn rows_read_back_keep_their_order_and_new_ones_follow() {
        let mut book: Book<Note> = Book::default();
        book.load_row(7, &Body::Json(r#"{"id":1,"text":"a"}"#.to_owned()))
            .unwrap();
        let mut packed = Vec::new();
        disk::encode(&note(2, "b"), &mut packed).unwrap();
        book.load_row(9, &Body::Packed(packed)).unwrap();
        book.push(note(3, "c"));
        let mut out = Vec::new();
        book.take_changes(&mut out).unwrap();
        let [RowChange::Put { key, ord, body }] = &out[..] else {
            panic!("one put");
        };
        assert_eq!(key, "3");
        assert!(*ord > 9, "a new record follows those read back");
        assert_eq!(Body::Packed(body.clone()).decode::<Note>().unwrap(), note(3, "c"));
        assert_eq!(book.to_vec(), vec![note(1, "a"), note(2, "b"), note(3, "c")]);
    }

    #[test]
    fn a_book_is_an_array_in_documents_and_empty_when_elided() {
        let mut book = Book::default();
        book.push(note(1, "a"));
        assert_eq!(serde_json::to_string(&book).unwrap(), r#"[{"id":1,"text":"a"}]"#);
        assert_eq!(with_books_elided(|| serde_json::to_string(&book).unwrap()), "[]");
        assert_eq!(serde_json::to_string(&book).unwrap(), r#"[{"id":1,"text":"a"}]"#);
        let back: Book<Note> = serde_json::from_str(r#"[{"id":1,"text":"a"}]"#).unwrap();
        assert_eq!(back.to_vec(), vec![note(1, "a")]);
        let from_map: Book<Note> = serde_json::from_str(r#"{"1":{"id":1,"text":"a"}}"#).unwrap();
        assert_eq!(from_map.by_key(&1), Some(&note(1, "a")));
    }
}
