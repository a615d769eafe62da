//! Blasts across a stop, and the recovery of a send a crash cut off.
//!
//! Real crashes (SIGKILL of the binary mid-job, mid-batch and mid-send) are
//! in `crash_blasts.rs`. What stays here:
//!
//! - a *graceful* restart mid-job, which a kill does not exercise: the send
//!   in flight finishes and is recorded before the stop;
//! - unit-level tests of the recovery code, on a crash state built by hand
//!   while the gateway is stopped: a recipient left `sending` whose message
//!   the network already has ("landed"), and one it never got ("lost"). A
//!   kill reaches the "landed" state only if it falls between the sim's
//!   outbox commit and the gateway's "sent" write, a window of a group
//!   commit that no observable condition lets a test aim at; building the
//!   state makes both branches of the recovery deterministic.

use std::collections::HashMap;
use std::path::PathBuf;

use serde_json::json;
use switchboard::blast::model::JobStatus;
use switchboard::domain::time::unix_now;
use switchboard::store::{OutboxEntry, Store};

use crate::blasts_support::{
    create, jid, outbox, outbox_to, phones, recipients, server, text_blast, wait_job, wait_status,
};

#[tokio::test]
async fn a_restart_mid_job_finishes_the_job_sending_each_recipient_exactly_once() {
    let mut server = server().await;
    server.paired_session("s").await;
    let list = phones(8);
    let id = create(&server, "s", text_blast(&list, json!({ "delay_ms": 150 }))).await;
    wait_job(&server, "s", &id, "to be under way", |j| {
        j["sent_count"].as_u64() >= Some(2)
    })
    .await;
    server.restart().await;
    server.wait_for_status("s", "logged_in").await;
    let done = wait_status(&server, "s", &id, "completed").await;
    assert_eq!(done["sent_count"], 8);
    let sent = outbox_to(&server, "s").await;
    let want: Vec<String> = list.iter().map(|p| jid(p)).collect();
    assert_eq!(sent, want, "each recipient once, in order");
    assert_eq!(recipients(&server, "s", &id, Some("sent")).await.len(), 8);
}

/// Puts a job in the state a crash leaves after `begin_blast_send` of its
/// first recipient: that recipient `sending` under a chosen message id, the
/// job running with it in flight. With `reached_network`, the sim outbox also
/// has the message (the crash came after the network accepted it, before the
/// "sent" write). Returns the chosen message id.
fn crash_mid_send(store: &Store, session: &str, job_id: &str, reached_network: bool) -> String {
    let job = store.get_blast(session, job_id).unwrap().expect("the job");
    store
        .modify_blast(session, job.seq, |j| {
            j.send_at = None;
            j.claim(unix_now());
            Ok::<_, ()>(())
        })
        .unwrap();
    let r = store
        .begin_blast_send(session, job.seq, 1, unix_now(), || {
            "3EB0CRASHED0000000001".into()
        })
        .unwrap()
        .expect("the first recipient begins");
    let message_id = r.message_id.clone().unwrap();
    if reached_network {
        let entry = OutboxEntry {
            to: r.recipient.clone(),
            kind: "text".into(),
            body: json!({ "text": "hello from the blast" }),
            message_id: message_id.clone(),
            timestamp: unix_now(),
        };
        store.append_outbox(session, &entry).unwrap();
    }
    let after = store.get_blast(session, job_id).unwrap().unwrap();
    assert_eq!(
        (after.status, after.in_flight),
        (JobStatus::Running, Some(1))
    );
    message_id
}

#[tokio::test]
async fn a_send_cut_off_between_sending_and_sent_is_resolved_without_sending_twice() {
    let mut server = server().await;
    server.paired_session("landed").await;
    server.paired_session("lost").await;
    let later = json!({ "delay_ms": 0, "send_at": "2999-01-01T00:00:00Z" });
    let list = phones(3);
    let landed = create(&server, "landed", text_blast(&list, later.clone())).await;
    let lost = create(&server, "lost", text_blast(&list, later)).await;
    let mut ids = HashMap::new();
    let (l1, l2) = (landed.clone(), lost.clone());
    server
        .restart_after(|dir: PathBuf| {
            let store = Store::open(&dir).expect("the store opens while the gateway is down");
            ids.insert("landed", crash_mid_send(&store, "landed", &l1, true));
            ids.insert("lost", crash_mid_send(&store, "lost", &l2, false));
            async {}
        })
        .await;
    let want: Vec<String> = list.iter().map(|p| jid(p)).collect();
    for (session, job) in [("landed", &landed), ("lost", &lost)] {
        let done = wait_status(&server, session, job, "completed").await;
        assert_eq!(done["sent_count"], 3, "{session}: {done}");
        assert_eq!(
            outbox_to(&server, session).await,
            want,
            "{session}: every recipient exactly once"
        );
        let first = &outbox(&server, session).await[0];
        assert_eq!(
            first["message_id"],
            ids[session].as_str(),
            "{session}: the id chosen before the crash"
        );
        let r = &recipients(&server, session, job, None).await[0];
        assert_eq!(r["status"], "sent");
        assert_eq!(r["message_id"], ids[session].as_str());
    }
    let landed_first = &recipients(&server, "landed", &landed, None).await[0];
    assert_eq!(
        landed_first["attempts"], 1,
        "marked sent from the network's answer"
    );
}
