use std::io::Write as _;

use super::journal::*;
use super::marker::Marker;
use super::RowChange;
use super::*;

fn put(kind: usize, ord: u64, text: String) -> (usize, RowChange) {
    let mut body = Vec::new();
    encode(&text, &mut body).unwrap();
    (
        kind,
        RowChange::Put {
            key: ord.to_string(),
            ord,
            body,
        },
    )
}

fn write(rows: Vec<(usize, RowChange)>, nonces: Vec<(Uuid, String, i64)>) -> Write {
    Write {
        companies: vec![CompanyWrite {
            id: Uuid::nil(),
            slot: 1,
            replaced: false,
            head: Some(b"head".to_vec()),
            rows,
        }],
        globals: None,
        nonces,
    }
}

/// Keeps that take the journal past its size fold it, in order; what
/// is still in the journal at a start is read back too, a torn frame
/// skipped.
#[test]
fn journal_frames_are_folded_in_order_and_read_back_past_a_torn_one() {
    let dir = std::env::temp_dir().join(format!("paydesk-disk-{}", Uuid::new_v4()));
    let big = "x".repeat(JOURNAL_BYTES / 2 + 1);
    let client = Uuid::new_v4();
    let disk = Disk::open(&dir, false).unwrap();
    disk.keep(
        write(vec![put(0, 1, "first".into()), put(2, 2, big.clone())], vec![]),
        0,
    )
    .unwrap();
    disk.keep(
        write(
            vec![put(0, 1, "changed".into()), put(2, 3, big.clone())],
            vec![(client, "n1".into(), 100)],
        ),
        0,
    )
    .unwrap();
    let journal_bytes = || std::fs::metadata(dir.join(JOURNAL_FILE)).unwrap().len();
    assert_eq!(journal_bytes(), 0, "the second keep folded the journal");
    disk.keep(
        write(
            vec![
                (
                    2,
                    RowChange::Delete {
                        key: "2".into(),
                        ord: 2,
                    },
                ),
                put(0, 4, "last".into()),
            ],
            vec![(client, "n2".into(), 100)],
        ),
        0,
    )
    .unwrap();
    assert!(journal_bytes() > 0);
    // A write cut short by kill -9 leaves a torn frame; one that
    // follows it (another sandbox's) is still read.
    (&disk.journal).write_all(&FRAME_MARK).unwrap();
    (&disk.journal).write_all(&[200, 0, 0, 0, 1, 2]).unwrap();
    disk.keep(write(vec![put(1, 5, "after".into())], vec![]), 0)
        .unwrap();
    drop(disk);

    let kept = Disk::open(&dir, false).unwrap().load(&[], 50).unwrap();
    let rows: Vec<(usize, u64, String)> = kept.companies[0]
        .rows
        .iter()
        .map(|r| (r.kind, r.ord, r.body.decode().unwrap()))
        .collect();
    assert_eq!(
        rows,
        vec![
            (0, 1, "changed".into()),
            (2, 3, big),
            (0, 4, "last".into()),
            (1, 5, "after".into())
        ]
    );
    let mut nonces: Vec<String> = kept
        .nonces
        .into_iter()
        .map(|(c, n, _)| {
            assert_eq!(c, client);
            n
        })
        .collect();
    nonces.sort();
    assert_eq!(nonces, ["n1", "n2"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

fn sealed(entries: &[u8]) -> Vec<u8> {
    let mut frame = vec![0; FRAME_HEAD];
    frame.extend_from_slice(entries);
    seal(&mut frame).unwrap();
    frame
}

/// A frame cut short is torn and skipped; a whole-sized frame that
/// fails its checksum, or bytes that are no frame, are damage, where
/// reading stops.
#[test]
fn torn_frames_are_skipped_and_damaged_ones_stop_the_read() {
    let (a, b, c) = (sealed(b"first"), sealed(b"second"), sealed(b"third"));
    let whole = [a.clone(), b.clone(), c.clone()].concat();
    let read = scan(&whole);
    assert_eq!(read.whole, [&b"first"[..], b"second", b"third"]);
    assert!(read.torn.is_empty() && read.damage.is_none());

    // Cut short at the end (a write a crash interrupted).
    let torn_end = [&whole[..], &c[..c.len() - 2]].concat();
    let read = scan(&torn_end);
    assert_eq!((read.whole.len(), read.torn.clone()), (3, vec![whole.len()]));
    assert!(read.damage.is_none());
    let head_only = [&whole[..], &FRAME_MARK[..2]].concat();
    assert_eq!(scan(&head_only).torn, vec![whole.len()]);

    // A flipped byte inside the second frame.
    let mut flipped = whole.clone();
    flipped[a.len() + FRAME_HEAD + 1] ^= 1;
    let read = scan(&flipped);
    assert_eq!(read.whole, [&b"first"[..]]);
    let damage = read.damage.unwrap();
    assert_eq!(
        damage,
        Damage {
            frame: 2,
            offset: a.len(),
            checksum: true,
            whole_after: 1
        }
    );
    assert!(damage
        .to_string()
        .contains("record 2 (at byte 17) fails its checksum"));

    // A flipped byte in a mark: no frame starts there.
    let mut unmarked = whole.clone();
    unmarked[a.len()] ^= 1;
    let damage = scan(&unmarked).damage.unwrap();
    assert!(!damage.checksum);
    assert_eq!(damage.whole_after, 1);
}

#[test]
fn the_marker_reads_back_what_it_wrote() {
    let marker = Marker {
        store_id: Uuid::nil().to_string(),
        folds: 42,
    };
    assert_eq!(Marker::parse(&marker.to_string()), Some(marker));
    assert_eq!(Marker::parse("store x folds"), None);
}
