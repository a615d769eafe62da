//! Inbound media on the sim: downloaded into the local media store before
//! the webhook fires (or on first read in lazy mode), served byte-identical
//! through the media route with ranges and validators, a failed download
//! and its retry, the retention sweep, and deletion with the session.

use std::time::Duration;

use serde_json::{Value, json};
use switchboard_tests::media::{get_media, inject_media, media_bytes, sample_bytes, sha256_hex};
use switchboard_tests::receiver::message_hook;
use switchboard_tests::{TestServer, eventually};

/// The `message` event the receiver got for `message_id`.
async fn event_data(rx: &switchboard_tests::receiver::TestReceiver, message_id: &str) -> Value {
    let got = rx
        .wait_for_match(message_id, |r| r.json()["data"]["message_id"] == message_id)
        .await;
    got.json()["data"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_a_voice_note_and_a_document_are_stored_before_their_webhooks_and_read_back_byte_identical()
 {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let rx = message_hook(&server, "s").await;
    let image = sample_bytes(70_000, 1);
    let voice = sample_bytes(12_345, 2);
    let document = sample_bytes(300_001, 3);
    let cases = [
        (
            "image",
            &image,
            json!({ "mimetype": "image/png", "width": 640, "height": 480 }),
        ),
        (
            "audio",
            &voice,
            json!({ "mimetype": "audio/ogg; codecs=opus", "ptt": true, "seconds": 7 }),
        ),
        (
            "document",
            &document,
            json!({ "mimetype": "application/pdf", "filename": "offer.pdf" }),
        ),
    ];
    for (kind, bytes, extra) in cases {
        let id = inject_media(&server, "s", kind, bytes, extra.clone()).await;
        let data = event_data(&rx, &id).await;
        let media = &data["media"];
        assert_eq!(data["message_type"], kind);
        assert_eq!(
            media["state"], "stored",
            "stored before the webhook: {media}"
        );
        assert_eq!(media["file_length"], bytes.len() as u64);
        assert_eq!(media["sha256"], sha256_hex(bytes));
        assert_eq!(media["mimetype"], extra["mimetype"]);
        for field in ["width", "height", "ptt", "seconds", "filename"] {
            assert_eq!(
                media.get(field),
                extra.get(field),
                "{field} of {kind}: {media}"
            );
        }
        let url = media["url"].as_str().unwrap();
        assert_eq!(
            url,
            format!("/api/v1/sessions/s/media/{}", media["id"].as_str().unwrap())
        );

        let resp = get_media(&server, url, &[]).await;
        assert_eq!(resp.status().as_u16(), 200);
        let h = resp.headers().clone();
        assert_eq!(h["content-type"], extra["mimetype"].as_str().unwrap());
        assert_eq!(h["content-length"], bytes.len().to_string().as_str());
        assert_eq!(h["etag"], format!("\"{}\"", sha256_hex(bytes)).as_str());
        assert_eq!(h["accept-ranges"], "bytes");
        assert_eq!(
            resp.bytes().await.unwrap().as_ref(),
            bytes.as_slice(),
            "{kind}"
        );
    }
    let doc = server.inbound_messages("s").await;
    let stored_media = &doc[0]["body"]["media"];
    assert_eq!(
        stored_media["filename"], "offer.pdf",
        "the stored message carries the object: {stored_media}"
    );
    let metrics = server.get_text("/metrics").await;
    assert!(
        metrics.contains("switchboard_media_downloads_total{outcome=\"stored\"} 3"),
        "{metrics}"
    );
    let total = image.len() + voice.len() + document.len();
    assert!(
        metrics.contains(&format!("switchboard_media_stored_bytes {total}")),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_range_request_answers_the_part_and_one_outside_the_media_is_416() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let rx = message_hook(&server, "s").await;
    let bytes = sample_bytes(10_000, 9);
    let id = inject_media(
        &server,
        "s",
        "video",
        &bytes,
        json!({ "mimetype": "video/mp4" }),
    )
    .await;
    let url = event_data(&rx, &id).await["media"]["url"]
        .as_str()
        .unwrap()
        .to_owned();

    let part = get_media(&server, &url, &[("range", "bytes=100-199")]).await;
    assert_eq!(part.status().as_u16(), 206);
    assert_eq!(part.headers()["content-range"], "bytes 100-199/10000");
    assert_eq!(part.headers()["content-length"], "100");
    assert_eq!(part.bytes().await.unwrap().as_ref(), &bytes[100..200]);

    let tail = get_media(&server, &url, &[("range", "bytes=-10")]).await;
    assert_eq!(tail.status().as_u16(), 206);
    assert_eq!(tail.bytes().await.unwrap().as_ref(), &bytes[9_990..]);

    let outside = get_media(&server, &url, &[("range", "bytes=10000-")]).await;
    assert_eq!(outside.status().as_u16(), 416);
    assert_eq!(outside.headers()["content-range"], "bytes */10000");

    let etag = format!("\"{}\"", sha256_hex(&bytes));
    let unchanged = get_media(&server, &url, &[("if-none-match", &etag)]).await;
    assert_eq!(unchanged.status().as_u16(), 304);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_lazy_mode_the_event_says_pending_and_the_first_read_downloads_the_media() {
    let server = TestServer::start_with(|c| {
        c.media.mode = switchboard::runtime::media::DownloadMode::Lazy;
    })
    .await;
    server.paired_session("s").await;
    let rx = message_hook(&server, "s").await;
    let bytes = sample_bytes(5_000, 4);
    let id = inject_media(&server, "s", "sticker", &bytes, json!({})).await;
    let media = event_data(&rx, &id).await["media"].clone();
    assert_eq!(media["state"], "pending", "{media}");
    assert_eq!(media["mimetype"], "image/webp", "a sticker's default type");
    let media_id = media["id"].as_str().unwrap();
    let info = format!("/api/v1/sessions/s/media/{media_id}/info");
    assert_eq!(server.get(&info).await.expect(200)["state"], "pending");

    assert_eq!(
        media_bytes(&server, media["url"].as_str().unwrap()).await,
        bytes
    );
    let described = server.get(&info).await.expect(200);
    assert_eq!(described["state"], "stored");
    assert_eq!(described["sha256"], sha256_hex(&bytes));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_download_is_a_state_with_its_reason_and_the_retry_route_fetches_it() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let rx = message_hook(&server, "s").await;
    let bytes = sample_bytes(2_048, 5);
    let id = inject_media(
        &server,
        "s",
        "image",
        &bytes,
        json!({ "mimetype": "image/jpeg", "fail_downloads": 1 }),
    )
    .await;
    let media = event_data(&rx, &id).await["media"].clone();
    assert_eq!(media["state"], "failed", "{media}");
    assert!(media["error"].as_str().unwrap().contains("410"), "{media}");
    let url = media["url"].as_str().unwrap();
    let media_id = media["id"].as_str().unwrap();

    let refused = get_media(&server, url, &[]).await;
    assert_eq!(refused.status().as_u16(), 409);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], "media_not_stored");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("/retry"),
        "{body}"
    );

    let retried = server
        .post_empty(&format!("/api/v1/sessions/s/media/{media_id}/retry"))
        .await
        .expect(200);
    assert_eq!(retried["state"], "stored");
    assert!(retried.get("error").is_none(), "{retried}");
    assert_eq!(media_bytes(&server, url).await, bytes);
    let metrics = server.get_text("/metrics").await;
    assert!(
        metrics.contains("switchboard_media_downloads_total{outcome=\"failed\"} 1"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_that_fails_again_answers_502_with_the_reason_and_an_unknown_media_is_404() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let rx = message_hook(&server, "s").await;
    let id = inject_media(
        &server,
        "s",
        "document",
        b"%PDF-1.7",
        json!({ "filename": "a.pdf", "fail_downloads": 2 }),
    )
    .await;
    let media_id = event_data(&rx, &id).await["media"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let m = server
        .post_empty(&format!("/api/v1/sessions/s/media/{media_id}/retry"))
        .await
        .expect_error(502, "media_download_failed");
    assert!(m.contains("410"), "{m}");
    server
        .get("/api/v1/sessions/s/media/in-000000000000000000000000/info")
        .await
        .expect_error(404, "media_not_found");
    server
        .get("/api/v1/sessions/s/media/bad%20id")
        .await
        .expect_error(400, "invalid_field");
    server
        .get("/api/v1/sessions/nobody/media/in-0/info")
        .await
        .expect_error(404, "session_not_found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_retention_sweep_removes_the_oldest_media_beyond_the_size_bound() {
    let server = TestServer::start_with(|c| {
        c.media.retention_bytes = Some(25_000);
        c.media.sweep_interval = Duration::from_millis(50);
    })
    .await;
    server.paired_session("s").await;
    let rx = message_hook(&server, "s").await;
    let mut urls = Vec::new();
    for seed in 0..3u8 {
        let id = inject_media(
            &server,
            "s",
            "image",
            &sample_bytes(10_000, seed),
            json!({}),
        )
        .await;
        urls.push(
            event_data(&rx, &id).await["media"]["url"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
        // Apart by more than the records' one-second clock, so "oldest" is defined.
        tokio::time::sleep(Duration::from_millis(1_100)).await;
    }
    eventually("the oldest media swept", || async {
        let resp = get_media(&server, &urls[0], &[]).await;
        (resp.status().as_u16() == 404).then_some(())
    })
    .await;
    assert_eq!(
        media_bytes(&server, &urls[1]).await,
        sample_bytes(10_000, 1)
    );
    assert_eq!(
        media_bytes(&server, &urls[2]).await,
        sample_bytes(10_000, 2)
    );
    let metrics = server.get_text("/metrics").await;
    assert!(
        metrics.contains("switchboard_media_swept_total 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("switchboard_media_stored_bytes 20000"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_retention_sweep_removes_media_older_than_the_retention_age() {
    let server = TestServer::start_with(|c| {
        c.media.retention_age = Some(Duration::from_secs(1));
        c.media.sweep_interval = Duration::from_millis(50);
    })
    .await;
    server.paired_session("s").await;
    let rx = message_hook(&server, "s").await;
    let id = inject_media(&server, "s", "image", &sample_bytes(1_000, 7), json!({})).await;
    let url = event_data(&rx, &id).await["media"]["url"]
        .as_str()
        .unwrap()
        .to_owned();
    eventually("the media swept by age", || async {
        let resp = get_media(&server, &url, &[]).await;
        (resp.status().as_u16() == 404).then_some(())
    })
    .await;
    let metrics = server.get_text("/metrics").await;
    assert!(
        metrics.contains("switchboard_media_sweeps_total"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_session_removes_its_media_from_the_store() {
    let server = TestServer::start().await;
    server.paired_session("gone").await;
    server.paired_session("kept").await;
    let rx_gone = message_hook(&server, "gone").await;
    let rx_kept = message_hook(&server, "kept").await;
    let gone_id = inject_media(&server, "gone", "image", &sample_bytes(4_000, 1), json!({})).await;
    let kept_id = inject_media(&server, "kept", "image", &sample_bytes(4_000, 2), json!({})).await;
    event_data(&rx_gone, &gone_id).await;
    let kept_url = event_data(&rx_kept, &kept_id).await["media"]["url"]
        .as_str()
        .unwrap()
        .to_owned();
    let dir = server.data_dir().join("media").join("media");
    assert!(
        dir.join("gone").is_dir(),
        "the session's media directory exists first"
    );

    server.delete("/api/v1/sessions/gone").await.expect(200);
    let left: Vec<_> = std::fs::read_dir(dir.join("gone"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(
        left.is_empty(),
        "no bytes of the deleted session are left: {left:?}"
    );
    assert_eq!(
        media_bytes(&server, &kept_url).await,
        sample_bytes(4_000, 2)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn media_urls_are_absolute_under_the_configured_public_url() {
    let server =
        TestServer::start_with(|c| c.media.public_url = "https://gw.example.com".into()).await;
    server.paired_session("s").await;
    let rx = message_hook(&server, "s").await;
    let id = inject_media(&server, "s", "image", b"\x89PNG....", json!({})).await;
    let url = event_data(&rx, &id).await["media"]["url"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        url.starts_with("https://gw.example.com/api/v1/sessions/s/media/in-"),
        "{url}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn injected_media_that_makes_no_sense_is_refused_naming_the_field() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let inbound = "/api/v1/sim/sessions/s/inbound";
    let cases = [
        (
            json!({ "from": "15550001111", "message_type": "image" }),
            "media",
        ),
        (
            json!({ "from": "15550001111", "text": "hi", "media": { "data": "aGk=" } }),
            "media",
        ),
        (
            json!({ "from": "15550001111", "message_type": "image", "media": { "data": "***" } }),
            "media.data",
        ),
        (
            json!({ "from": "15550001111", "message_type": "image", "media": { "data": "" } }),
            "media.data",
        ),
    ];
    for (body, field) in cases {
        let m = server
            .post(inbound, body.clone())
            .await
            .expect_error(400, "invalid_field");
        assert!(m.contains(field), "{body} → {m}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_delivered_twice_in_one_batch_is_downloaded_once() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let rx = message_hook(&server, "s").await;
    let bytes = sample_bytes(3_000, 6);
    let body = json!({
        "from": "15550001111",
        "message_type": "image",
        "message_id": "TWICE1",
        "duplicate": true,
        "media": { "data": base64_of(&bytes) },
    });
    server
        .post("/api/v1/sim/sessions/s/inbound", body)
        .await
        .expect(200);
    let media = event_data(&rx, "TWICE1").await["media"].clone();
    assert_eq!(
        media_bytes(&server, media["url"].as_str().unwrap()).await,
        bytes
    );
    let metrics = server.get_text("/metrics").await;
    assert!(
        metrics.contains("switchboard_media_downloads_total{outcome=\"stored\"} 1\n"),
        "{metrics}"
    );
    assert!(
        metrics.contains("switchboard_media_stored_bytes 3000\n"),
        "{metrics}"
    );
}

fn base64_of(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lazy_read_while_the_session_is_disconnected_is_409_and_the_media_stays_pending() {
    let server = TestServer::start_with(|c| {
        c.media.mode = switchboard::runtime::media::DownloadMode::Lazy;
    })
    .await;
    server.paired_session("s").await;
    let rx = message_hook(&server, "s").await;
    let bytes = sample_bytes(1_000, 8);
    let id = inject_media(&server, "s", "image", &bytes, json!({})).await;
    let media = event_data(&rx, &id).await["media"].clone();
    server
        .post_empty("/api/v1/sessions/s/disconnect")
        .await
        .expect(200);
    server.wait_for_status("s", "disconnected").await;
    let url = media["url"].as_str().unwrap();
    let resp = get_media(&server, url, &[]).await;
    assert_eq!(resp.status().as_u16(), 409);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], "session_not_connected", "{body}");
    let info = format!("{url}/info");
    assert_eq!(server.get(&info).await.expect(200)["state"], "pending");

    server
        .post_empty("/api/v1/sessions/s/connect")
        .await
        .expect(200);
    server.wait_for_status("s", "logged_in").await;
    assert_eq!(media_bytes(&server, url).await, bytes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn media_declared_larger_than_the_download_limit_fails_without_being_fetched() {
    let server = TestServer::start_with(|c| c.media.max_download_bytes = 1_000).await;
    server.paired_session("s").await;
    let rx = message_hook(&server, "s").await;
    let id = inject_media(&server, "s", "video", &sample_bytes(2_000, 1), json!({})).await;
    let media = event_data(&rx, &id).await["media"].clone();
    assert_eq!(media["state"], "failed", "{media}");
    assert!(
        media["error"]
            .as_str()
            .unwrap()
            .contains("--media-max-download-bytes"),
        "{media}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_a_media_removes_its_bytes_and_its_record() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let rx = message_hook(&server, "s").await;
    let id = inject_media(&server, "s", "image", &sample_bytes(500, 2), json!({})).await;
    let media = event_data(&rx, &id).await["media"].clone();
    let url = media["url"].as_str().unwrap();
    server.delete(url).await.expect(200);
    assert_eq!(get_media(&server, url, &[]).await.status().as_u16(), 404);
    server
        .delete(url)
        .await
        .expect_error(404, "media_not_found");
    let metrics = server.get_text("/metrics").await;
    assert!(
        metrics.contains("switchboard_media_stored_bytes 0\n"),
        "{metrics}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bytes_no_record_names_are_swept_once_past_the_orphan_grace() {
    let server = TestServer::start_with(|c| {
        // A grace long enough that the media written by this test is never
        // taken for an orphan in the moment between its bytes and its record.
        c.media.orphan_grace = Duration::from_secs(600);
        c.media.sweep_interval = Duration::from_millis(50);
    })
    .await;
    server.paired_session("s").await;
    let rx = message_hook(&server, "s").await;
    let id = inject_media(&server, "s", "image", &sample_bytes(500, 3), json!({})).await;
    let url = event_data(&rx, &id).await["media"]["url"]
        .as_str()
        .unwrap()
        .to_owned();
    // What a crash between writing an upload and recording it leaves.
    let dir = server.data_dir().join("media").join("media").join("s");
    std::fs::write(dir.join("up-orphan"), b"left behind").unwrap();
    let an_hour_ago = std::time::SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(dir.join("up-orphan"))
        .unwrap()
        .set_modified(an_hour_ago)
        .unwrap();
    eventually("the orphan to be swept", || async {
        (!dir.join("up-orphan").exists()).then_some(())
    })
    .await;
    assert_eq!(
        media_bytes(&server, &url).await,
        sample_bytes(500, 3),
        "recorded media stays"
    );
}
