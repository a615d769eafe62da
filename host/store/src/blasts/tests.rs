//! The blast tables: create, passes over pending recipients, the send
//! bookkeeping, retry, failure and the session cascade.

use std::collections::HashSet;

use serde_json::json;

use crate::domain::blast::model::{
    BlastJob, BlastOptions, JobStatus, RecipientStatus, Refusal, SendOutcome,
};
use crate::domain::blast::plan::plan;
use crate::domain::session::SessionRecord;
use crate::{NextRecipient, Store};

fn job(session: &str, total: u64) -> BlastJob {
    BlastJob {
        id: format!("job-{session}-{total}"),
        seq: 0,
        session_id: session.into(),
        account: "1@s.whatsapp.net".into(),
        endpoint: "text".into(),
        status: JobStatus::Pending,
        options: BlastOptions {
            max_attempts: 2,
            ..BlastOptions::default()
        },
        total,
        sent_count: 0,
        failed_count: 0,
        dlq_count: 0,
        skipped_dup_count: 0,
        send_at: None,
        created_at: 1,
        started_at: None,
        finished_at: None,
        in_flight: None,
        reason: None,
    }
}

fn jids(n: usize) -> Vec<String> {
    (1..=n)
        .map(|i| format!("1555000{i:04}@s.whatsapp.net"))
        .collect()
}

/// A running job of `n` distinct recipients on session `s`.
fn running(store: &Store, s: &str, n: usize) -> BlastJob {
    let (rows, accepted) = plan(&jids(n), &HashSet::new(), 1);
    let j = job(s, accepted);
    let seq = store
        .insert_blast(&j, &json!({"text": "hi"}), &rows)
        .unwrap();
    store
        .modify_blast(s, seq, |j| Ok::<_, ()>(j.claim(2)))
        .unwrap();
    store.get_blast_at(s, seq).unwrap().unwrap()
}

fn send(store: &Store, j: &BlastJob, id: u64, outcome: SendOutcome) -> BlastJob {
    let r = store
        .begin_blast_send(&j.session_id, j.seq, id, 3, || format!("M{id}"))
        .unwrap()
        .expect("begins");
    assert_eq!(r.status, RecipientStatus::Sending);
    let outcome = match outcome {
        SendOutcome::Sent { .. } => SendOutcome::Sent {
            message_id: r.message_id.unwrap(),
        },
        other => other,
    };
    store
        .finish_blast_send(&j.session_id, j.seq, id, &outcome, 4)
        .unwrap()
        .unwrap()
}

fn ok() -> SendOutcome {
    SendOutcome::Sent {
        message_id: String::new(),
    }
}

fn fail() -> SendOutcome {
    SendOutcome::Failed { error: "x".into() }
}

#[test]
fn a_job_is_found_by_id_and_listed_newest_first_across_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let a = running(&store, "a", 2);
    let b = running(&store, "b", 3);
    assert!(b.seq > a.seq);
    assert_eq!(store.get_blast("a", &a.id).unwrap().unwrap().seq, a.seq);
    assert!(store.get_blast("b", &a.id).unwrap().is_none());
    let all: Vec<u64> = store
        .list_blasts(None, None)
        .unwrap()
        .iter()
        .map(|j| j.seq)
        .collect();
    assert_eq!(all, [b.seq, a.seq]);
    assert_eq!(store.list_blasts(Some("a"), None).unwrap().len(), 1);
    assert!(
        store
            .list_blasts(None, Some(JobStatus::Pending))
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.blast_body("a", a.seq).unwrap().unwrap()["text"], "hi");
}

fn next_id(store: &Store, j: &BlastJob, after: u64) -> Option<u64> {
    match store.next_pending_recipient(j, after, 0).unwrap() {
        NextRecipient::Ready(r) => Some(r.id),
        _ => None,
    }
}

#[test]
fn a_held_recipient_is_passed_over_until_its_hold_ends_without_spending_an_attempt() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let j = running(&store, "s", 3);
    let held = |until| SendOutcome::Held {
        error: "held: timelock".into(),
        until,
        attempted: false,
    };
    send(&store, &j, 1, held(500));
    send(&store, &j, 2, held(400));
    let next = store.next_pending_recipient(&j, 2, 100).unwrap();
    assert!(
        matches!(next, NextRecipient::Ready(ref r) if r.id == 3),
        "{next:?}"
    );
    let j = send(&store, &j, 3, ok());
    assert_eq!(
        store.next_pending_recipient(&j, 3, 100).unwrap(),
        NextRecipient::HeldUntil(400),
        "only held recipients are left: the earliest hold's end"
    );
    let NextRecipient::Ready(r) = store.next_pending_recipient(&j, 3, 450).unwrap() else {
        panic!("recipient 2's hold is over");
    };
    assert_eq!((r.id, r.attempts, r.held_until), (2, 0, Some(400)));
    assert_eq!((j.failed_count, j.dlq_count), (0, 0));
    let j = send(&store, &j, 2, ok());
    let r = store
        .list_blast_recipients(&j, Some(RecipientStatus::Sent), 0, 10)
        .unwrap();
    assert!(r.iter().all(|r| r.held_until.is_none()), "{r:?}");
}

#[test]
fn passes_visit_pending_recipients_in_order_and_come_back_for_failed_ones() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let j = running(&store, "s", 3);
    assert_eq!(next_id(&store, &j, 0), Some(1));
    send(&store, &j, 1, fail());
    assert_eq!(next_id(&store, &j, 1), Some(2));
    send(&store, &j, 2, ok());
    send(&store, &j, 3, ok());
    assert_eq!(next_id(&store, &j, 3), Some(1), "the next pass starts over");
    let j = send(&store, &j, 1, fail());
    assert_eq!((j.sent_count, j.failed_count, j.dlq_count), (2, 2, 1));
    assert_eq!(
        store.next_pending_recipient(&j, 1, 0).unwrap(),
        NextRecipient::Done
    );
    let dlq = store
        .list_blast_recipients(&j, Some(RecipientStatus::Dlq), 0, 10)
        .unwrap();
    assert_eq!(dlq.len(), 1);
    assert_eq!(dlq[0].message_id.as_deref(), Some("M1"));
    assert_eq!(
        store.blast_already_sent("s", &jids(3)).unwrap(),
        HashSet::from([jids(3)[1].clone(), jids(3)[2].clone()])
    );
}

#[test]
fn only_one_send_is_in_flight_and_only_for_a_running_job() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let j = running(&store, "s", 2);
    store
        .begin_blast_send("s", j.seq, 1, 3, || "M1".into())
        .unwrap()
        .unwrap();
    assert!(
        store
            .begin_blast_send("s", j.seq, 2, 3, || "M2".into())
            .unwrap()
            .is_none()
    );
    assert_eq!(
        store.get_blast_at("s", j.seq).unwrap().unwrap().in_flight,
        Some(1)
    );
    store
        .modify_blast("s", j.seq, |j| j.cancel(5))
        .unwrap()
        .unwrap()
        .unwrap();
    let after = store
        .finish_blast_send(
            "s",
            j.seq,
            1,
            &SendOutcome::Sent {
                message_id: "M1".into(),
            },
            6,
        )
        .unwrap()
        .unwrap();
    assert_eq!(
        after.status,
        JobStatus::Cancelled,
        "a late success keeps the cancel"
    );
    assert_eq!((after.sent_count, after.in_flight), (1, None));
    assert!(
        store
            .begin_blast_send("s", j.seq, 2, 7, || "M2".into())
            .unwrap()
            .is_none()
    );
}

#[test]
fn retry_reopens_dlq_recipients_and_is_refused_with_nothing_to_retry() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let j = running(&store, "s", 2);
    assert_eq!(
        store.retry_blast("s", &j.id, 5).unwrap(),
        Some(Err(Refusal::Running))
    );
    send(&store, &j, 1, fail());
    send(&store, &j, 1, fail());
    send(&store, &j, 2, ok());
    store
        .modify_blast("s", j.seq, |j| Ok::<_, ()>(j.close(6)))
        .unwrap();
    let reopened = store.retry_blast("s", &j.id, 7).unwrap().unwrap().unwrap();
    assert_eq!(
        (reopened.status, reopened.dlq_count),
        (JobStatus::Pending, 0)
    );
    let r = store.get_blast_recipient(&reopened, 1).unwrap().unwrap();
    assert_eq!((r.status, r.attempts), (RecipientStatus::Pending, 0));
    store.modify_blast("s", j.seq, |j| j.cancel(8)).unwrap();
    let j2 = running(&store, "t", 1);
    send(&store, &j2, 1, ok());
    store
        .modify_blast("t", j2.seq, |j| Ok::<_, ()>(j.close(6)))
        .unwrap();
    assert_eq!(
        store.retry_blast("t", &j2.id, 7).unwrap(),
        Some(Err(Refusal::NothingToRetry))
    );
    assert_eq!(store.retry_blast("t", "nope", 7).unwrap(), None);
}

#[test]
fn failing_a_job_marks_its_pending_recipients_failed_for_a_later_retry() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let j = running(&store, "s", 3);
    send(&store, &j, 1, ok());
    let failed = store
        .fail_blast("s", j.seq, "logged out", 9)
        .unwrap()
        .unwrap();
    assert_eq!(failed.status, JobStatus::Failed);
    let rs = store
        .list_blast_recipients(&failed, Some(RecipientStatus::Failed), 0, 10)
        .unwrap();
    assert_eq!(rs.iter().map(|r| r.id).collect::<Vec<_>>(), [2, 3]);
    assert_eq!(rs[0].last_error.as_deref(), Some("logged out"));
    assert!(store.fail_blast("s", j.seq, "again", 9).unwrap().is_none());
    let retried = store.retry_blast("s", &j.id, 10).unwrap().unwrap().unwrap();
    assert_eq!(retried.status, JobStatus::Pending);
    assert_eq!(
        store
            .list_blast_recipients(&retried, Some(RecipientStatus::Pending), 1, 10)
            .unwrap()
            .len(),
        1,
        "offset"
    );
}

#[test]
fn deleting_a_session_removes_its_blasts_and_leaves_others() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    for id in ["a", "ab"] {
        store
            .insert_session(&SessionRecord::new(id.into(), None, "sim".into(), None))
            .unwrap();
    }
    let a = running(&store, "a", 2);
    let ab = running(&store, "ab", 2);
    send(&store, &a, 1, ok());
    store.delete_session("a").unwrap();
    assert!(store.list_blasts(Some("a"), None).unwrap().is_empty());
    assert!(store.get_blast("a", &a.id).unwrap().is_none());
    assert!(
        store
            .list_blast_recipients(&a, None, 0, 10)
            .unwrap()
            .is_empty()
    );
    assert!(store.blast_already_sent("a", &jids(2)).unwrap().is_empty());
    assert_eq!(
        store.list_blast_recipients(&ab, None, 0, 10).unwrap().len(),
        2
    );
}
