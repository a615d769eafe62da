//! Resuming the event stream: every event carries its sequence number as the
//! SSE `id`; a client that reconnects with `Last-Event-ID` (or the
//! `last_event_id` query parameter) gets exactly what it missed, in order,
//! then live events; an id the log no longer holds gets `reset`.

use std::time::Duration;

use serde_json::{Value, json};
use switchboard_tests::sse::EventStream;
use switchboard_tests::{TestServer, eventually};

async fn inject(server: &TestServer, session: &str, text: &str) -> String {
    let got = server
        .post(
            &format!("/api/v1/sim/sessions/{session}/inbound"),
            json!({ "from": "15550001111", "text": text }),
        )
        .await
        .expect(200);
    got["message_id"].as_str().unwrap().to_owned()
}

/// The next `message` event: its SSE id and message id.
async fn next_message(stream: &mut EventStream) -> (String, String) {
    loop {
        let e = stream.next().await.expect("an event");
        if e.event == "message" {
            let id = e.id.clone().expect("every envelope has an id");
            return (
                id,
                e.json()["data"]["message_id"].as_str().unwrap().to_owned(),
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_resumed_with_last_event_id_gets_exactly_the_missed_events_then_live_ones() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let mut first = server.open_stream("events=message").await;
    inject(&server, "s", "seen").await;
    let (last_seen, _) = next_message(&mut first).await;
    drop(first);

    let mut missed = Vec::new();
    for n in 0..5 {
        missed.push(inject(&server, "s", &format!("missed {n}")).await);
    }
    let mut resumed = server
        .open_stream_after("events=message", Some(&last_seen))
        .await;
    let mut ids = Vec::new();
    for want in &missed {
        let (id, got) = next_message(&mut resumed).await;
        assert_eq!(&got, want, "the missed events, in order");
        ids.push(id.parse::<u64>().unwrap());
    }
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "ids grow: {ids:?}");
    assert!(ids[0] > last_seen.parse::<u64>().unwrap());

    let live = inject(&server, "s", "live").await;
    let (live_id, got) = next_message(&mut resumed).await;
    assert_eq!(
        got, live,
        "then live ones, with nothing repeated at the seam"
    );
    assert!(live_id.parse::<u64>().unwrap() > ids[4]);

    // A browser that cannot set headers resumes with the query parameter,
    // and the session filter applies to the replay too.
    server.paired_session("other").await;
    inject(&server, "other", "not for this client").await;
    let mut by_query = server
        .open_stream(&format!(
            "events=message&session=s&last_event_id={}",
            ids[3]
        ))
        .await;
    assert_eq!(next_message(&mut by_query).await.1, missed[4]);
    assert_eq!(next_message(&mut by_query).await.1, live);
    let after = inject(&server, "s", "after").await;
    assert_eq!(next_message(&mut by_query).await.1, after);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_id_the_log_no_longer_holds_gets_reset_then_live_events() {
    let server = TestServer::start_with(|c| {
        c.event_log.max_age = Duration::ZERO;
        c.event_log.sweep_every = Duration::from_millis(50);
    })
    .await;
    server.paired_session("s").await;
    let mut first = server.open_stream("events=message").await;
    inject(&server, "s", "seen").await;
    let (last_seen, _) = next_message(&mut first).await;
    drop(first);
    inject(&server, "s", "pruned before the client is back").await;
    // Retention of zero seconds: the sweep prunes everything older than
    // the current second.
    let reset = eventually("the log to be pruned and the resume reset", || async {
        let mut resumed = server
            .open_stream_after("events=message", Some(&last_seen))
            .await;
        // A bound on one attempt, not an assertion: a resume that replays
        // instead of resetting is tried again until the sweep has run.
        let e = tokio::time::timeout(Duration::from_secs(2), resumed.next()).await;
        match e {
            Ok(Some(e)) if e.event == "reset" => Some((e, resumed)),
            _ => None,
        }
    })
    .await;
    let (event, mut resumed) = reset;
    let data: Value = event.json();
    assert!(
        data["reason"]
            .as_str()
            .unwrap()
            .contains("no longer retained"),
        "{data}"
    );
    assert_eq!(
        event.id.as_deref(),
        Some(data["resumed_from"].to_string().as_str())
    );
    let live = inject(&server, "s", "live").await;
    assert_eq!(next_message(&mut resumed).await.1, live, "then live events");

    // An id this gateway never gave is reset too; a malformed one is refused.
    let mut unknown = server
        .open_stream_after("events=message", Some("999999999"))
        .await;
    let e = unknown.next().await.expect("an event");
    assert_eq!(e.event, "reset");
    assert!(e.json()["reason"].as_str().unwrap().contains("unknown"));
    let refused = server.stream_response("last_event_id=yesterday").await;
    assert_eq!(refused.status().as_u16(), 400);
    let body: Value = refused.json().await.unwrap();
    assert!(body.to_string().contains("Last-Event-ID"), "{body}");
}
