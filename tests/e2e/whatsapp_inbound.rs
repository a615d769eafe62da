//! The `whatsapp` backend's inbound path through its durability hook, the
//! object whatsapp-rust awaits before it acknowledges a batch to the server
//! (it withholds the acknowledgements when the hook fails, and the server
//! delivers the batch again). No WhatsApp server is reachable here, so the
//! test hands the hook the crate's own message values, as the crate would
//! after decrypting them, and reads the results over HTTP and the event
//! stream of the real gateway.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use switchboard_tests::TestServer;
use whatsapp_rust::types::events::InboundMessage as WaInbound;
use whatsapp_rust::types::message::{MessageInfo, MessageSource};
use whatsapp_rust::wacore::poll;
use whatsapp_rust::waproto::buffa::MessageField;
use whatsapp_rust::waproto::whatsapp as wa;

const CUSTOMER: &str = "4915112345678@s.whatsapp.net";

/// A port nothing listens on (bound, then released).
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("its address").port()
}

async fn server() -> TestServer {
    let port = closed_port();
    let server = TestServer::start_with(move |c| {
        c.whatsapp.ws_url = Some(format!("ws://127.0.0.1:{port}/ws/chat"));
        c.whatsapp.version = Some((2, 3000, 1));
        c.reconnect.delays = vec![Duration::from_millis(50)];
    })
    .await;
    server
        .post(
            "/api/v1/sessions",
            json!({ "id": "wa", "network": "whatsapp" }),
        )
        .await
        .expect(201);
    server
}

fn inbound(id: &str, message: wa::Message) -> WaInbound {
    let info = MessageInfo {
        source: MessageSource {
            chat: CUSTOMER.parse().unwrap(),
            sender: "4915112345678:4@s.whatsapp.net".parse().unwrap(),
            ..Default::default()
        },
        id: id.into(),
        push_name: "Greta".into(),
        timestamp: whatsapp_rust::chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap(),
        ..Default::default()
    };
    WaInbound::builder()
        .message(Arc::new(message))
        .info(Arc::new(info))
        .build()
}

fn text(t: &str) -> wa::Message {
    wa::Message {
        conversation: Some(t.into()),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_handed_to_the_hook_is_stored_before_the_hook_returns() {
    let server = server().await;
    let hook = server
        .whatsapp()
        .inbound_hook("wa")
        .expect("the session's hook");
    assert!(server.inbound_messages("wa").await.is_empty());

    let batch = [
        inbound("3EB0A1", text("first")),
        inbound("3EB0A2", text("second")),
    ];
    hook.commit(None, &batch).await.expect("stored");
    // No waiting: what the hook answered for is readable now.
    let stored = server.inbound_messages("wa").await;
    let ids: Vec<_> = stored.iter().map(|m| m["message_id"].clone()).collect();
    assert_eq!(ids, [json!("3EB0A2"), json!("3EB0A1")], "newest first");
    assert_eq!(stored[1]["body"]["text"], "first");

    // The server delivers an unacknowledged batch again: the hook answers
    // for it again, and it is not stored twice.
    hook.commit(None, &batch).await.expect("stored");
    assert_eq!(server.inbound_messages("wa").await.len(), 2);

    // Traffic between the account's own devices is acknowledged without a
    // message.
    let key_share = wa::Message {
        protocol_message: MessageField::some(wa::message::ProtocolMessage {
            r#type: Some(wa::message::protocol_message::Type::APP_STATE_SYNC_KEY_SHARE),
            ..Default::default()
        }),
        ..Default::default()
    };
    hook.commit(None, &[inbound("3EB0A3", key_share)])
        .await
        .expect("nothing to store");
    assert_eq!(server.inbound_messages("wa").await.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_that_cannot_store_fails_so_the_batch_stays_unacknowledged() {
    let server = server().await;
    let hook = server
        .whatsapp()
        .inbound_hook("wa")
        .expect("the session's hook");
    server.stop().await;
    let failed = hook
        .commit(None, &[inbound("3EB0B1", text("during shutdown"))])
        .await
        .expect_err("nothing can store it");
    assert!(failed.contains("session"), "{failed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revokes_edits_and_poll_votes_arrive_as_their_own_events() {
    let server = server().await;
    let hook = server
        .whatsapp()
        .inbound_hook("wa")
        .expect("the session's hook");
    let mut stream = server.open_stream("session=wa").await;

    // The customer's poll, with the secret votes are sealed with.
    let secret = [9u8; 32];
    let poll_message = wa::Message {
        poll_creation_message_v3: MessageField::some(wa::message::PollCreationMessage {
            name: Some("Delivery day?".into()),
            options: ["Monday", "Tuesday"]
                .into_iter()
                .map(|o| wa::message::poll_creation_message::Option {
                    option_name: Some(o.into()),
                    ..Default::default()
                })
                .collect(),
            selectable_options_count: Some(1),
            ..Default::default()
        }),
        message_context_info: MessageField::some(wa::MessageContextInfo {
            message_secret: Some(secret.to_vec()),
            ..Default::default()
        }),
        ..Default::default()
    };
    let (enc_payload, iv) = poll::encrypt_poll_vote_with_secret(
        &[poll::compute_option_hash("Tuesday").to_vec()],
        &secret,
        "POLL1",
        CUSTOMER,
        CUSTOMER,
    )
    .unwrap();
    let key = |id: &str| {
        MessageField::some(wa::MessageKey {
            remote_jid: Some(CUSTOMER.into()),
            from_me: Some(false),
            id: Some(id.into()),
            participant: None,
        })
    };
    let vote = wa::Message {
        poll_update_message: MessageField::some(wa::message::PollUpdateMessage {
            poll_creation_message_key: key("POLL1"),
            vote: MessageField::some(wa::message::PollEncValue {
                enc_payload: Some(enc_payload),
                enc_iv: Some(iv.to_vec()),
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    let revoke = wa::Message {
        protocol_message: MessageField::some(wa::message::ProtocolMessage {
            r#type: Some(wa::message::protocol_message::Type::REVOKE),
            key: key("3EB0C1"),
            ..Default::default()
        }),
        ..Default::default()
    };
    let edit = wa::Message {
        protocol_message: MessageField::some(wa::message::ProtocolMessage {
            r#type: Some(wa::message::protocol_message::Type::MESSAGE_EDIT),
            key: key("3EB0C2"),
            edited_message: MessageField::some(text("see you at 5")),
            ..Default::default()
        }),
        ..Default::default()
    };
    hook.commit(None, &[inbound("POLL1", poll_message)])
        .await
        .unwrap();
    hook.commit(
        None,
        &[
            inbound("VOTE1", vote),
            inbound("REV1", revoke),
            inbound("EDIT1", edit),
        ],
    )
    .await
    .unwrap();

    let events = stream.until(|e| e["data"]["message_id"] == "EDIT1").await;
    let seen: Vec<_> = events
        .iter()
        .map(|e| (e["event"].clone(), e["data"]["message_id"].clone()))
        .collect();
    assert_eq!(
        seen,
        [
            (json!("message"), json!("POLL1")),
            (json!("poll_vote"), json!("VOTE1")),
            (json!("message"), json!("REV1")),
            (json!("message"), json!("EDIT1")),
        ]
    );
    assert_eq!(events[0]["data"]["message_type"], "poll");
    assert_eq!(
        events[1]["data"],
        json!({ "message_id": "VOTE1", "chat": CUSTOMER, "voter": CUSTOMER,
            "poll_message_id": "POLL1", "timestamp": 1_700_000_000,
            "selected_options": ["Tuesday"] })
    );
    assert_eq!(events[2]["data"]["message_type"], "revoke");
    assert_eq!(events[2]["data"]["quoted_message_id"], "3EB0C1");
    assert_eq!(events[3]["data"]["message_type"], "edit");
    assert_eq!(events[3]["data"]["text"], "see you at 5");
    assert_eq!(events[3]["data"]["quoted_message_id"], "3EB0C2");
}
