//! Messages to a group reach the other member sessions as group messages;
//! only members may send; group state survives a restart; group operations
//! need a logged-in, unpaused session.

use serde_json::json;
use switchboard_tests::{TestServer, eventually};

use crate::group_support::{create, info, jid, path, put};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_to_a_group_reaches_every_other_member_session_as_a_group_message() {
    let server = TestServer::start().await;
    let alice = server.paired_session("alice").await;
    let bob = server.paired_session("bob").await;
    let carol = server.paired_session("carol").await;
    server.paired_session("dave").await;
    let group = create(&server, "alice", "Team", &[&jid(&bob), &jid(&carol)]).await;
    server
        .post_empty("/api/v1/sessions/carol/disconnect")
        .await
        .expect(200);

    let sent = server
        .post(
            "/api/v1/sessions/alice/messages/text",
            json!({ "to": group, "text": "hello team" }),
        )
        .await
        .expect(200);
    assert_eq!(sent["to"], group.as_str());
    let message_id = sent["message_id"].as_str().unwrap().to_owned();

    let outbox = server
        .get("/api/v1/sim/sessions/alice/outbox")
        .await
        .expect(200);
    assert_eq!(outbox["count"], 1, "stored once for the whole group");
    assert_eq!(outbox["messages"][0]["to"], group.as_str());

    let got = eventually("the group message at bob", || async {
        server.inbound_messages("bob").await.into_iter().next()
    })
    .await;
    assert_eq!(got["message_id"], message_id.as_str());
    assert_eq!(got["chat"], group.as_str());
    assert_eq!(got["sender"], jid(&alice).as_str());
    let data = &got["body"];
    assert_eq!(data["is_group"], true);
    assert_eq!(data["chat"], group.as_str());
    assert_eq!(data["from"], jid(&alice).as_str());
    assert_eq!(data["participant"], jid(&alice).as_str());
    assert_eq!(data["from_phone"], alice["phone_number"]);
    assert!(data["chat_phone"].is_null());
    assert_eq!(data["text"], "hello team");

    // Carol was offline: the message waits and arrives on reconnect.
    let mut stream = server.open_stream("session=carol&events=message").await;
    server
        .post_empty("/api/v1/sessions/carol/connect")
        .await
        .expect(200);
    let env = stream.find_event("carol", "message").await;
    assert_eq!(env["data"]["message_id"], message_id.as_str());
    assert_eq!(env["data"]["is_group"], true);
    assert_eq!(env["offline"], true);

    assert!(
        server.inbound_messages("alice").await.is_empty(),
        "the sender gets no copy"
    );
    assert!(
        server.inbound_messages("dave").await.is_empty(),
        "a non-member gets nothing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_members_can_send_to_a_group() {
    let server = TestServer::start().await;
    server.paired_session("alice").await;
    let bob = server.paired_session("bob").await;
    server.paired_session("carol").await;
    let group = create(&server, "alice", "Team", &[&jid(&bob)]).await;
    let msg = server
        .post(
            "/api/v1/sessions/carol/messages/text",
            json!({ "to": group, "text": "let me in" }),
        )
        .await
        .expect_error(422, "network_rejected");
    assert!(msg.contains("not a participant"), "{msg}");
    server
        .post(
            "/api/v1/sessions/alice/messages/text",
            json!({ "to": "120363999999999999@g.us", "text": "anyone?" }),
        )
        .await
        .expect_error(404, "not_found_on_network");
    server
        .post_empty(&path("bob", &group, "/leave"))
        .await
        .expect(200);
    server
        .post(
            "/api/v1/sessions/bob/messages/text",
            json!({ "to": group, "text": "after leaving" }),
        )
        .await
        .expect_error(422, "network_rejected");
    let outbox = server
        .get("/api/v1/sim/sessions/carol/outbox")
        .await
        .expect(200);
    assert_eq!(outbox["count"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn groups_survive_a_restart_of_the_gateway() {
    let mut server = TestServer::start().await;
    server.paired_session("alice").await;
    let bob = server.paired_session("bob").await;
    let group = create(&server, "alice", "Team", &[&jid(&bob)]).await;
    put(
        &server,
        &path("alice", &group, "/description"),
        json!({ "description": "Rules" }),
    )
    .await
    .expect(200);
    server
        .post(
            &path("alice", &group, "/admins"),
            json!({ "participants": [jid(&bob)] }),
        )
        .await
        .expect(200);
    let link = server
        .get(&path("alice", &group, "/invite-link"))
        .await
        .expect(200);
    let before = info(&server, "bob", &group).await;

    server.restart().await;
    server.wait_for_status("alice", "logged_in").await;
    server.wait_for_status("bob", "logged_in").await;

    assert_eq!(info(&server, "bob", &group).await, before);
    assert_eq!(before["topic"], "Rules");
    let list = server
        .get("/api/v1/sessions/alice/groups")
        .await
        .expect(200);
    assert_eq!(list["total"], 1);
    assert_eq!(
        server
            .get(&path("alice", &group, "/invite-link"))
            .await
            .expect(200),
        link
    );
    // A second group after the restart gets a fresh id.
    let other = create(&server, "alice", "Second", &[]).await;
    assert_ne!(other, group);
    server
        .post(
            "/api/v1/sessions/bob/messages/text",
            json!({ "to": group, "text": "still here" }),
        )
        .await
        .expect(200);
    let got = eventually("the group message at alice", || async {
        server.inbound_messages("alice").await.into_iter().next()
    })
    .await;
    assert_eq!(got["chat"], group.as_str());
    assert_eq!(got["sender"], jid(&bob).as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn group_operations_need_a_logged_in_unpaused_session() {
    let server = TestServer::start().await;
    server.paired_session("alice").await;
    let group = create(&server, "alice", "Team", &[]).await;
    server
        .post_empty("/api/v1/sessions/alice/disconnect")
        .await
        .expect(200);
    server.wait_for_status("alice", "disconnected").await;
    server
        .get("/api/v1/sessions/alice/groups")
        .await
        .expect_error(409, "invalid_session_state");
    server
        .get(&path("alice", &group, "/info"))
        .await
        .expect_error(409, "invalid_session_state");
    server
        .post_empty("/api/v1/sessions/alice/pause")
        .await
        .expect(200);
    server
        .get(&path("alice", &group, ""))
        .await
        .expect_error(409, "session_paused");
    server
        .post_empty("/api/v1/sessions/alice/resume")
        .await
        .expect(200);
    server
        .post_empty("/api/v1/sessions/alice/connect")
        .await
        .expect(200);
    server.wait_for_status("alice", "logged_in").await;
    server.get(&path("alice", &group, "")).await.expect(200);
    server
        .get("/api/v1/sessions/ghost/groups")
        .await
        .expect_error(404, "session_not_found");
}
