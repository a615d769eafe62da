//! Helpers of the media tests: injecting inbound media into a sim session
//! and reading media back through the gateway's media route.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use crate::{TOKEN, TestServer};

/// Bytes that look like nothing in particular, `len` long, varying by `seed`.
pub fn sample_bytes(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761).to_be_bytes()[0] ^ seed)
        .collect()
}

/// Injects an inbound media message of `message_type` carrying `bytes`
/// (plus the `media` fields in `extra`) into `session`; its message id.
pub async fn inject_media(
    server: &TestServer,
    session: &str,
    message_type: &str,
    bytes: &[u8],
    extra: Value,
) -> String {
    let mut media = json!({ "data": STANDARD.encode(bytes) });
    if let (Some(m), Some(e)) = (media.as_object_mut(), extra.as_object()) {
        m.extend(e.clone());
    }
    let body = server
        .post(
            &format!("/api/v1/sim/sessions/{session}/inbound"),
            json!({ "from": "15550001111", "message_type": message_type, "media": media }),
        )
        .await
        .expect(200);
    body["message_id"]
        .as_str()
        .expect("a message id")
        .to_owned()
}

/// A GET of a media URL (a path or an absolute URL), with extra headers.
pub async fn get_media(
    server: &TestServer,
    url: &str,
    headers: &[(&str, &str)],
) -> reqwest::Response {
    let url = if url.starts_with("http") {
        url.to_owned()
    } else {
        format!("{}{url}", server.base())
    };
    let mut req = server.http().get(url).bearer_auth(TOKEN);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    req.send().await.expect("the media request is sent")
}

/// The bytes at a media URL; panics unless 200.
pub async fn media_bytes(server: &TestServer, url: &str) -> Vec<u8> {
    let resp = get_media(server, url, &[]).await;
    let status = resp.status();
    let bytes = resp.bytes().await.expect("the media body").to_vec();
    assert_eq!(
        status.as_u16(),
        200,
        "GET {url}: {}",
        String::from_utf8_lossy(&bytes)
    );
    bytes
}

/// The lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}
