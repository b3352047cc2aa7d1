//! Row ids: a record's company slot, order and kind in one integer.

use super::DiskError;

/// A record's row id: its company's slot, its order (one counter for all
/// books, `book::NEXT_ORD`) and its kind's place among the company's
/// books, in one integer, so the records a write adds are appended side
/// by side at the end of the company's range (SQLite writes one leaf page
/// for them, not one per kind) and a company's rows are one range.
pub(super) const ORD_BITS: u32 = 45;
pub(super) const KIND_BITS: u32 = 6;
pub(super) const SLOT_BITS: u32 = 12;

pub(super) fn row_id(slot: usize, kind: usize, ord: u64) -> Result<i64, DiskError> {
    if slot >= 1 << SLOT_BITS || kind >= 1 << KIND_BITS || ord >= 1 << ORD_BITS {
        return Err(DiskError::Unreadable(format!(
            "a record beyond what a row id holds (company {slot}, kind {kind}, order {ord})"
        )));
    }
    Ok(((slot as i64) << (ORD_BITS + KIND_BITS)) | ((ord as i64) << KIND_BITS) | kind as i64)
}

/// (slot, kind, order) of a row id.
pub(super) fn row_parts(id: i64) -> (i64, usize, u64) {
    (
        id >> (ORD_BITS + KIND_BITS),
        (id & ((1 << KIND_BITS) - 1)) as usize,
        ((id >> KIND_BITS) & ((1 << ORD_BITS) - 1)) as u64,
    )
}

/// The row ids of a company's records.
pub(super) fn company_rows(slot: usize) -> (i64, i64) {
    let low = (slot as i64) << (ORD_BITS + KIND_BITS);
    (low, low + (1i64 << (ORD_BITS + KIND_BITS)) - 1)
}
