//! What one session may hold in media: its upload quota (uploads past it
//! refused before their bytes are kept, naming the quota and what the
//! session holds) and its share of retained media (the sweep trims the
//! session that holds the most, so one session's flood of media never
//! evicts another's).

use std::time::Duration;

use serde_json::Value;
use switchboard_tests::media::{media_bytes, sample_bytes};
use switchboard_tests::{TOKEN, TestServer, eventually};

/// Uploads `bytes` raw to `session` on a client of its own (a refused
/// upload's connection is closed); the status and the body.
async fn upload(server: &TestServer, session: &str, bytes: Vec<u8>) -> (u16, Value) {
    let resp = reqwest::Client::new()
        .post(format!("{}/api/v1/sessions/{session}/media", server.base()))
        .bearer_auth(TOKEN)
        .header("content-type", "image/png")
        .body(bytes)
        .send()
        .await
        .expect("the upload is sent");
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

/// The objects the local media store holds for `session`.
fn stored_objects(server: &TestServer, session: &str) -> Vec<std::path::PathBuf> {
    let dir = server.data_dir().join("media").join("media").join(session);
    std::fs::read_dir(&dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_past_the_sessions_quota_is_413_naming_the_quota_and_the_usage_and_nothing_is_kept()
 {
    let server =
        TestServer::start_with(|c| c.media.max_upload_bytes_per_session = Some(25_000)).await;
    server.paired_session("s").await;
    server.paired_session("other").await;
    let mut ids = Vec::new();
    for seed in 0..2u8 {
        let (status, body) = upload(&server, "s", sample_bytes(10_000, seed)).await;
        assert_eq!(status, 201, "{body}");
        ids.push(body["id"].as_str().unwrap().to_owned());
    }

    // Its Content-Length says it will not fit: refused unread.
    let (status, body) = upload(&server, "s", sample_bytes(10_000, 2)).await;
    assert_eq!(status, 413, "{body}");
    assert_eq!(body["error"]["code"], "quota_exceeded", "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    for part in ["25000", "20000", "--media-max-upload-bytes-per-session"] {
        assert!(message.contains(part), "names {part}: {message}");
    }

    // Without a Content-Length the quota is met while it streams in.
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
        (0..10).map(|_| Ok(vec![3u8; 1_000])).collect();
    let sent = reqwest::Client::new()
        .post(format!("{}/api/v1/sessions/s/media", server.base()))
        .bearer_auth(TOKEN)
        .header("content-type", "image/png")
        .body(reqwest::Body::wrap_stream(futures_util::stream::iter(
            chunks,
        )))
        .send()
        .await;
    match sent {
        Ok(resp) => {
            let status = resp.status().as_u16();
            let body: Value = resp.json().await.unwrap_or(Value::Null);
            assert_eq!(status, 413, "{body}");
            assert_eq!(body["error"]["code"], "quota_exceeded", "{body}");
        }
        // The gateway answers and closes the connection on the rest of the
        // body; a client still writing it may see the close first.
        Err(e) => assert!(
            e.is_request() || e.is_body() || e.is_connect(),
            "refused by closing the connection, not otherwise: {e:?}"
        ),
    }
    assert_eq!(
        stored_objects(&server, "s").len(),
        2,
        "nothing of a refused upload is kept"
    );
    let metrics = server.get_text("/metrics").await;
    assert!(
        metrics.contains("switchboard_media_stored_bytes 20000"),
        "{metrics}"
    );

    // The quota is the session's: another session uploads as before.
    let (status, body) = upload(&server, "other", sample_bytes(10_000, 4)).await;
    assert_eq!(status, 201, "{body}");

    // Freeing an upload makes room again.
    server
        .delete(&format!("/api/v1/sessions/s/media/{}", ids[0]))
        .await
        .expect(200);
    let (status, body) = upload(&server, "s", sample_bytes(10_000, 5)).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(
        media_bytes(&server, body["url"].as_str().unwrap()).await,
        sample_bytes(10_000, 5)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uploads_racing_for_the_last_of_a_quota_never_take_the_session_past_it() {
    let server =
        TestServer::start_with(|c| c.media.max_upload_bytes_per_session = Some(35_000)).await;
    server.paired_session("s").await;
    let racing = (0..8u8).map(|seed| {
        let server = &server;
        async move { upload(server, "s", sample_bytes(10_000, seed)).await }
    });
    let answers = futures_util::future::join_all(racing).await;
    let stored = answers.iter().filter(|(status, _)| *status == 201).count();
    for (status, body) in &answers {
        assert!(
            *status == 201 || (*status == 413 && body["error"]["code"] == "quota_exceeded"),
            "{status} {body}"
        );
    }
    assert_eq!(
        stored, 3,
        "three 10,000-byte uploads fit 35,000 bytes, and their lengths are reserved before \
         any is read: {answers:?}"
    );
    assert_eq!(stored_objects(&server, "s").len(), stored);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_flooding_media_loses_its_own_oldest_to_the_sweep_and_anothers_media_survives() {
    let server = TestServer::start_with(|c| {
        c.media.retention_bytes = Some(25_000);
        c.media.retention_bytes_per_session = Some(20_000);
        c.media.sweep_interval = Duration::from_millis(50);
    })
    .await;
    // "early" sorts and uploads first, so under an oldest-first rule its
    // media would be the first to go.
    server.paired_session("early").await;
    server.paired_session("flood").await;
    let (status, kept) = upload(&server, "early", sample_bytes(10_000, 9)).await;
    assert_eq!(status, 201, "{kept}");
    for seed in 0..3u8 {
        let (status, body) = upload(&server, "flood", sample_bytes(10_000, seed)).await;
        assert_eq!(status, 201, "{body}");
    }
    // The flood holds 30,000 bytes: over its share (20,000) and, with the
    // early session's, over the total (25,000).
    eventually("the sweep to bring the store within its bounds", || async {
        let metrics = server.get_text("/metrics").await;
        metrics
            .contains("switchboard_media_stored_bytes 20000")
            .then_some(())
    })
    .await;
    assert_eq!(
        media_bytes(&server, kept["url"].as_str().unwrap()).await,
        sample_bytes(10_000, 9),
        "the early session's media survived the flood"
    );
    assert_eq!(stored_objects(&server, "early").len(), 1);
    assert_eq!(
        stored_objects(&server, "flood").len(),
        1,
        "the flood gave up its own oldest"
    );
}
