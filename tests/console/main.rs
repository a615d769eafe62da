//! The web console in a real browser: a real gateway on the sim network, a
//! real webhook receiver and a real plugin, driven by Debian's headless
//! Chromium through Playwright (`tests/browser/story.mjs`).
//!
//! The test installs what it needs on a fresh machine: the browser package
//! (`apt-get install chromium`, when running as root; otherwise it fails
//! saying how to install it) and `playwright-core` (`npm ci` in
//! `tests/browser`, pinned by its lock file; skipped once installed, so
//! later runs need no network). Screenshots of every page, at 1280 and
//! 390 pixels wide, land in `target/console-screenshots/`, each beside the
//! text and named elements it showed, which the test checks screen by
//! screen.

mod setup;

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;
use switchboard_tests::receiver::TestReceiver;
use switchboard_tests::{TOKEN, TestServer, eventually, plugins};

/// How long the whole story may take before the test gives up on it.
const STORY_TIMEOUT: Duration = Duration::from_secs(240);

/// Where the screenshots go: `<workspace>/target/console-screenshots`.
fn artifacts_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| setup::workspace_root().join("target"));
    target.join("console-screenshots")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_runs_the_whole_story_in_the_console_in_a_real_browser() {
    let chromium = setup::chromium();
    let browser_dir = setup::playwright();

    // Pairing waits for the console's scan, and QR codes rotate slowly
    // enough to be looked at but fast enough to be seen rotating.
    let server = TestServer::start_with(|c| {
        c.sim.auto_pair = false;
        c.sim.qr_interval = Duration::from_millis(1500);
    })
    .await;
    let receiver = TestReceiver::start().await;
    let artifacts = artifacts_dir();
    let _ = std::fs::remove_dir_all(&artifacts);

    let story = tokio::process::Command::new("node")
        .arg("story.mjs")
        .current_dir(&browser_dir)
        .env("CONSOLE_BASE", server.base())
        .env("CONSOLE_TOKEN", TOKEN)
        .env("CONSOLE_RECEIVER", receiver.url())
        .env("CONSOLE_PLUGIN", plugins::KEYWORD_ROUTER)
        .env("CONSOLE_ARTIFACTS", &artifacts)
        .env("CHROMIUM", &chromium)
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(STORY_TIMEOUT, story)
        .await
        .expect("the browser story finishes within its time limit")
        .expect("node runs tests/browser/story.mjs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "the browser story failed ({}):\n{stdout}\n{stderr}\nscreenshots: {}",
        out.status,
        artifacts.display()
    );

    // Each screen shows what it is for: the story saves the visible text and
    // the named elements of every screenshot beside it.
    let signed_out = [
        "element h1: Sign in to Switchboard",
        "element input: token",
        "element button: Sign in",
    ];
    let shell = [
        "element a: Sessions",
        "element a: Webhooks",
        "element a: Blasts",
        "element a: Plugins",
        "Sign out",
    ];
    let hook_url = receiver.url();
    let screens: Vec<(&str, Vec<&str>)> = vec![
        ("sign-in-1280", signed_out.to_vec()),
        ("sign-in-390", signed_out.to_vec()),
        (
            "pairing-qr-1280",
            vec![
                "element h2: Pair demo with a QR code",
                "element img: QR code to link demo: scan it with the phone",
                "element button: Simulate the phone\u{2019}s scan",
            ],
        ),
        (
            "sessions-1280",
            vec![
                "1 session, 1 online",
                "Demo line",
                "logged in",
                "+15550001111",
            ],
        ),
        (
            "sessions-390",
            vec!["1 session, 1 online", "logged in", "+15550001111"],
        ),
        (
            "webhooks-1280",
            vec![
                "Webhooks and delivery health",
                hook_url.as_str(),
                "circuit closed: delivering",
            ],
        ),
        (
            "webhooks-390",
            vec!["Webhooks and delivery health", hook_url.as_str()],
        ),
        (
            "sim-panel-1280",
            vec![
                "Inject inbound messages",
                "3 messages injected from 4915112345678.",
            ],
        ),
        (
            "live-tail-1280",
            vec![
                "Live events",
                "Greta: Is my order ready? (1/3)",
                "Greta: Is my order ready? (3/3)",
            ],
        ),
        (
            "live-tail-390",
            vec!["Live events", "Greta: Is my order ready? (3/3)"],
        ),
        (
            "blast-running-1280",
            vec!["text blast from demo", "running"],
        ),
        (
            "blasts-1280",
            vec!["text blast from demo", "completed", "8 / 8 sent"],
        ),
        ("blasts-390", vec!["completed", "8 / 8 sent"]),
        (
            "blast-recipients-1280",
            vec!["Blast from demo", "completed", "8 / 8"],
        ),
        (
            "plugins-1280",
            vec!["Loaded plugins", "router 0.1.0", "event_filter", "active"],
        ),
        ("plugins-390", vec!["router 0.1.0", "active"]),
        (
            "messages-390",
            vec![
                "Greta: where is my order?",
                "Spring sale: 20% off until Sunday!",
            ],
        ),
        ("contacts-390", vec!["1 contact", "+4915112345678", "Greta"]),
        (
            "messages-media-1280",
            vec!["Greta: The parcel", "Open image/png"],
        ),
        (
            "sessions-as-admin-1280",
            vec!["2 sessions, 1 online", "Other line", "New session"],
        ),
    ];
    for (page, shows) in &screens {
        let text = assert_screenshot(&artifacts, page);
        for wanted in shows.iter().chain(if page.starts_with("sign-in") {
            &[][..]
        } else {
            &shell[..]
        }) {
            assert!(
                text.contains(wanted),
                "the {page} screen does not show `{wanted}`; it shows:\n{text}"
            );
        }
        // The sidebar names the token signed in (a phone's top bar shows
        // the name alone).
        if page.ends_with("-1280") && !page.starts_with("sign-in") {
            assert!(
                text.contains("Token admin"),
                "the {page} screen does not name the token:\n{text}"
            );
        }
    }
    let refused = assert_screenshot(&artifacts, "sign-in-refused-1280");
    assert!(refused.contains("did not accept this token"), "{refused}");

    // The read-only token over `demo`: its name beside sign-out (with its
    // scopes on a laptop), that one session, and nothing it may not do.
    let viewer = ["element a: Sessions", "Sign out"];
    let never = [
        "element a: Plugins",
        "element a: Sim network",
        "Other line",
        "element button: Create session",
        "element button: Delete demo",
        "element button: Start blast",
    ];
    let viewer_screens: [(&str, &[&str]); 4] = [
        (
            "sessions-as-viewer-1280",
            &[
                "Token viewer \u{b7} read",
                "1 session, 1 online",
                "Demo line",
            ],
        ),
        ("sessions-as-viewer-390", &["1 session, 1 online", "viewer"]),
        (
            "session-as-viewer-1280",
            &["Token viewer \u{b7} read", "Greta: where is my order?"],
        ),
        (
            "refused-as-viewer-1280",
            &[
                "Token viewer \u{b7} read",
                "may not use this page: session other is not among its sessions",
            ],
        ),
    ];
    for (page, shows) in viewer_screens {
        let text = assert_screenshot(&artifacts, page);
        for wanted in shows.iter().chain(&viewer) {
            assert!(
                text.contains(wanted),
                "the {page} screen does not show `{wanted}`; it shows:\n{text}"
            );
        }
        for unwanted in never {
            assert!(
                !text.contains(unwanted),
                "the {page} screen shows `{unwanted}`, which the token may not use:\n{text}"
            );
        }
    }

    // What the browser did reached the gateway for real.
    let session = server.get("/api/v1/sessions/demo").await.expect(200);
    assert_eq!(session["status"], "logged_in", "{session}");
    let hooks = receiver.wait_for(3).await;
    assert!(
        hooks
            .iter()
            .any(|r| r.event() == "message" && r.json()["data"]["push_name"] == "Greta"),
        "the webhook registered in the console received the injected messages"
    );
    let jobs = server.get("/api/v1/blasts?session=demo").await.expect(200);
    assert_eq!(jobs["jobs"][0]["status"], "completed", "{jobs}");
    assert_eq!(jobs["jobs"][0]["sent_count"], 8, "{jobs}");
    let plugin = eventually("the uploaded plugin to have filtered", || async {
        let list = server.get("/api/v1/plugins").await.expect(200);
        let p = list["plugins"][0].clone();
        (p["counters"]["calls"].as_u64() >= Some(2)).then_some(p)
    })
    .await;
    assert_eq!(plugin["name"], "router", "{plugin}");
    let outbox = server
        .get("/api/v1/sim/sessions/demo/outbox")
        .await
        .expect(200);
    assert_eq!(
        outbox["count"],
        Value::from(8),
        "the blast's sends reached the network"
    );
    let tokens = server.get("/api/v1/tokens").await.expect(200);
    assert_eq!(tokens["tokens"][0]["name"], "viewer", "{tokens}");
    assert_eq!(
        tokens["tokens"][0]["status"], "revoked",
        "the story revoked the token it minted: {tokens}"
    );
    server.stop().await;
}

/// Fails unless `<dir>/NN-<page>.png` exists and is a PNG; returns what the
/// screen showed (`NN-<page>.txt`: its visible text and named elements).
#[track_caller]
fn assert_screenshot(dir: &std::path::Path, page: &str) -> String {
    let suffix = format!("-{page}.png");
    let found = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("no screenshot directory {} ({e})", dir.display()))
        .flatten()
        .find(|e| e.file_name().to_string_lossy().ends_with(&suffix));
    let entry = found.unwrap_or_else(|| panic!("no screenshot `*{suffix}` in {}", dir.display()));
    let bytes = std::fs::read(entry.path()).expect("screenshot readable");
    assert!(
        bytes.starts_with(b"\x89PNG"),
        "{} is not a PNG",
        entry.path().display()
    );
    let text = entry.path().with_extension("txt");
    std::fs::read_to_string(&text)
        .unwrap_or_else(|e| panic!("no text of the screen {} ({e})", text.display()))
}
