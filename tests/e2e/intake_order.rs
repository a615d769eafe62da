//! Intake does not wait for each inbound message's record to be committed
//! before reading the next event; it publishes a session's envelopes once
//! their records are stored, in the order it received the events.

use std::collections::HashSet;

use serde_json::{Value, json};
use switchboard_tests::TestServer;

/// What the stream saw, as `msg <i>` or `pin <i>`.
fn label(e: &Value) -> String {
    match e["event"].as_str() {
        Some("message") => {
            let text = e["data"]["text"].as_str().unwrap_or_default();
            format!("msg {}", text.trim_start_matches("burst "))
        }
        _ => {
            let chat = e["data"]["chat_jid"].as_str().unwrap_or_default();
            format!("pin {}", chat.trim_end_matches("@s.whatsapp.net"))
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_messages_and_other_events_reaches_the_stream_in_arrival_order_and_stored() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let mut stream = server
        .open_stream("session=s&events=message,pin_update")
        .await;
    let mut sent = Vec::new();
    let mut ids = HashSet::new();
    for i in 0..120 {
        if i % 30 == 15 {
            // Needs no commit: it must still wait behind the messages before it.
            let data = json!({ "chat_jid": format!("{i}@s.whatsapp.net"), "pinned": true });
            server
                .post(
                    "/api/v1/sim/sessions/s/events",
                    json!({ "event": "pin_update", "data": data }),
                )
                .await
                .expect(200);
            sent.push(format!("pin {i}"));
        } else {
            let got = server
                .post(
                    "/api/v1/sim/sessions/s/inbound",
                    json!({ "from": "15550001111", "text": format!("burst {i}") }),
                )
                .await
                .expect(200);
            ids.insert(got["message_id"].as_str().unwrap().to_owned());
            sent.push(format!("msg {i}"));
        }
    }
    let seen = stream
        .until(|e| e["event"] == "message" && e["data"]["text"] == "burst 119")
        .await;
    let order: Vec<String> = seen.iter().map(label).collect();
    assert_eq!(order, sent);

    let stored: HashSet<String> = server
        .get("/api/v1/sessions/s/messages?limit=1000")
        .await
        .expect(200)["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["direction"] == "inbound")
        .map(|m| m["message_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(stored, ids, "every published message is stored, once");
}
