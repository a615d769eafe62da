//! The memory a large send costs the real binary on the real network: a
//! 100 MB upload sent by its `media_id` to a customer through the wire
//! server is encrypted into a temporary file as it is read and uploaded to
//! the media host from there, while the harness reads the process's peak
//! resident memory from `/proc`.

use std::time::Duration;

use futures_util::StreamExt;
use reqwest::Method;
use serde_json::{Value, json};
use switchboard_tests::TOKEN;
use switchboard_tests::crash::{CRASH_PATIENCE, Intervals, Rig};
use switchboard_tests::wire::GATEWAY_PHONE;
use switchboard_wire::WireServer;
use switchboard_wire::customer::{Customer, VERSION};
use whatsapp_rust::types::events::Event;

use crate::BINARY;
use crate::media_memory::{FILE_BYTES, chunk, proc_bytes};

const CUSTOMER: &str = "15550000901";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_100_mb_document_sent_by_media_id_grows_the_gateways_peak_memory_by_well_under_its_size()
{
    let wire = WireServer::start().await.unwrap();
    wire.account(GATEWAY_PHONE, "Gateway");
    let (ws, media) = (wire.ws_url(), wire.media_host());
    let version = format!("{}.{}.{}", VERSION.0, VERSION.1, VERSION.2);
    let env = [
        ("SWITCHBOARD_NETWORK", "whatsapp"),
        ("SWITCHBOARD_WHATSAPP_WS_URL", ws.as_str()),
        ("SWITCHBOARD_WHATSAPP_VERSION", version.as_str()),
        ("SWITCHBOARD_WHATSAPP_WIRE_MEDIA_HOST", media.as_str()),
    ];
    let rig = Rig::start_with_env(BINARY, Intervals::Fast, &env).await;
    let api = rig.api();
    api.expect(
        Method::POST,
        "/api/v1/sessions",
        Some(json!({ "id": "wa", "network": "whatsapp" })),
        201,
    )
    .await;
    api.expect(Method::POST, "/api/v1/sessions/wa/connect", None, 200)
        .await;
    let deadline = tokio::time::Instant::now() + CRASH_PATIENCE;
    let qr = loop {
        if let Ok((200, body)) = api.call(Method::GET, "/api/v1/sessions/wa/qr", None).await {
            break body["qr"].as_str().unwrap_or_default().to_owned();
        }
        assert!(tokio::time::Instant::now() < deadline, "no QR code");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    wire.scan(GATEWAY_PHONE, &qr).unwrap();
    api.wait_logged_in("wa").await;
    let customer = Customer::link(&wire, CUSTOMER, "Ines").await.unwrap();

    let chunks = FILE_BYTES.div_ceil(1 << 20);
    let body = futures_util::stream::iter(0..chunks).map(|i| Ok::<_, std::io::Error>(chunk(i)));
    let resp = api
        .http()
        .post(format!(
            "{}/api/v1/sessions/wa/media?filename=big.bin",
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
    let up: Value = resp.json().await.unwrap();
    let pid = rig.pid();
    let before = proc_bytes(pid, "VmHWM:");

    api.expect(
        Method::POST,
        "/api/v1/sessions/wa/messages/document",
        Some(json!({ "to": format!("+{CUSTOMER}"), "media_id": up["id"], "filename": "big.bin" })),
        200,
    )
    .await;
    let after = proc_bytes(pid, "VmHWM:");
    let growth = after.saturating_sub(before);
    eprintln!(
        "peak resident memory: {} MiB before, {} MiB after sending a {} MB document through the wire server: +{} MiB",
        before >> 20,
        after >> 20,
        FILE_BYTES / 1_000_000,
        growth >> 20
    );
    assert!(
        growth < (FILE_BYTES as u64) / 4,
        "the peak grew by {growth} bytes for a {FILE_BYTES}-byte document"
    );
    // The customer got the document, its length and hash those of the upload.
    let document = customer
        .events()
        .wait(Duration::from_secs(60), |e| {
            let Event::Messages(batch) = e else {
                return None;
            };
            batch
                .messages
                .iter()
                .find_map(|m| m.message.document_message.as_option().cloned())
        })
        .await
        .unwrap();
    assert_eq!(document.file_length, Some(FILE_BYTES as u64));
    let sha: String = document
        .file_sha256
        .unwrap()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(sha, up["sha256"].as_str().unwrap());
}
