//! The real `whatsapp` backend linked to the wire server's mock phone: by
//! QR code and by pair code, restored after a restart without linking
//! again.

use serde_json::json;
use switchboard_tests::wire::{GATEWAY_PHONE, Wired};
use switchboard_wire::Seen;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_linked_by_qr_code_talks_with_a_customer_both_ways() {
    let w = Wired::start().await;
    let status = w.linked("wa").await;
    assert_eq!(status["is_logged_in"], true, "{status}");
    let session = w.server.get("/api/v1/sessions/wa").await.expect(200);
    assert_eq!(session["phone_number"], GATEWAY_PHONE, "{session}");

    let customer = w.customer("15550000101", "Carol").await;
    customer
        .send_text(GATEWAY_PHONE, "hello gateway")
        .await
        .unwrap();
    let got = w
        .inbound("wa", |m| m["body"]["text"] == "hello gateway")
        .await;
    assert_eq!(got["chat"], "15550000101@s.whatsapp.net", "{got}");
    assert_eq!(got["body"]["push_name"], "Carol", "{got}");

    w.server
        .post(
            "/api/v1/sessions/wa/messages/text",
            json!({ "to": "+15550000101", "text": "hello carol" }),
        )
        .await
        .expect(200);
    let (text, _) = customer
        .wait_text(GATEWAY_PHONE, |t| t == "hello carol")
        .await
        .unwrap();
    assert_eq!(text, "hello carol");
}

/// The line before the scanning hint is the code, as text.
fn drawn_code(out: &str) -> Option<String> {
    let lines: Vec<&str> = out.lines().collect();
    lines
        .windows(2)
        .find(|w| w[1].starts_with("Scan it on the phone"))
        .map(|w| w[0].to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_qr_code_drawn_by_sessions_qr_links_the_session_when_the_phone_scans_it() {
    let w = Wired::start().await;
    w.qr("wa").await;
    let cwd = tempfile::tempdir().unwrap();
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_switchboard-e2e"))
        .args(["sessions", "qr", "wa", "--url", w.server.base()])
        .args(["--token", switchboard_tests::TOKEN])
        .current_dir(cwd.path())
        .env_remove("SWITCHBOARD_URL")
        .env_remove("SWITCHBOARD_TOKEN")
        .output()
        .await
        .expect("the client runs");
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let code = drawn_code(&stdout).expect("the code under its drawing");
    let drawn = switchboard::cli::qr::render(&code).unwrap();
    assert!(stdout.starts_with(&drawn), "drawn first:\n{stdout}");
    w.wire
        .scan(GATEWAY_PHONE, &code)
        .expect("the drawn code scans");
    let status = w.logged_in("wa").await;
    assert_eq!(status["phone_number"], GATEWAY_PHONE, "{status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_links_by_a_pair_code_typed_on_the_phone() {
    let w = Wired::start().await;
    w.server
        .post(
            "/api/v1/sessions",
            json!({ "id": "wa", "network": "whatsapp" }),
        )
        .await
        .expect(201);
    let pair = w
        .server
        .post(
            "/api/v1/sessions/wa/pair",
            json!({ "phone_number": format!("+{GATEWAY_PHONE}") }),
        )
        .await
        .expect(200);
    let code = pair["pair_code"].as_str().unwrap().replace('-', "");
    assert_eq!(code.len(), 8, "{pair}");
    w.wait_status("wa", "waiting_for_pair_code").await;
    w.wire
        .enter_code(GATEWAY_PHONE, &code)
        .expect("the phone takes the code");
    let status = w.logged_in("wa").await;
    assert_eq!(status["phone_number"], GATEWAY_PHONE, "{status}");
    assert_eq!(w.wire.count(|s| matches!(s, Seen::Linked { .. })), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_restores_the_linked_session_without_linking_again() {
    let mut w = Wired::start().await;
    w.linked("wa").await;
    let customer = w.customer("15550000102", "Dora").await;
    w.server.restart().await;
    let status = w.logged_in("wa").await;
    assert_eq!(status["phone_number"], GATEWAY_PHONE, "{status}");
    assert_eq!(
        w.wire
            .count(|s| matches!(s, Seen::Linked { phone, .. } if phone == GATEWAY_PHONE)),
        1,
        "linked once"
    );
    assert_eq!(
        w.wire
            .count(|s| matches!(s, Seen::LoggedIn { phone, .. } if phone == GATEWAY_PHONE)),
        2,
        "logged in twice"
    );
    // The Signal sessions came back with the device state.
    customer
        .send_text(GATEWAY_PHONE, "still there?")
        .await
        .unwrap();
    w.inbound("wa", |m| m["body"]["text"] == "still there?")
        .await;
    w.server
        .post(
            "/api/v1/sessions/wa/messages/text",
            json!({ "to": "+15550000102", "text": "still here" }),
        )
        .await
        .expect(200);
    customer
        .wait_text(GATEWAY_PHONE, |t| t == "still here")
        .await
        .unwrap();
}
