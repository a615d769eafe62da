//! The media store in an S3-compatible bucket (a real `moto_server` the
//! test starts on 127.0.0.1): inbound media stored there and read back
//! byte-identical, ranges, uploads sent by id, presigned redirects, and a
//! deleted session's objects removed.

use std::time::Duration;

use serde_json::{Value, json};
use switchboard::media_store::{MediaStoreConfig, S3Config};
use switchboard_tests::media::{get_media, inject_media, media_bytes, sample_bytes, sha256_hex};
use switchboard_tests::moto::MotoServer;
use switchboard_tests::receiver::message_hook;
use switchboard_tests::{TOKEN, TestServer};

fn s3(moto: &MotoServer, bucket: &str, presign: Option<Duration>) -> MediaStoreConfig {
    MediaStoreConfig::S3(S3Config {
        endpoint: Some(moto.endpoint.clone()),
        bucket: bucket.into(),
        region: "us-east-1".into(),
        access_key_id: Some("testing".into()),
        secret_access_key: Some("testing".into()),
        session_token: None,
        path_style: true,
        allow_http: true,
        presign_for: presign,
    })
}

async fn media_of(rx: &switchboard_tests::receiver::TestReceiver, message_id: &str) -> Value {
    let got = rx
        .wait_for_match(message_id, |r| r.json()["data"]["message_id"] == message_id)
        .await;
    got.json()["data"]["media"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inbound_media_is_kept_in_the_bucket_and_read_back_byte_identical_with_ranges() {
    let moto = MotoServer::start().await;
    moto.create_bucket("media").await;
    let store = s3(&moto, "media", None);
    let server = TestServer::start_with(move |c| c.media_store = store).await;
    server.paired_session("s").await;
    let rx = message_hook(&server, "s").await;
    let cases = [
        (
            "image",
            sample_bytes(80_000, 1),
            json!({ "mimetype": "image/jpeg" }),
        ),
        (
            "audio",
            sample_bytes(9_000, 2),
            json!({ "mimetype": "audio/ogg", "ptt": true }),
        ),
        (
            "document",
            sample_bytes(6_000_000, 3),
            json!({ "filename": "big.pdf", "mimetype": "application/pdf" }),
        ),
    ];
    let mut ids = Vec::new();
    for (kind, bytes, extra) in &cases {
        let id = inject_media(&server, "s", kind, bytes, extra.clone()).await;
        let media = media_of(&rx, &id).await;
        assert_eq!(media["state"], "stored", "{media}");
        assert_eq!(media["sha256"], sha256_hex(bytes));
        let url = media["url"].as_str().unwrap();
        assert_eq!(&media_bytes(&server, url).await, bytes, "{kind}");
        ids.push(media["id"].as_str().unwrap().to_owned());
    }
    let keys = moto.keys("media").await;
    for id in &ids {
        assert!(
            keys.contains(&format!("media/s/{id}")),
            "{id} in the bucket: {keys:?}"
        );
    }
    let url = format!("/api/v1/sessions/s/media/{}", ids[2]);
    let part = get_media(&server, &url, &[("range", "bytes=5999990-")]).await;
    assert_eq!(part.status().as_u16(), 206);
    assert_eq!(
        part.headers()["content-range"],
        "bytes 5999990-5999999/6000000"
    );
    assert_eq!(
        part.bytes().await.unwrap().as_ref(),
        &cases[2].1[5_999_990..]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_to_the_bucket_is_sent_by_id_and_a_deleted_sessions_objects_are_removed() {
    let moto = MotoServer::start().await;
    moto.create_bucket("uploads").await;
    let store = s3(&moto, "uploads", None);
    let server = TestServer::start_with(move |c| c.media_store = store).await;
    let alice = server.paired_session("alice").await;
    server.paired_session("bob").await;
    // Larger than one part, so the upload is a real multipart upload.
    let bytes = sample_bytes(12 * 1024 * 1024 + 7, 4);
    let resp = server
        .http()
        .post(format!("{}/api/v1/sessions/bob/media", server.base()))
        .bearer_auth(TOKEN)
        .header("content-type", "video/mp4")
        .body(bytes.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 201);
    let up: Value = resp.json().await.unwrap();
    assert_eq!(up["sha256"], sha256_hex(&bytes));
    server
        .post(
            "/api/v1/sessions/bob/messages/video",
            json!({ "to": alice["phone_number"], "media_id": up["id"] }),
        )
        .await
        .expect(200);
    let media = switchboard_tests::eventually("the video at alice", || async {
        let m = server
            .inbound_messages("alice")
            .await
            .first()?
            .pointer("/body/media")?
            .clone();
        (m["state"] == "stored").then_some(m)
    })
    .await;
    assert_eq!(
        media_bytes(&server, media["url"].as_str().unwrap()).await,
        bytes
    );

    server.delete("/api/v1/sessions/bob").await.expect(200);
    let keys = moto.keys("uploads").await;
    assert!(
        !keys.iter().any(|k| k.starts_with("media/bob/")),
        "bob's objects are gone: {keys:?}"
    );
    assert!(
        keys.iter().any(|k| k.starts_with("media/alice/")),
        "alice's stay: {keys:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_presigning_store_answers_reads_with_a_redirect_to_a_url_that_serves_the_bytes() {
    let moto = MotoServer::start().await;
    moto.create_bucket("signed").await;
    let store = s3(&moto, "signed", Some(Duration::from_secs(300)));
    let server = TestServer::start_with(move |c| c.media_store = store).await;
    server.paired_session("s").await;
    let rx = message_hook(&server, "s").await;
    let bytes = sample_bytes(4_000, 8);
    let id = inject_media(
        &server,
        "s",
        "image",
        &bytes,
        json!({ "mimetype": "image/png" }),
    )
    .await;
    let media = media_of(&rx, &id).await;
    // Not followed here, to see the redirect itself.
    let no_redirects = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let resp = no_redirects
        .get(format!(
            "{}{}",
            server.base(),
            media["url"].as_str().unwrap()
        ))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 302);
    let location = resp.headers()["location"].to_str().unwrap().to_owned();
    assert!(
        location.starts_with(&moto.endpoint) && location.contains("X-Amz-Signature"),
        "{location}"
    );
    let fetched = reqwest::get(&location).await.unwrap();
    assert_eq!(fetched.status().as_u16(), 200);
    assert_eq!(
        fetched.headers()["content-type"],
        "image/png",
        "kept with the object"
    );
    assert_eq!(fetched.bytes().await.unwrap().as_ref(), bytes.as_slice());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_to_a_bucket_that_does_not_exist_is_a_502_naming_the_media_store() {
    let moto = MotoServer::start().await;
    let store = s3(&moto, "missing", None);
    let server = TestServer::start_with(move |c| c.media_store = store).await;
    server.paired_session("s").await;
    let resp = server
        .http()
        .post(format!("{}/api/v1/sessions/s/media", server.base()))
        .bearer_auth(TOKEN)
        .header("content-type", "image/png")
        .body(vec![1u8; 100])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 502);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["code"], "media_store_failed", "{body}");
}
