use std::sync::mpsc;

use bytes::Bytes;

use crate::domain::webhook::{DlqReason, PendingDelivery};
use crate::{EventWrite, NewDelivery, OutboxKey, Store, StoreResult};

fn delivery(id: &str, session: &str, url: &str) -> NewDelivery {
    NewDelivery {
        delivery: PendingDelivery {
            delivery_id: id.into(),
            session_id: session.into(),
            webhook_id: Some("w".into()),
            url: url.into(),
            secret: Some("k".into()),
            signature_scheme: Default::default(),
            event: "message".into(),
            attempts: 0,
            next_attempt_at: 0,
            last_error: None,
            created_at: 1,
            probe: false,
            replayed: false,
        },
        payload: Bytes::from(format!("{{\"id\":\"{id}\"}}")),
    }
}

/// Records one event with `deliveries`, waiting for its commit.
fn record(store: &Store, seq: u64, deliveries: Vec<NewDelivery>, limit: usize) -> Vec<OutboxKey> {
    let (tx, rx) = mpsc::channel::<StoreResult<Vec<OutboxKey>>>();
    store.record_event(
        EventWrite {
            seq,
            deliveries,
            backlog_limit: limit,
            dlq_capacity: 100,
            ..Default::default()
        },
        move |_, r| tx.send(r).unwrap(),
    );
    rx.recv().unwrap().unwrap()
}

fn ids(store: &Store) -> Vec<String> {
    store
        .outbox_all()
        .unwrap()
        .into_iter()
        .map(|e| e.key.delivery_id)
        .collect()
}

#[tokio::test]
async fn deliveries_read_back_in_event_order_and_leave_when_delivered_or_dead_lettered() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    record(&store, 2, vec![delivery("b", "s", "http://a")], 10);
    record(&store, 1, vec![delivery("a", "s", "http://a")], 10);
    record(&store, 3, vec![delivery("c", "s", "http://a")], 10);
    assert_eq!(ids(&store), ["a", "b", "c"]);
    let all = store.outbox_all().unwrap();
    assert_eq!(all[0].payload, Bytes::from("{\"id\":\"a\"}"));

    let b = all[1].key.clone();
    assert!(
        store
            .outbox_reschedule(b.clone(), 1, 99, "HTTP 500".into())
            .await
            .unwrap()
    );
    let again = store.outbox_all().unwrap();
    assert_eq!(again[1].delivery.attempts, 1);
    assert_eq!(again[1].delivery.next_attempt_at, 99);
    assert_eq!(again[1].delivery.last_error.as_deref(), Some("HTTP 500"));

    store.remove_outbox_later(vec![all[0].key.clone()]);
    // Taken along by the next event's write.
    record(&store, 9, vec![delivery("z", "s", "http://z")], 10);
    assert!(!ids(&store).contains(&"a".to_owned()));
    store.flush_outbox_removals().await.unwrap();
    assert!(
        store
            .outbox_dead_letter(b.clone(), 3, "HTTP 500".into(), 100)
            .await
            .unwrap()
    );
    assert!(
        !store
            .outbox_dead_letter(b, 3, "HTTP 500".into(), 100)
            .await
            .unwrap(),
        "a row already gone is not dead-lettered twice"
    );
    assert_eq!(ids(&store), ["c", "z"]);
    let dlq = store.list_dlq("s").unwrap();
    assert_eq!(dlq.len(), 1);
    assert_eq!(dlq[0].delivery_id, "b");
    assert_eq!(dlq[0].attempts, 3);
    assert_eq!(dlq[0].reason, DlqReason::Failed);
    assert_eq!(
        store.outbox_depths().unwrap(),
        [(lane("s", "http://a"), 1), (lane("s", "http://z"), 1)]
    );
    store.remove_outbox_later(vec![OutboxKey {
        session_id: "s".into(),
        url: "http://z".into(),
        seq: 9,
        delivery_id: "z".into(),
    }]);
    store.flush_outbox_removals().await.unwrap();
    assert_eq!(
        ids(&store),
        ["c"],
        "with no event write, the flush removes them"
    );
}

#[test]
fn a_url_past_its_backlog_limit_moves_its_oldest_deliveries_to_the_dlq() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    for (seq, id) in ["a", "b", "c"].into_iter().enumerate() {
        let evicted = record(
            &store,
            seq as u64 + 1,
            vec![delivery(id, "s", "http://a")],
            2,
        );
        assert_eq!(evicted.is_empty(), seq < 2);
    }
    record(&store, 4, vec![delivery("x", "s", "http://other")], 2);
    assert_eq!(ids(&store), ["b", "c", "x"]);
    let dlq = store.list_dlq("s").unwrap();
    assert_eq!(dlq.len(), 1);
    assert_eq!(dlq[0].delivery_id, "a");
    assert_eq!(dlq[0].reason, DlqReason::BacklogFull);
    assert!(
        dlq[0].last_error.starts_with("backlog_full"),
        "{}",
        dlq[0].last_error
    );
    let mut depths = store.outbox_depths().unwrap();
    depths.sort();
    assert_eq!(
        depths,
        [(lane("s", "http://a"), 2), (lane("s", "http://other"), 1)]
    );
}

fn lane(session: &str, url: &str) -> (String, String) {
    (session.to_owned(), url.to_owned())
}

#[test]
fn one_sessions_backlog_for_a_url_never_evicts_another_sessions_deliveries_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    record(&store, 1, vec![delivery("mine", "a", "http://shared")], 2);
    // Session b floods the same URL far past the limit.
    for seq in 2..=10u64 {
        record(
            &store,
            seq,
            vec![delivery(&format!("b{seq}"), "b", "http://shared")],
            2,
        );
    }
    assert!(
        ids(&store).contains(&"mine".to_owned()),
        "{:?}",
        ids(&store)
    );
    assert!(store.list_dlq("a").unwrap().is_empty());
    assert_eq!(store.list_dlq("b").unwrap().len(), 7);
    let mut depths = store.outbox_depths().unwrap();
    depths.sort();
    assert_eq!(
        depths,
        [
            (lane("a", "http://shared"), 1),
            (lane("b", "http://shared"), 2)
        ]
    );
}

#[test]
fn an_outbox_written_keyed_by_url_is_moved_to_session_and_url_at_open_and_keeps_its_rows() {
    use crate::tables::{WEBHOOK_OUTBOX_DEPTH_V1, WEBHOOK_OUTBOX_V1};
    let dir = tempfile::tempdir().unwrap();
    // A store as the previous release left it: rows keyed (URL, seq, id),
    // depths by URL, one row's payload inline and one pointing at the log.
    {
        let db = redb::Database::create(dir.path().join(crate::DB_FILE)).unwrap();
        let tx = db.begin_write().unwrap();
        {
            let mut rows = tx.open_table(WEBHOOK_OUTBOX_V1).unwrap();
            let mut depth = tx.open_table(WEBHOOK_OUTBOX_DEPTH_V1).unwrap();
            let a = delivery("d1", "s", "http://a").delivery;
            let b = delivery("d2", "t", "http://a").delivery;
            let inline = super::encode_row(&a, super::RowPayload::Inline(b"{\"x\":1}")).unwrap();
            let pointing = super::encode_row(&b, super::RowPayload::InLog).unwrap();
            rows.insert(("http://a", 7u64, "d1"), inline.as_slice())
                .unwrap();
            rows.insert(("http://a", 8u64, "d2"), pointing.as_slice())
                .unwrap();
            depth.insert("http://a", 2u64).unwrap();
            let mut log = tx.open_table(crate::tables::EVENT_LOG).unwrap();
            let mut row = 5i64.to_le_bytes().to_vec();
            row.extend_from_slice(b"{\"logged\":8}");
            log.insert(8u64, row.as_slice()).unwrap();
            let mut meta = tx.open_table(crate::tables::META).unwrap();
            meta.insert(crate::tables::SCHEMA_VERSION_KEY, 3u64)
                .unwrap();
            meta.insert(crate::tables::EVENT_SEQ_KEY, 8u64).unwrap();
        }
        tx.commit().unwrap();
    }
    let store = Store::open(dir.path()).unwrap();
    let rows = store.outbox_all().unwrap();
    let got: Vec<(String, String, u64, Bytes)> = rows
        .iter()
        .map(|r| {
            (
                r.key.session_id.clone(),
                r.key.delivery_id.clone(),
                r.key.seq,
                r.payload.clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("s".into(), "d1".into(), 7, Bytes::from("{\"x\":1}")),
            ("t".into(), "d2".into(), 8, Bytes::from("{\"logged\":8}")),
        ]
    );
    let mut depths = store.outbox_depths().unwrap();
    depths.sort();
    assert_eq!(
        depths,
        [(lane("s", "http://a"), 1), (lane("t", "http://a"), 1)]
    );
    // Delivered rows leave by their new keys.
    store.remove_outbox_later(vec![rows[0].key.clone()]);
    drop(rows);
    futures_lite_block(store.flush_outbox_removals()).unwrap();
    assert_eq!(ids(&store), ["d2"]);
    drop(store);
    // Opening again finds nothing more to move.
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(ids(&store), ["d2"]);
}

/// Runs a future to its end on a fresh runtime.
fn futures_lite_block<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(f)
}

#[test]
fn deleting_a_session_or_a_webhook_drops_its_pending_deliveries() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let session =
        |id: &str| crate::domain::session::SessionRecord::new(id.into(), None, "sim".into(), None);
    assert!(store.insert_session(&session("s")).unwrap());
    assert!(store.insert_session(&session("t")).unwrap());
    record(
        &store,
        1,
        vec![
            delivery("a", "s", "http://a"),
            delivery("b", "t", "http://a"),
        ],
        10,
    );
    let mut other = delivery("c", "t", "http://b");
    other.delivery.webhook_id = Some("gone".into());
    record(&store, 2, vec![other], 10);
    assert!(store.delete_session("s").unwrap());
    assert_eq!(ids(&store), ["b", "c"]);
    assert_eq!(
        store
            .outbox_forget_webhook("t", "http://b", "gone")
            .unwrap(),
        1
    );
    assert_eq!(ids(&store), ["b"]);
    assert_eq!(store.outbox_depths().unwrap(), [(lane("t", "http://a"), 1)]);
}

/// Records event `seq` (at `timestamp`) in the event log as `logged`, with
/// `deliveries`, keeping `log_limit` log rows; waits for its commit.
fn record_logged(
    store: &Store,
    seq: u64,
    timestamp: i64,
    logged: &str,
    deliveries: Vec<NewDelivery>,
    log_limit: u64,
) -> Vec<OutboxKey> {
    let (tx, rx) = mpsc::channel::<StoreResult<Vec<OutboxKey>>>();
    store.record_event(
        EventWrite {
            seq,
            timestamp,
            logged: Some(logged.to_owned().into()),
            log_limit,
            deliveries,
            backlog_limit: 2,
            dlq_capacity: 100,
            ..Default::default()
        },
        move |_, r| tx.send(r).unwrap(),
    );
    rx.recv().unwrap().unwrap()
}

/// A delivery of `id` whose payload is `payload`.
fn carrying(id: &str, url: &str, payload: &str) -> NewDelivery {
    let mut d = delivery(id, "s", url);
    d.payload = Bytes::from(payload.to_owned());
    d
}

fn payloads(store: &Store) -> Vec<(String, Bytes)> {
    store
        .outbox_all()
        .unwrap()
        .into_iter()
        .map(|e| (e.key.delivery_id, e.payload))
        .collect()
}

#[tokio::test]
async fn a_delivery_of_the_logged_envelope_keeps_its_payload_after_the_log_prunes_that_event() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    // "a" and "c" carry their event's envelope as logged; "b" was changed
    // by a scoped filter, so it carries its own.
    record_logged(
        &store,
        1,
        10,
        "{\"n\":1}",
        vec![
            carrying("a", "http://a", "{\"n\":1}"),
            carrying("b", "http://b", "{\"n\":1,\"filtered\":true}"),
        ],
        1000,
    );
    record_logged(
        &store,
        2,
        20,
        "{\"n\":2}",
        vec![carrying("c", "http://a", "{\"n\":2}")],
        1000,
    );
    let expected = |ids: &[(&str, &str)]| -> Vec<(String, Bytes)> {
        ids.iter()
            .map(|(id, p)| ((*id).to_owned(), Bytes::from((*p).to_owned())))
            .collect()
    };
    assert_eq!(
        payloads(&store),
        expected(&[
            ("a", "{\"n\":1}"),
            ("c", "{\"n\":2}"),
            ("b", "{\"n\":1,\"filtered\":true}")
        ])
    );

    // Pruned by age: event 1 leaves the log, "a" keeps its payload.
    assert_eq!(store.prune_event_log(15).unwrap(), 1);
    assert!(
        store
            .event_log_after(0, 10)
            .unwrap()
            .iter()
            .all(|e| e.seq == 2)
    );
    let a = store.outbox_all().unwrap().remove(0);
    assert_eq!(a.payload, Bytes::from("{\"n\":1}"));
    assert!(
        store
            .outbox_dead_letter(a.key, 3, "HTTP 500".into(), 100)
            .await
            .unwrap()
    );
    assert_eq!(store.list_dlq("s").unwrap()[0].payload, "{\"n\":1}");

    // Pruned by count: a limit of 1 prunes once the slack is crossed, and
    // "c", still pending, keeps the payload of event 2.
    for seq in 3..=1030 {
        record_logged(&store, seq, 30, "{}", Vec::new(), 1);
    }
    assert!(
        store
            .event_log_after(0, 10)
            .unwrap()
            .iter()
            .all(|e| e.seq > 2)
    );
    assert_eq!(
        payloads(&store),
        expected(&[("c", "{\"n\":2}"), ("b", "{\"n\":1,\"filtered\":true}")])
    );

    // Evicted past the backlog (2 per URL here) with their payloads: "c"
    // holds its own by now, "d" points at the log.
    record_logged(
        &store,
        1031,
        30,
        "{\"n\":1031}",
        vec![carrying("d", "http://a", "{\"n\":1031}")],
        1,
    );
    record_logged(
        &store,
        1032,
        30,
        "{\"n\":1032}",
        vec![carrying("e", "http://a", "{\"n\":1032}")],
        1,
    );
    record_logged(
        &store,
        1033,
        30,
        "{\"n\":1033}",
        vec![carrying("f", "http://a", "{\"n\":1033}")],
        1,
    );
    let dlq: Vec<(String, String)> = store
        .list_dlq("s")
        .unwrap()
        .into_iter()
        .map(|e| (e.delivery_id, e.payload))
        .collect();
    assert!(dlq.contains(&("c".into(), "{\"n\":2}".into())), "{dlq:?}");
    assert!(
        dlq.contains(&("d".into(), "{\"n\":1031}".into())),
        "{dlq:?}"
    );
    assert_eq!(
        payloads(&store),
        expected(&[
            ("e", "{\"n\":1032}"),
            ("f", "{\"n\":1033}"),
            ("b", "{\"n\":1,\"filtered\":true}")
        ])
    );
}

#[tokio::test]
async fn event_writes_sharing_a_transaction_keep_url_depths_and_log_counters_true() {
    let dir = tempfile::tempdir().unwrap();
    let total = 1_200u64;
    {
        let store = Store::open(dir.path()).unwrap();
        let (tx, rx) = mpsc::channel::<StoreResult<()>>();
        let mut answered = 0;
        // Queued without waiting, so the writer takes long runs of them in
        // one transaction, with removals riding on some and the log pruned
        // by count (past its limit and slack) in the middle of one.
        for seq in 1..=total {
            let tx = tx.clone();
            let id = format!("{{\"seq\":{seq}}}");
            let deliveries = vec![
                carrying(&format!("a{seq}"), "http://a", &id),
                carrying(&format!("b{seq}"), "http://b", "other"),
            ];
            store.record_event(
                EventWrite {
                    seq,
                    timestamp: 1,
                    logged: Some(id.into()),
                    log_limit: 10,
                    deliveries,
                    backlog_limit: 10_000,
                    dlq_capacity: 100,
                    ..Default::default()
                },
                move |_, r| tx.send(r.map(|_| ())).unwrap(),
            );
            if seq % 100 == 0 {
                // Once they are committed, the first half of the last
                // hundred to `a` are delivered.
                while answered < seq {
                    rx.recv().unwrap().unwrap();
                    answered += 1;
                }
                store.remove_outbox_later(
                    (seq - 99..=seq - 50)
                        .map(|s| OutboxKey {
                            session_id: "s".into(),
                            url: "http://a".into(),
                            seq: s,
                            delivery_id: format!("a{s}"),
                        })
                        .collect(),
                );
            }
        }
        assert_eq!(answered, total);
        // The last removals ride on no event: they are committed alone.
        store.flush_outbox_removals().await.unwrap();
    }
    let store = Store::open(dir.path()).unwrap();
    let mut pending: std::collections::BTreeMap<String, u64> = Default::default();
    for e in store.outbox_all().unwrap() {
        *pending.entry(e.key.url).or_default() += 1;
    }
    assert_eq!(pending["http://a"], total / 2, "half of `a`'s delivered");
    assert_eq!(pending["http://b"], total);
    let mut depths = store.outbox_depths().unwrap();
    depths.sort();
    assert_eq!(
        depths,
        pending
            .into_iter()
            .map(|(url, n)| (lane("s", &url), n))
            .collect::<Vec<_>>(),
        "each URL's depth is its pending deliveries"
    );
    let bounds = store.event_log_bounds().unwrap();
    assert_eq!(bounds.last_seq, total);
    // Pruned back to 10 rows when the count passed 10 + 1024, then grown.
    let logged = store.event_log_after(0, usize::MAX).unwrap();
    assert_eq!(bounds.pruned_through, logged[0].seq - 1);
    assert_eq!(logged.len() as u64, total - bounds.pruned_through);
    assert_eq!(bounds.pruned_through, 1025);
    // The count went on from what was written: the next prune comes when
    // the log again holds more than its limit and slack.
    let more = total + 1_100;
    for seq in total + 1..=more {
        record_logged(&store, seq, 1, "{}", Vec::new(), 10);
    }
    let bounds = store.event_log_bounds().unwrap();
    assert_eq!(bounds.last_seq, more);
    let logged = store.event_log_after(0, usize::MAX).unwrap();
    assert!(
        logged.len() as u64 <= 10 + 1024,
        "pruned again: {}",
        logged.len()
    );
    assert_eq!(logged.last().unwrap().seq, more);
}

#[tokio::test]
async fn removing_delivered_rows_scattered_over_a_backlog_leaves_exactly_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    // Two URLs, 1,200 events: seq n owes "a<n>" to http://a and, every
    // third event, "b<n>" to http://b.
    let mut keys = Vec::new();
    for seq in 1..=1_200u64 {
        let mut owed = vec![("http://a", format!("a{seq}"))];
        if seq.is_multiple_of(3) {
            owed.push(("http://b", format!("b{seq}")));
        }
        let news = owed
            .iter()
            .map(|(url, id)| delivery(id, "s", url))
            .collect();
        record(&store, seq, news, 10_000);
        keys.extend(owed.into_iter().map(|(url, delivery_id)| OutboxKey {
            session_id: "s".into(),
            url: url.into(),
            seq,
            delivery_id,
        }));
    }
    // Delivered: a dense run at the start, every other row of a later
    // stretch, one straggler far from both (so the batch spans three
    // stretches), a row listed twice, and a row that is not there.
    let delivered = |k: &OutboxKey| match k.url.as_str() {
        "http://a" => {
            k.seq <= 100 || (600..700).contains(&k.seq) && k.seq.is_multiple_of(2) || k.seq == 1_150
        }
        _ => k.seq.is_multiple_of(6),
    };
    let mut going: Vec<OutboxKey> = keys.iter().filter(|k| delivered(k)).cloned().collect();
    going.push(going[3].clone());
    going.push(OutboxKey {
        session_id: "s".into(),
        url: "http://a".into(),
        seq: 5_000,
        delivery_id: "never".into(),
    });
    store.remove_outbox_later(going);
    store.flush_outbox_removals().await.unwrap();

    // The outbox lists by URL, then in event order.
    let mut left: Vec<&OutboxKey> = keys.iter().filter(|k| !delivered(k)).collect();
    left.sort_by_key(|k| (k.url.clone(), k.seq));
    let left: Vec<String> = left.iter().map(|k| k.delivery_id.clone()).collect();
    assert_eq!(ids(&store), left);
    let depth = |url: &str| {
        keys.iter()
            .filter(|k| k.url == url && !delivered(k))
            .count() as u64
    };
    assert_eq!(
        store.outbox_depths().unwrap(),
        [
            (lane("s", "http://a"), depth("http://a")),
            (lane("s", "http://b"), depth("http://b")),
        ]
    );
}
