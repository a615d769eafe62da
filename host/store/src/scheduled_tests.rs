//! The scheduled-send tables: insert, the due index as records change,
//! waiting and waking, listing, and the session cascade.

use serde_json::json;

use crate::domain::scheduled::{ScheduledSend, ScheduledStatus, new_scheduled_id};
use crate::domain::session::SessionRecord;
use crate::{DueEntry, Store};

fn store_with(sessions: &[&str]) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    for s in sessions {
        store
            .insert_session(&SessionRecord::new((*s).into(), None, "sim".into(), None))
            .unwrap();
    }
    (dir, store)
}

fn send(session: &str, due_ms: u64) -> ScheduledSend {
    ScheduledSend {
        id: new_scheduled_id(),
        session_id: session.into(),
        kind: "text".into(),
        to: "15550000001@s.whatsapp.net".into(),
        send_at: (due_ms / 1000) as i64,
        status: ScheduledStatus::Scheduled,
        created_at: 1,
        attempts: 0,
        message_id: "3EB0000000000000000A".into(),
        sent_at: None,
        finished_at: None,
        last_error: None,
        body: json!({"text": "hi"}),
        due_ms: Some(due_ms),
        waiting: false,
    }
}

fn insert(store: &Store, s: &ScheduledSend) {
    assert!(
        store
            .insert_scheduled(s, br#"{"to":"1","text":"hi"}"#)
            .unwrap()
    );
}

fn due_ids(store: &Store, until: u64) -> Vec<String> {
    store
        .due_scheduled(until, 100)
        .unwrap()
        .into_iter()
        .map(|d| d.id)
        .collect()
}

#[test]
fn a_send_for_a_missing_session_is_not_stored() {
    let (_dir, store) = store_with(&[]);
    let s = send("ghost", 1_000);
    assert!(!store.insert_scheduled(&s, b"{}").unwrap());
    assert!(store.next_scheduled_due().unwrap().is_none());
    assert!(store.list_all_scheduled(&[], 0, 10).unwrap().is_empty());
}

#[test]
fn the_due_index_yields_the_earliest_first_and_follows_every_change() {
    let (_dir, store) = store_with(&["a"]);
    let late = send("a", 5_000);
    let early = send("a", 2_000);
    insert(&store, &late);
    insert(&store, &early);
    assert_eq!(store.next_scheduled_due().unwrap(), Some(2_000));
    assert_eq!(due_ids(&store, 1_999), Vec::<String>::new());
    assert_eq!(
        due_ids(&store, 5_000),
        [early.id.as_str(), late.id.as_str()]
    );
    assert_eq!(
        store.due_scheduled(2_000, 10).unwrap(),
        [DueEntry {
            due_ms: 2_000,
            id: early.id.clone(),
            session_id: "a".into()
        }]
    );

    // Moved later: the old row goes, the new one comes.
    store
        .update_scheduled("a", &early.id, |s| {
            s.due_ms = Some(9_000);
            true
        })
        .unwrap();
    assert_eq!(due_ids(&store, 5_000), [late.id.as_str()]);
    // Terminal: out of the due index, and its body is dropped.
    let (done, written) = store
        .update_scheduled("a", &late.id, |s| {
            s.status = ScheduledStatus::Sent;
            true
        })
        .unwrap()
        .unwrap();
    assert!(written);
    assert_eq!(done.due_ms, None);
    assert!(store.scheduled_request("a", &late.id).unwrap().is_none());
    assert!(store.scheduled_request("a", &early.id).unwrap().is_some());
    assert_eq!(store.next_scheduled_due().unwrap(), Some(9_000));
    // A refused change writes nothing.
    let (same, written) = store
        .update_scheduled("a", &early.id, |_| false)
        .unwrap()
        .unwrap();
    assert!(!written);
    assert_eq!(same.due_ms, Some(9_000));
    assert!(
        store
            .update_scheduled("a", "nope", |_| true)
            .unwrap()
            .is_none()
    );
}

#[test]
fn parked_sends_wake_per_session_and_all_at_once() {
    let (_dir, store) = store_with(&["a", "b"]);
    let (a, b) = (send("a", 1_000), send("b", 1_000));
    insert(&store, &a);
    insert(&store, &b);
    for s in [&a, &b] {
        store
            .update_scheduled(&s.session_id, &s.id, |s| {
                s.waiting = true;
                s.due_ms = Some(50_000);
                true
            })
            .unwrap();
    }
    assert!(
        due_ids(&store, 10_000).is_empty(),
        "parked until the deadline"
    );
    assert_eq!(store.wake_waiting(Some("a"), 10_000).unwrap(), 1);
    assert_eq!(due_ids(&store, 10_000), [a.id.as_str()]);
    let woken = store.get_scheduled("a", &a.id).unwrap().unwrap();
    assert!(!woken.waiting);
    assert_eq!(store.wake_waiting(Some("a"), 10_000).unwrap(), 0);
    assert_eq!(store.wake_waiting(None, 10_000).unwrap(), 1);
    assert_eq!(due_ids(&store, 10_000).len(), 2);
}

#[test]
fn listings_are_newest_first_filtered_and_paged_per_session_and_fleet_wide() {
    let (_dir, store) = store_with(&["a", "b"]);
    let a1 = send("a", 1_000);
    let b1 = send("b", 1_000);
    let a2 = send("a", 1_000);
    for s in [&a1, &b1, &a2] {
        insert(&store, s);
    }
    store
        .update_scheduled("a", &a1.id, |s| {
            s.status = ScheduledStatus::Cancelled;
            true
        })
        .unwrap();
    let ids = |v: Vec<ScheduledSend>| v.into_iter().map(|s| s.id).collect::<Vec<_>>();
    assert_eq!(
        ids(store.list_scheduled("a", &[], 0, 10).unwrap()),
        [a2.id.as_str(), a1.id.as_str()]
    );
    assert_eq!(
        ids(store
            .list_scheduled("a", &[ScheduledStatus::Cancelled], 0, 10)
            .unwrap()),
        [a1.id.as_str()]
    );
    assert_eq!(
        ids(store.list_scheduled("a", &[], 1, 10).unwrap()),
        [a1.id.as_str()]
    );
    assert_eq!(
        ids(store.list_all_scheduled(&[], 0, 10).unwrap()),
        [a2.id.as_str(), b1.id.as_str(), a1.id.as_str()]
    );
    assert_eq!(
        ids(store
            .list_all_scheduled(&[ScheduledStatus::Scheduled], 1, 1)
            .unwrap()),
        [b1.id.as_str()]
    );
}

#[test]
fn deleting_a_session_removes_its_sends_from_every_table_and_leaves_others() {
    let (_dir, store) = store_with(&["a", "ab"]);
    let gone = send("a", 1_000);
    let parked = send("a", 2_000);
    let kept = send("ab", 3_000);
    for s in [&gone, &parked, &kept] {
        insert(&store, s);
    }
    store
        .update_scheduled("a", &parked.id, |s| {
            s.waiting = true;
            true
        })
        .unwrap();
    assert!(store.delete_session("a").unwrap());
    assert_eq!(due_ids(&store, u64::MAX - 1), [kept.id.as_str()]);
    assert_eq!(store.next_scheduled_due().unwrap(), Some(3_000));
    assert_eq!(store.wake_waiting(None, 0).unwrap(), 0);
    assert!(store.get_scheduled("a", &gone.id).unwrap().is_none());
    assert!(store.scheduled_request("a", &gone.id).unwrap().is_none());
    assert_eq!(store.list_all_scheduled(&[], 0, 10).unwrap().len(), 1);
    assert!(store.list_scheduled("a", &[], 0, 10).unwrap().is_empty());
}

#[test]
fn due_heads_give_each_free_session_its_earliest_send_and_pass_over_busy_ones() {
    let (_dir, store) = store_with(&["busy", "b", "c"]);
    let busy: Vec<ScheduledSend> = (0..5).map(|i| send("busy", 100 + i)).collect();
    for s in &busy {
        insert(&store, s);
    }
    let b1 = send("b", 200);
    let b2 = send("b", 210);
    let c1 = send("c", 5_000);
    for s in [&b1, &b2, &c1] {
        insert(&store, s);
    }
    let none = std::collections::HashSet::new();
    let heads = store.due_scheduled_heads(1_000, &none, 10).unwrap();
    let ids: Vec<&str> = heads.due.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids, [busy[0].id.as_str(), b1.id.as_str()]);
    assert_eq!(
        heads.next_ms,
        Some(5_000),
        "c's send is the next to come due"
    );

    let skip: std::collections::HashSet<String> = ["busy".to_owned()].into();
    let heads = store.due_scheduled_heads(1_000, &skip, 10).unwrap();
    let ids: Vec<&str> = heads.due.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(
        ids,
        [b1.id.as_str()],
        "the busy session's backlog is passed over"
    );

    let heads = store.due_scheduled_heads(1_000, &none, 1).unwrap();
    assert_eq!(heads.due.len(), 1);
    assert_eq!(
        heads.next_ms, None,
        "cut off at the limit: the caller looks again"
    );
}
