//! The memory a large send costs the real binary on the real network: a
//! 100 MB upload sent by its `media_id` to a customer through the wire
//! server is encrypted into a temporary file as it is read and uploaded to
//! the media host from there, while the harness reads the process's peak
//! resident memory from `/proc`.

use std::time::Duration;

use reqwest::Method;
use serde_json::json;
use switchboard_wire::customer::Customer;
use whatsapp_rust::types::events::Event;

use crate::BINARY;
use crate::media_memory::{FILE_BYTES, proc_bytes, upload_big_file};

const CUSTOMER: &str = "15550000901";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_100_mb_document_sent_by_media_id_grows_the_gateways_peak_memory_by_well_under_its_size()
{
    let (wire, rig) = switchboard_tests::wire::linked_rig(BINARY, &[]).await;
    let api = rig.api();
    let customer = Customer::link(&wire, CUSTOMER, "Ines").await.unwrap();

    let up = upload_big_file(api, "wa").await;
    let pid = rig.pid();
    // The peak from here on: clear_refs `5` resets the process's peak
    // resident memory to what it holds now.
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").expect("the peak resets");
    let before = proc_bytes(pid, "VmRSS:");

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
        "resident memory: {} MiB before, peaking at {} MiB while sending a {} MB document through the wire server: +{} MiB",
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
