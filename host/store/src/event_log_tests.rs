use std::sync::mpsc;

use crate::{EventLogBounds, EventWrite, Store};

fn log(store: &Store, seq: u64, timestamp: i64, limit: u64) {
    let (tx, rx) = mpsc::channel();
    store.record_event(
        EventWrite {
            seq,
            timestamp,
            logged: Some(format!("{{\"n\":{seq}}}").into()),
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

/// An inbound text message event of `chat`, its record stored.
fn message_event(seq: u64, id: &str, chat: &str) -> EventWrite {
    use crate::domain::message::{Direction, MessageRecord};
    EventWrite {
        seq,
        timestamp: seq as i64,
        message: Some(MessageRecord {
            message_id: id.into(),
            session_id: "s".into(),
            direction: Direction::Inbound,
            chat: chat.into(),
            sender: Some(chat.into()),
            kind: "text".into(),
            body: serde_json::json!({ "text": id }),
            timestamp: seq as i64,
        }),
        logged: Some(format!("{{\"n\":{seq}}}").into()),
        log_limit: 10_000,
        ..Default::default()
    }
}

#[test]
fn a_burst_of_messages_in_one_chat_counts_each_once_around_a_write_of_that_chat() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let chat = "1@s.whatsapp.net";
    let (tx, rx) = mpsc::channel();
    let queue = |seq: u64, id: &str| {
        let tx = tx.clone();
        store.record_event(message_event(seq, id, chat), move |_, r| {
            tx.send(r.map(|_| ())).unwrap()
        });
    };
    // Queued without waiting, so the writer takes many in one transaction.
    for seq in 1..=100 {
        queue(seq, &format!("A{seq}"));
    }
    // A grouped write of the same chat between the events (an outbound
    // message, which also reads the chat: queued behind the first hundred,
    // before the rest, likely in the same transaction as some of either).
    let sent = crate::domain::message::MessageRecord {
        message_id: "OUT".into(),
        session_id: "s".into(),
        direction: crate::domain::message::Direction::Outbound,
        chat: chat.into(),
        sender: None,
        kind: "text".into(),
        body: serde_json::json!({ "text": "reply" }),
        timestamp: 100,
    };
    store.append_message(&sent).unwrap();
    for seq in 101..=160 {
        queue(seq, &format!("A{seq}"));
    }
    // A redelivered id: listed, not counted again.
    queue(161, "A160");
    for _ in 0..161 {
        rx.recv().unwrap().unwrap();
    }
    let c = store.chat("s", chat).unwrap().unwrap();
    assert_eq!(c.message_count, 161, "every message counted once");
    assert_eq!(c.unread_count, 60, "the reply read the first hundred");
    assert_eq!(c.last_message.unwrap().message_id, "A160");
    assert_eq!(store.list_messages("s", 0, 1000).unwrap().len(), 162);
    assert_eq!(seqs(&store, 0).len(), 161);
}
