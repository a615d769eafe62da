//! Uploads: raw and multipart bodies streamed into the media store under
//! their own limit, sent by `media_id` (now and scheduled) to another sim
//! session that receives the same bytes, and the JSON body limit refusing a
//! giant body before reading it.

use std::time::Duration;

use serde_json::{Value, json};
use switchboard_tests::media::{media_bytes, sample_bytes, sha256_hex};
use switchboard_tests::{TOKEN, TestServer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::scheduled::{soon, wait_for_scheduled};

/// Uploads `bytes` raw to `session` with `query`; the answer.
async fn upload_raw(
    server: &TestServer,
    session: &str,
    query: &str,
    content_type: &str,
    bytes: Vec<u8>,
) -> (u16, Value) {
    let resp = server
        .http()
        .post(format!(
            "{}/api/v1/sessions/{session}/media{query}",
            server.base()
        ))
        .bearer_auth(TOKEN)
        .header("content-type", content_type)
        .body(bytes)
        .send()
        .await
        .expect("the upload is sent");
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

/// The media of the newest inbound message of `session`.
async fn newest_inbound_media(server: &TestServer, session: &str) -> Value {
    switchboard_tests::eventually("the media message to arrive", || async {
        let messages = server.inbound_messages(session).await;
        let media = messages.first()?.pointer("/body/media")?.clone();
        (media["state"] == "stored").then_some(media)
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_raw_upload_is_sent_by_media_id_and_the_recipient_reads_the_same_bytes() {
    let server = TestServer::start().await;
    let alice = server.paired_session("alice").await;
    server.paired_session("bob").await;
    let bytes = sample_bytes(1_500_000, 11);
    let (status, up) = upload_raw(
        &server,
        "bob",
        "?filename=photo.png",
        "image/png",
        bytes.clone(),
    )
    .await;
    assert_eq!(status, 201, "{up}");
    assert_eq!(up["state"], "stored");
    assert_eq!(up["file_length"], bytes.len() as u64);
    assert_eq!(up["sha256"], sha256_hex(&bytes));
    assert_eq!(up["mimetype"], "image/png");
    assert_eq!(up["filename"], "photo.png");
    assert!(up["id"].as_str().unwrap().starts_with("up-"), "{up}");
    assert_eq!(
        media_bytes(&server, up["url"].as_str().unwrap()).await,
        bytes,
        "the upload reads back"
    );

    let to = alice["phone_number"].as_str().unwrap();
    server
        .post(
            "/api/v1/sessions/bob/messages/image",
            json!({ "to": to, "media_id": up["id"], "caption": "from an upload" }),
        )
        .await
        .expect(200);
    let outbox = server
        .get("/api/v1/sim/sessions/bob/outbox")
        .await
        .expect(200);
    assert_eq!(
        outbox["messages"][0]["body"]["media_id"], up["id"],
        "{outbox}"
    );
    let media = newest_inbound_media(&server, "alice").await;
    assert_eq!(media["sha256"], sha256_hex(&bytes));
    assert_eq!(
        media_bytes(&server, media["url"].as_str().unwrap()).await,
        bytes
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_multipart_upload_takes_its_type_and_name_from_the_file_part_and_is_sent_as_a_document() {
    let server = TestServer::start().await;
    let alice = server.paired_session("alice").await;
    server.paired_session("bob").await;
    let bytes = sample_bytes(200_000, 12);
    let boundary = "sb-boundary-7";
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nignored\r\n\
         --{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"report.pdf\"\r\n\
         Content-Type: application/pdf\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(&bytes);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    let (status, up) = upload_raw(
        &server,
        "bob",
        "",
        &format!("multipart/form-data; boundary={boundary}"),
        body,
    )
    .await;
    assert_eq!(status, 201, "{up}");
    assert_eq!(up["mimetype"], "application/pdf");
    assert_eq!(up["filename"], "report.pdf");
    assert_eq!(up["file_length"], bytes.len() as u64);

    let to = alice["phone_number"].as_str().unwrap();
    server
        .post(
            "/api/v1/sessions/bob/messages/document",
            json!({ "to": to, "media_id": up["id"], "filename": "report.pdf", "mimetype": "application/pdf" }),
        )
        .await
        .expect(200);
    let media = newest_inbound_media(&server, "alice").await;
    assert_eq!(media["filename"], "report.pdf");
    assert_eq!(
        media_bytes(&server, media["url"].as_str().unwrap()).await,
        bytes
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scheduled_send_references_an_upload_by_media_id() {
    let server = TestServer::start().await;
    let alice = server.paired_session("alice").await;
    server.paired_session("bob").await;
    let bytes = sample_bytes(30_000, 13);
    let (_, up) = upload_raw(&server, "bob", "", "audio/ogg", bytes.clone()).await;
    let to = alice["phone_number"].as_str().unwrap();
    let scheduled = server
        .post(
            "/api/v1/sessions/bob/messages/audio",
            json!({ "to": to, "media_id": up["id"], "ptt": true, "send_at": soon() }),
        )
        .await
        .expect(202);
    let id = scheduled["scheduled_id"].as_str().unwrap();
    wait_for_scheduled(&server, "bob", id, "sent").await;
    let media = newest_inbound_media(&server, "alice").await;
    assert_eq!(media["ptt"], true);
    assert_eq!(
        media_bytes(&server, media["url"].as_str().unwrap()).await,
        bytes
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_naming_a_media_id_the_session_does_not_hold_is_refused() {
    let server = TestServer::start().await;
    server.paired_session("a").await;
    server.paired_session("b").await;
    let (_, up) = upload_raw(&server, "b", "", "image/png", vec![1, 2, 3]).await;
    for (session, id) in [("a", up["id"].as_str().unwrap()), ("b", "up-nothing")] {
        let m = server
            .post(
                &format!("/api/v1/sessions/{session}/messages/image"),
                json!({ "to": "15550000001", "media_id": id }),
            )
            .await
            .expect_error(400, "invalid_field");
        assert!(m.contains("media_id"), "{m}");
    }
    let m = server
        .post(
            "/api/v1/sessions/b/messages/image",
            json!({ "to": "15550000001", "media_id": up["id"], "data": "aGk=" }),
        )
        .await
        .expect_error(400, "invalid_field");
    assert!(m.contains("media_id"), "{m}");
    assert_eq!(
        server
            .get("/api/v1/sim/sessions/a/outbox")
            .await
            .expect(200)["count"],
        0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_over_the_upload_limit_is_413_naming_it_and_leaves_nothing_behind() {
    let server = TestServer::start_with(|c| c.media.max_upload_bytes = 64 * 1024).await;
    server.paired_session("s").await;
    // Its own client: the gateway answers before the body is read and then
    // closes the connection, which must not be one a later request reuses.
    let once = || {
        reqwest::Client::new()
            .post(format!("{}/api/v1/sessions/s/media", server.base()))
            .bearer_auth(TOKEN)
            .header("content-type", "image/png")
    };
    let resp = once().body(vec![7u8; 64 * 1024 + 1]).send().await.unwrap();
    let status = resp.status().as_u16();
    let body: Value = resp.json().await.unwrap_or(Value::Null);
    assert_eq!(status, 413, "{body}");
    assert_eq!(body["error"]["code"], "upload_too_large");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--media-max-upload-bytes"),
        "{body}"
    );

    // Without a Content-Length the limit is met while streaming.
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
        (0..20).map(|_| Ok(vec![1u8; 8 * 1024])).collect();
    let sent = once()
        .body(reqwest::Body::wrap_stream(futures_util::stream::iter(
            chunks,
        )))
        .send()
        .await;
    // The gateway answers 413 and closes the connection on the rest of the
    // body; a client still writing it may see the close before the answer.
    match sent {
        Ok(resp) => assert_eq!(resp.status().as_u16(), 413),
        Err(e) => assert!(
            e.is_request() || e.is_body() || e.is_connect(),
            "refused by closing the connection, not otherwise: {e:?}"
        ),
    }
    let dir = server.data_dir().join("media").join("media").join("s");
    let left: Vec<_> = std::fs::read_dir(&dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "nothing half-written is left: {left:?}");
    let metrics = server.get_text("/metrics").await;
    assert!(
        metrics.contains("switchboard_media_uploads_total{outcome=\"failed\"}"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_to_a_missing_session_or_with_a_bad_name_is_refused() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let (status, body) = upload_raw(&server, "nobody", "", "image/png", vec![1]).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("session_not_found")),
        "{body}"
    );
    let (status, body) = upload_raw(&server, "s", "?filename=a%2Fb", "image/png", vec![1]).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (400, Some("invalid_field")),
        "{body}"
    );
    let (status, body) = upload_raw(&server, "s", "", "image/png", Vec::new()).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (400, Some("empty_upload")),
        "{body}"
    );
    let (status, body) = upload_raw(&server, "s", "", "not a type", vec![1]).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (400, Some("invalid_field")),
        "{body}"
    );
    let (status, body) = upload_raw(
        &server,
        "s",
        "",
        "multipart/form-data; boundary=x",
        b"--x\r\n".to_vec(),
    )
    .await;
    assert_eq!(status, 400, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_json_body_over_the_limit_is_refused_with_413_before_the_gateway_reads_it() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let declared = 17 * 1024 * 1024;
    let addr = server.base().trim_start_matches("http://").to_owned();
    let mut socket = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST /api/v1/sessions/s/messages/image HTTP/1.1\r\nHost: {addr}\r\n\
         Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n\
         Content-Length: {declared}\r\n\r\n{{\"to\":\"15550000001\",\"data\":\""
    );
    // The head and the body's first bytes only: the answer must come
    // without the other 17 MiB (which are never sent).
    socket.write_all(head.as_bytes()).await.unwrap();
    let mut answer = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(10), socket.read(&mut answer))
        .await
        .expect("the gateway answers before the body is complete")
        .unwrap();
    let text = String::from_utf8_lossy(&answer[..n]);
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    assert!(text.contains("payload_too_large"), "{text}");
    assert!(
        text.to_ascii_lowercase().contains("connection: close"),
        "the unread rest of the body ends the connection: {text}"
    );
    assert!(
        text.contains("--max-body-bytes") && text.contains("/media"),
        "names the limit and the upload route: {text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blast_sends_an_upload_by_media_id_and_a_stored_send_naming_none_is_refused_up_front() {
    let server = TestServer::start().await;
    let alice = server.paired_session("alice").await;
    server.paired_session("bob").await;
    let bytes = sample_bytes(40_000, 14);
    let (_, up) = upload_raw(&server, "bob", "", "image/jpeg", bytes.clone()).await;
    let to = alice["phone_number"].as_str().unwrap();
    let created = server
        .post(
            "/api/v1/sessions/bob/blast",
            json!({
                "endpoint": "image",
                "body": { "to": to, "media_id": up["id"], "caption": "Spring sale" },
                "recipients": [to],
                "delay_ms": 0,
            }),
        )
        .await
        .expect(201);
    crate::blasts_support::wait_status(
        &server,
        "bob",
        created["job_id"].as_str().unwrap(),
        "completed",
    )
    .await;
    let media = newest_inbound_media(&server, "alice").await;
    assert_eq!(
        media_bytes(&server, media["url"].as_str().unwrap()).await,
        bytes
    );

    let m = server
        .post(
            "/api/v1/sessions/bob/blast",
            json!({
                "endpoint": "image",
                "body": { "to": to, "media_id": "up-none" },
                "recipients": [to],
            }),
        )
        .await
        .expect_error(400, "invalid_field");
    assert!(m.contains("body.media_id"), "{m}");
    let m = server
        .post(
            "/api/v1/sessions/bob/messages/image",
            json!({ "to": to, "media_id": "up-none", "send_at": soon() }),
        )
        .await
        .expect_error(400, "invalid_field");
    assert!(m.contains("media_id"), "{m}");
    assert_eq!(
        server
            .get("/api/v1/sessions/bob/scheduled")
            .await
            .expect(200)["count"],
        0,
        "nothing was scheduled"
    );
}
