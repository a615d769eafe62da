//! Scheduled sends across restarts: sent late, never twice.
//!
//! Real crashes (SIGKILL of the binary while sends are scheduled, mid-way
//! through due sends, and inside the network call) are in
//! `crash_scheduled.rs`. What stays here:
//!
//! - *graceful* restarts, one long enough for sends to come due while the
//!   gateway is down, which a kill does not exercise;
//! - unit-level tests of the recovery code, on a crash state built by hand
//!   while the gateway is stopped: a send left `sending` whose message the
//!   network already has, and one it never got. A kill reaches the first
//!   state only if it falls between the sim's outbox commit and the
//!   scheduler's "sent" write, a window of a group commit that no observable
//!   condition lets a test aim at; building the state makes both branches of
//!   the recovery deterministic (and checks `attempts` on each).

use std::time::Duration;

use switchboard::domain::time::{unix_now, unix_now_ms};
use switchboard::scheduler::model::ScheduledStatus;
use switchboard::store::{OutboxEntry, Store};
use switchboard_tests::TestServer;

use super::scheduled::{in_secs, outbox, schedule_text, wait_for_scheduled};

#[tokio::test]
async fn sends_that_came_due_while_the_gateway_was_down_go_out_once_after_it_restarts() {
    let mut server = TestServer::start().await;
    server.paired_session("s").await;
    let soon = in_secs(2);
    let one = schedule_text(&server, "s", "one", &soon).await;
    let two = schedule_text(&server, "s", "two", &soon).await;
    let later = schedule_text(&server, "s", "much later", &in_secs(3600)).await;
    server
        // Configured time passing: the sends fall due while the gateway is down.
        .restart_after(|_| tokio::time::sleep(Duration::from_secs(3)))
        .await;
    wait_for_scheduled(&server, "s", &one, "sent").await;
    wait_for_scheduled(&server, "s", &two, "sent").await;
    let sent = outbox(&server, "s").await;
    let texts: Vec<&str> = sent
        .iter()
        .map(|m| m["body"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["one", "two"], "each exactly once, in due order");
    wait_for_scheduled(&server, "s", &later, "scheduled").await;

    server.restart().await;
    server.wait_for_status("s", "logged_in").await;
    let item = wait_for_scheduled(&server, "s", &one, "sent").await;
    assert_eq!(item["attempts"], 1);
    assert_eq!(outbox(&server, "s").await.len(), 2, "nothing sent again");
}

/// Stops the server and marks a far-off scheduled send as interrupted while
/// sending (due a second ago); with `reached_network` the network also has it.
async fn interrupt(server: &mut TestServer, id: &str, reached_network: bool) -> String {
    let id = id.to_owned();
    let mut message_id = String::new();
    let chosen = &mut message_id;
    server
        .restart_after(|dir| async move {
            let store = Store::open(&dir).expect("store opens while the gateway is down");
            let due = unix_now_ms() as u64 - 1000;
            let (send, _) = store
                .update_scheduled("s", &id, |s| {
                    s.status = ScheduledStatus::Sending;
                    s.attempts = 1;
                    s.due_ms = Some(due);
                    true
                })
                .unwrap()
                .unwrap();
            if reached_network {
                let entry = OutboxEntry {
                    to: send.to.clone(),
                    kind: send.kind.clone(),
                    body: send.body.clone(),
                    message_id: send.message_id.clone(),
                    timestamp: unix_now(),
                };
                store.append_outbox("s", &entry).unwrap();
            }
            *chosen = send.message_id;
        })
        .await;
    message_id
}

#[tokio::test]
async fn a_send_interrupted_after_the_network_took_it_is_marked_sent_without_a_second_copy() {
    let mut server = TestServer::start().await;
    server.paired_session("s").await;
    let id = schedule_text(&server, "s", "interrupted", &in_secs(3600)).await;
    let message_id = interrupt(&mut server, &id, true).await;
    let item = wait_for_scheduled(&server, "s", &id, "sent").await;
    assert_eq!(item["message_id"], message_id.as_str());
    assert_eq!(item["attempts"], 1, "checked, not sent again");
    let sent = outbox(&server, "s").await;
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["message_id"], message_id.as_str());
}

#[tokio::test]
async fn a_send_interrupted_before_the_network_took_it_is_sent_once_under_its_chosen_id() {
    let mut server = TestServer::start().await;
    server.paired_session("s").await;
    let id = schedule_text(&server, "s", "interrupted early", &in_secs(3600)).await;
    let message_id = interrupt(&mut server, &id, false).await;
    let item = wait_for_scheduled(&server, "s", &id, "sent").await;
    assert_eq!(item["message_id"], message_id.as_str());
    assert_eq!(item["attempts"], 2);
    let sent = outbox(&server, "s").await;
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["message_id"], message_id.as_str());
    assert_eq!(sent[0]["body"]["text"], "interrupted early");
}
