//! The memory a large upload costs the real binary: 100 MB uploaded,
//! sent to another session and downloaded by it, while the harness reads
//! the process's peak resident memory from `/proc`.

use futures_util::StreamExt;
use reqwest::Method;
use serde_json::{Value, json};
use switchboard_tests::TOKEN;
use switchboard_tests::crash::{Intervals, Rig, until};

use crate::BINARY;

/// A `/proc/<pid>/status` figure in bytes (`VmHWM`: peak resident; `VmRSS`: now).
pub(crate) fn proc_bytes(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    let line = status
        .lines()
        .find(|l| l.starts_with(field))
        .unwrap_or_else(|| panic!("{field} in /proc/{pid}/status"));
    let kib: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .expect("a figure in KiB");
    kib * 1024
}

pub(crate) const FILE_BYTES: usize = 100_000_000;
const CHUNK: usize = 1 << 20;

/// The test file, made chunk by chunk as it is sent (the harness holds no
/// copy either).
fn chunk(i: usize) -> Vec<u8> {
    let len = CHUNK.min(FILE_BYTES - i * CHUNK);
    (0..len).map(|j| ((i * 31 + j * 7) % 251) as u8).collect()
}

/// Uploads the [`FILE_BYTES`] test file to `session`, streamed as it is
/// made; the upload's answer.
pub(crate) async fn upload_big_file(api: &switchboard_tests::crash::Api, session: &str) -> Value {
    let chunks = FILE_BYTES.div_ceil(CHUNK);
    let body = futures_util::stream::iter(0..chunks).map(|i| Ok::<_, std::io::Error>(chunk(i)));
    let resp = api
        .http()
        .post(format!(
            "{}/api/v1/sessions/{session}/media?filename=big.bin",
            api.base()
        ))
        .bearer_auth(TOKEN)
        .header("content-type", "application/octet-stream")
        .header("content-length", FILE_BYTES.to_string())
        .body(reqwest::Body::wrap_stream(body))
        .send()
        .await
        .expect("the upload is sent");
    assert_eq!(resp.status().as_u16(), 201);
    resp.json().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_100_mb_upload_sent_to_another_session_grows_the_gateways_peak_memory_by_well_under_its_size()
 {
    let rig = Rig::start(BINARY, Intervals::Fast).await;
    let api = rig.api();
    api.pair("alice").await;
    api.pair("bob").await;
    let alice = api.get("/api/v1/sessions/alice/status").await;
    let pid = rig.pid();
    let before = proc_bytes(pid, "VmHWM:");

    let up = upload_big_file(api, "bob").await;
    assert_eq!(up["file_length"], FILE_BYTES as u64);

    api.expect(
        Method::POST,
        "/api/v1/sessions/bob/messages/document",
        Some(json!({ "to": alice["phone_number"], "media_id": up["id"], "filename": "big.bin" })),
        200,
    )
    .await;
    until("alice to have the document stored", || async {
        let messages = api.get("/api/v1/sessions/alice/messages").await;
        messages["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|m| m["direction"] == "inbound" && m["body"]["media"]["state"] == "stored")
    })
    .await;
    let after = proc_bytes(pid, "VmHWM:");
    let growth = after.saturating_sub(before);
    eprintln!(
        "peak resident memory: {} MiB before, {} MiB after a {} MB upload, send and download: +{} MiB",
        before >> 20,
        after >> 20,
        FILE_BYTES / 1_000_000,
        growth >> 20
    );
    assert!(
        growth < (FILE_BYTES as u64) / 4,
        "the peak grew by {growth} bytes for a {FILE_BYTES}-byte file"
    );
    assert_eq!(up["sha256"].as_str().unwrap().len(), 64);
}
