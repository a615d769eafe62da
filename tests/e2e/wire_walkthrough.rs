//! docs/whatsapp.md's "A first session on WhatsApp, step by step", run as
//! written against the wire server: the real binary started as its first
//! command says (pointed at the wire server, the test's one addition), its
//! steps run in bash one by one and checked against their comments, and the
//! wire's mock phone scanning each QR code the walkthrough shows.

use std::time::Duration;

use serde_json::Value;
use switchboard_tests::readme;
use switchboard_tests::walkthrough::{Shell, check, serve_command, start_as_written};
use switchboard_tests::wire::{GATEWAY_PHONE, LOGIN_PATIENCE};
use switchboard_wire::customer::{Customer, VERSION};
use switchboard_wire::{Seen, WireServer};

use crate::BINARY;

const DOC: &str = include_str!("../../docs/whatsapp.md");
/// The contact the walkthrough writes to.
const CONTACT: &str = "15550000801";

/// Waits until `session` of the gateway at `base` is logged in.
async fn logged_in(base: &str, token: &str, session: &str) {
    let http = switchboard_tests::http_client();
    let deadline = tokio::time::Instant::now() + LOGIN_PATIENCE;
    loop {
        let status: Value = http
            .get(format!("{base}/api/v1/sessions/{session}/status"))
            .bearer_auth(token)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if status["status"] == "logged_in" {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{session} did not log in after the scan: {status}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_whatsapp_walkthrough_runs_as_written_against_the_wire_server() {
    let body = readme::section(DOC, "A first session on WhatsApp, step by step");
    let offset = DOC.find(body).expect("the section is in the document");
    let steps = readme::steps(body, DOC[..offset].lines().count() + 1);
    let (mut env, args) = serve_command(&steps);
    assert_eq!(
        env,
        [("SWITCHBOARD_NETWORK".to_owned(), "whatsapp".to_owned())]
    );

    let wire = WireServer::start().await.unwrap();
    wire.account(GATEWAY_PHONE, "Shop");
    let contact = Customer::link(&wire, CONTACT, "Kim").await.unwrap();
    let version = format!("{}.{}.{}", VERSION.0, VERSION.1, VERSION.2);
    env.extend([
        ("SWITCHBOARD_WHATSAPP_WS_URL".to_owned(), wire.ws_url()),
        ("SWITCHBOARD_WHATSAPP_VERSION".to_owned(), version),
        (
            "SWITCHBOARD_WHATSAPP_WIRE_MEDIA_HOST".to_owned(),
            wire.media_host(),
        ),
    ]);
    let cwd = tempfile::tempdir().unwrap();
    let gateway = start_as_written(BINARY, cwd.path(), &env, &args).await;
    let token = std::fs::read_to_string(cwd.path().join("data/api-token")).unwrap();
    let mut shell = Shell::start(cwd.path(), &gateway.base).await;
    let mut calls = 0;
    for step in steps.iter().filter(|s| !s.command.contains("cargo run")) {
        let ran = shell.run(&step.command).await;
        if ran.status.is_some() {
            calls += 1;
        }
        let answer = check("docs/whatsapp.md", step, &ran);
        // The phone scans the QR code shown; the walkthrough goes on once
        // the device has logged in, as a reader would.
        if let Some(qr) = answer.as_ref().and_then(|a| a["qr"].as_str()) {
            wire.scan(GATEWAY_PHONE, qr).unwrap();
            logged_in(&gateway.base, token.trim(), "shop").await;
        }
    }
    assert!(calls >= 9, "the walkthrough made {calls} API calls");
    // What it sent reached the contact, and its logout unlinked the device.
    contact
        .wait_text(GATEWAY_PHONE, |t| t == "Hello from the shop")
        .await
        .unwrap();
    assert_eq!(
        wire.count(|s| matches!(s, Seen::LoggedOut { phone, .. } if phone == GATEWAY_PHONE)),
        1,
        "{:?}",
        wire.seen()
    );
    drop(shell.stdin);
    let _ = shell.child.wait().await;
    gateway.stop().await;
}
