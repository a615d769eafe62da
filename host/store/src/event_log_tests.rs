use std::sync::mpsc;

use crate::{EventLogBounds, EventWrite, Store};

fn log(store: &Store, seq: u64, timestamp: i64, limit: u64) {
    let (tx, rx) = mpsc::channel();
    store.record_event(
        EventWrite {
            seq,
            timestamp,
            logged: Some(format!("{{\"n\":{seq}}}").into_bytes()),
            log_limit: limit,
            ..Default::default()
        },
        move |_, r| tx.send(r.map(|_| ())).unwrap(),
    );
    rx.recv().unwrap().unwrap();
}

fn seqs(store: &Store, after: u64) -> Vec<u64> {
    store
        .event_log_after(after, usize::MAX)
        .unwrap()
        .into_iter()
        .map(|e| e.seq)
        .collect()
}

#[test]
fn the_log_reads_after_a_sequence_number_in_order_and_remembers_the_highest() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    for seq in [1, 2, 5] {
        log(&store, seq, 100, 1000);
    }
    assert_eq!(seqs(&store, 0), [1, 2, 5]);
    assert_eq!(seqs(&store, 2), [5]);
    assert_eq!(store.event_log_after(1, 1).unwrap()[0].json, b"{\"n\":2}");
    assert_eq!(
        store.event_log_bounds().unwrap(),
        EventLogBounds {
            last_seq: 5,
            pruned_through: 0
        }
    );
}

#[test]
fn the_log_is_pruned_by_count_and_by_age_and_says_how_far() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    // A limit of 10 prunes once the slack (1024) is crossed.
    for seq in 1..=1035 {
        log(&store, seq, seq as i64, 10);
    }
    let left = seqs(&store, 0);
    assert_eq!(left.len(), 10);
    assert_eq!(left[0], 1026);
    assert_eq!(store.event_log_bounds().unwrap().pruned_through, 1025);

    assert_eq!(store.prune_event_log(1030).unwrap(), 4);
    assert_eq!(seqs(&store, 0)[0], 1030);
    assert_eq!(
        store.event_log_bounds().unwrap(),
        EventLogBounds {
            last_seq: 1035,
            pruned_through: 1029
        }
    );
}
