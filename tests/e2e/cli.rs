//! The command-line client (`switchboard sessions|send|webhooks|blasts|plugins`)
//! run as a subprocess of the real binary against a running gateway: its
//! output, its effect seen through the API and the sim, the address and token
//! from flags, from environment variables and from the data directory, and
//! its exit codes when things go wrong.

use std::time::Duration;

use serde_json::{Value, json};
use switchboard_tests::plugins;
use switchboard_tests::process::Lines;
use switchboard_tests::receiver::{Respond, TestReceiver, add_webhook, dlq, inbound, wait_for_dlq};
use switchboard_tests::{PATIENCE, TOKEN, TestServer, eventually};

/// The binary built from the host's `main.rs` (see tests/Cargo.toml).
const BINARY: &str = env!("CARGO_BIN_EXE_switchboard-e2e");

/// How the client learns where the gateway is and its token.
#[derive(Clone, Copy)]
enum Via {
    /// `--url` and `--token`.
    Flags,
    /// `SWITCHBOARD_URL` and `SWITCHBOARD_TOKEN`.
    Env,
    /// `SWITCHBOARD_URL` and `SWITCHBOARD_DATA_DIR` (the token file the gateway wrote).
    DataDir,
    /// `--url` and this `--token`.
    Token(&'static str),
    /// This `--url` and the right `--token`.
    Url(&'static str),
}

/// What a client run printed and how it ended.
#[derive(Debug)]
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    /// Panics unless the run succeeded; returns its standard output.
    #[track_caller]
    fn ok(self) -> String {
        assert_eq!(self.code, 0, "the command failed: {self:?}");
        self.stdout
    }
}

/// Runs `switchboard <line>` (split on whitespace) against `server`, in an
/// empty working directory and with none of the client's variables inherited.
async fn cli(server: &TestServer, via: Via, line: &str) -> Run {
    let cwd = tempfile::tempdir().unwrap();
    let mut cmd = tokio::process::Command::new(BINARY);
    cmd.args(line.split_whitespace()).current_dir(cwd.path());
    for var in [
        "SWITCHBOARD_URL",
        "SWITCHBOARD_TOKEN",
        "API_TOKEN",
        "SWITCHBOARD_DATA_DIR",
    ] {
        cmd.env_remove(var);
    }
    match via {
        Via::Flags | Via::Token(_) | Via::Url(_) => {
            let url = if let Via::Url(url) = via {
                url
            } else {
                server.base()
            };
            let token = if let Via::Token(token) = via {
                token
            } else {
                TOKEN
            };
            cmd.args(["--url", url, "--token", token]);
        }
        Via::Env => {
            cmd.env("SWITCHBOARD_URL", server.base())
                .env("SWITCHBOARD_TOKEN", TOKEN);
        }
        Via::DataDir => {
            cmd.env("SWITCHBOARD_URL", server.base())
                .env("SWITCHBOARD_DATA_DIR", server.data_dir());
        }
    }
    let out = cmd.output().await.expect("the client runs");
    Run {
        code: out.status.code().expect("an exit code"),
        stdout: String::from_utf8(out.stdout).expect("UTF-8 output"),
        stderr: String::from_utf8(out.stderr).expect("UTF-8 errors"),
    }
}

/// The table row (split on runs of spaces) whose first cell is `first`.
#[track_caller]
fn row(table: &str, first: &str) -> Vec<String> {
    table
        .lines()
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .find(|cells| cells.first().is_some_and(|c| c == first))
        .unwrap_or_else(|| panic!("no row `{first}` in:\n{table}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_create_list_and_qr_with_flags_and_environment() {
    let server = TestServer::start_with(|c| {
        c.sim.auto_pair = false;
        c.sim.qr_interval = Duration::from_secs(600);
    })
    .await;
    let out = cli(&server, Via::Flags, "sessions create alice --name Alice")
        .await
        .ok();
    assert_eq!(out, "created session alice on sim (disconnected)\n");
    let alice = server.get("/api/v1/sessions/alice").await.expect(200);
    assert_eq!(alice["name"], "Alice", "{alice}");

    let table = cli(&server, Via::Env, "sessions list").await.ok();
    assert!(table.starts_with("ID "), "{table}");
    assert_eq!(row(&table, "alice")[..3], ["alice", "disconnected", "sim"]);

    let out = cli(&server, Via::Env, "sessions qr alice").await.ok();
    let shown = server.get("/api/v1/sessions/alice/qr").await.expect(200);
    let code = shown["qr"].as_str().expect("a QR code");
    let drawn = switchboard::cli::qr::render(code).unwrap();
    assert!(
        out.starts_with(&drawn),
        "the current QR code drawn first:\n{out}"
    );
    assert!(out.lines().any(|l| l == code), "and as text: {out}");
    assert!(out.contains("It expires in "), "{out}");
    assert!(out.contains(&shown["expires_at"].to_string()), "{out}");

    let listed = cli(&server, Via::Flags, "sessions list --json").await.ok();
    let listed: Value = serde_json::from_str(&listed).expect("--json prints JSON");
    assert_eq!(listed, server.get("/api/v1/sessions").await.expect(200));
}

/// The codes a `sessions qr` run drew: each is printed as text on the line
/// before the scanning hint.
fn drawn_codes(lines: &[String]) -> Vec<String> {
    lines
        .windows(2)
        .filter(|w| w[1].starts_with("Scan it on the phone"))
        .map(|w| w[0].clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_qr_watch_follows_rotating_codes_until_the_phone_links() {
    let server = TestServer::start_with(|c| {
        c.sim.auto_pair = false;
        c.sim.qr_interval = Duration::from_millis(300);
    })
    .await;
    server
        .post(
            "/api/v1/sessions",
            json!({ "id": "alice", "phone": "+1 555 000 1111" }),
        )
        .await
        .expect(201);
    let cwd = tempfile::tempdir().unwrap();
    let mut child = tokio::process::Command::new(BINARY)
        .args(["sessions", "qr", "alice", "--watch"])
        .args(["--url", server.base(), "--token", TOKEN])
        .current_dir(cwd.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the client runs");
    let stdout = Lines::collect(child.stdout.take().unwrap());
    let stderr = Lines::collect(child.stderr.take().unwrap());
    let codes = eventually("two rotated codes drawn", || async {
        let codes = drawn_codes(&stdout.all());
        (codes.len() >= 2).then_some(codes)
    })
    .await;
    assert_ne!(codes[0], codes[1], "each drawing is a new code");
    let text = stdout.text();
    for code in &codes {
        let drawn = switchboard::cli::qr::render(code).unwrap();
        assert!(text.contains(&drawn), "{code} is drawn:\n{text}");
    }
    assert_eq!(
        child.try_wait().unwrap(),
        None,
        "still watching before the scan"
    );

    server
        .post_empty("/api/v1/sim/sessions/alice/scan")
        .await
        .expect(200);
    let status = tokio::time::timeout(PATIENCE, child.wait())
        .await
        .expect("the watch ends once the phone has linked")
        .unwrap();
    assert!(status.success(), "{status}: {}", stderr.text());
    let phone = server
        .get("/api/v1/sessions/alice/status")
        .await
        .expect(200)["phone_number"]
        .as_str()
        .expect("a phone number once logged in")
        .to_owned();
    let last = eventually("the output read to its end", || async {
        stdout
            .all()
            .last()
            .filter(|l| l.starts_with("Linked"))
            .cloned()
    })
    .await;
    assert_eq!(
        last,
        format!("Linked: session alice is logged in as {phone}")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_can_come_from_the_gateways_data_directory() {
    let server = TestServer::start_with(|c| c.api_token = None).await;
    let table = cli(&server, Via::DataDir, "sessions list").await.ok();
    assert_eq!(table, "(none)\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_exit_non_zero_with_the_reason_on_stderr() {
    let server = TestServer::start().await;
    let wrong = cli(&server, Via::Token("wrong"), "sessions list").await;
    assert_eq!(wrong.code, 1, "{wrong:?}");
    assert!(wrong.stderr.contains("401 unauthorized"), "{wrong:?}");
    assert!(wrong.stdout.is_empty(), "{wrong:?}");

    let missing = cli(
        &server,
        Via::Env,
        "send text nobody --to +15550002222 --text hi",
    )
    .await;
    assert_eq!(missing.code, 1, "{missing:?}");
    assert!(
        missing.stderr.contains("404 session_not_found"),
        "{missing:?}"
    );

    let no_file = cli(&server, Via::Env, "plugins load /no/such/file.wasm").await;
    assert_eq!(no_file.code, 2, "bad input: {no_file:?}");
    assert!(no_file.stderr.contains("/no/such/file.wasm"), "{no_file:?}");

    // Port 1 on loopback: nothing listens there.
    let unreachable = cli(&server, Via::Url("http://127.0.0.1:1"), "sessions list").await;
    assert_eq!(
        unreachable.code, 3,
        "an unreachable gateway: {unreachable:?}"
    );
    assert!(
        unreachable.stderr.contains("could not reach"),
        "{unreachable:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_text_reaches_the_sim_outbox() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let out = cli(
        &server,
        Via::Flags,
        "send text s --to +15550002222 --text hi-from-the-cli",
    )
    .await
    .ok();
    let outbox = server
        .get("/api/v1/sim/sessions/s/outbox")
        .await
        .expect(200);
    assert_eq!(outbox["count"], 1, "{outbox}");
    let sent = &outbox["messages"][0];
    assert_eq!(sent["body"]["text"], "hi-from-the-cli");
    let id = sent["message_id"].as_str().unwrap();
    let to = sent["to"].as_str().unwrap();
    assert_eq!(out, format!("sent {id} to {to}\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_list_dlq_and_replay_a_dead_lettered_delivery() {
    let server = TestServer::start_with(|c| c.webhooks.max_attempts = 1).await;
    server.paired_session("s").await;
    let receiver = TestReceiver::start().await;
    receiver.set(Respond::Status(500));
    let hook = add_webhook(
        &server,
        "s",
        json!({ "url": receiver.url(), "events": ["message"] }),
    )
    .await;

    let table = cli(&server, Via::Env, "webhooks list s").await.ok();
    let hook_id = hook["id"].as_str().unwrap();
    assert_eq!(
        row(&table, hook_id)[1..],
        [receiver.url(), "message".into(), "true".into()]
    );

    inbound(&server, "s", "lost at first").await;
    let entry = wait_for_dlq(&server, "s", 1).await.remove(0);
    let entry_id = entry["id"].as_str().unwrap();
    let table = cli(&server, Via::Flags, "webhooks dlq s").await.ok();
    let cells = row(&table, entry_id);
    assert_eq!(
        cells[1..3],
        ["message".to_owned(), receiver.url()],
        "{table}"
    );

    receiver.set(Respond::Ok);
    let out = cli(&server, Via::Env, &format!("webhooks replay s {entry_id}"))
        .await
        .ok();
    assert!(out.starts_with(&format!("entry {entry_id}: ")), "{out}");
    let got = receiver.wait_for(2).await;
    assert_eq!(got[1].body, got[0].body, "the same delivery again");
    assert!(dlq(&server, "s").await.is_empty());
    let table = cli(&server, Via::Env, "webhooks dlq s").await.ok();
    assert_eq!(table, "(none)\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blasts_create_follows_a_recipients_file_to_completion() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("recipients.csv");
    std::fs::write(
        &file,
        "phone,name\n# the team\n4930000001,Ann\n4930000002,Bo\n\n4930000003,Cy\n",
    )
    .unwrap();
    let out = cli(
        &server,
        Via::Env,
        &format!("blasts create s --recipients-file {} --text hello-all --delay-ms 0 --jitter-ms 0 --poll-ms 50", file.display()),
    )
    .await
    .ok();
    let (head, tail) = out
        .trim_end()
        .split_once(" completed: ")
        .unwrap_or_else(|| panic!("{out}"));
    assert!(head.starts_with("blast "), "{out}");
    assert_eq!(
        tail,
        "3 sent, 0 dead-lettered, 0 failed attempts, 0 skipped as duplicates"
    );
    let job_id = head.trim_start_matches("blast ");
    let job = server
        .get(&format!("/api/v1/sessions/s/blasts/{job_id}"))
        .await
        .expect(200);
    assert_eq!(job["status"], "completed", "{job}");
    let outbox = server
        .get("/api/v1/sim/sessions/s/outbox")
        .await
        .expect(200);
    let mut to: Vec<&str> = outbox["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["to"].as_str().unwrap())
        .collect();
    to.sort();
    assert_eq!(
        to,
        [
            "4930000001@s.whatsapp.net",
            "4930000002@s.whatsapp.net",
            "4930000003@s.whatsapp.net"
        ]
    );
    assert!(
        outbox["messages"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["body"]["text"] == "hello-all")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plugins_load_list_and_remove_a_compiled_component() {
    let server = TestServer::start().await;
    // A copy under a path without spaces (the command line is split on them).
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("footer.wasm");
    std::fs::write(&file, plugins::bytes(plugins::FOOTER)).unwrap();
    let line = format!("plugins load {} --name cli-footer", file.display());
    let out = cli(&server, Via::Flags, &line).await.ok();
    let id = out
        .trim_end()
        .rsplit_once(", id ")
        .map(|(_, id)| id.to_owned())
        .unwrap_or_else(|| panic!("no id in {out}"));
    assert!(out.starts_with("loaded plugin cli-footer "), "{out}");
    let plugin = server
        .get(&format!("/api/v1/plugins/{id}"))
        .await
        .expect(200);
    assert_eq!(plugin["name"], "cli-footer", "{plugin}");

    let table = cli(&server, Via::Env, "plugins list").await.ok();
    let cells = row(&table, &id);
    assert_eq!(cells[1], "cli-footer", "{table}");
    assert_eq!(cells[2], plugin["version"].as_str().unwrap(), "{table}");
    assert_eq!(cells[5..], ["0", "0", "0"], "no calls yet: {table}");

    let out = cli(&server, Via::Env, &format!("plugins remove {id}"))
        .await
        .ok();
    assert_eq!(out, format!("removed plugin {id}\n"));
    server
        .get(&format!("/api/v1/plugins/{id}"))
        .await
        .expect(404);
    let table = cli(&server, Via::Flags, "plugins list").await.ok();
    assert_eq!(table, "(none)\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nats_status_says_what_the_broker_does_or_that_there_is_none() {
    let plain = TestServer::start().await;
    let out = cli(&plain, Via::Flags, "nats status").await.ok();
    assert!(out.contains("NATS is not configured"), "{out}");

    let nats = switchboard_tests::nats::NatsServer::start().await;
    let url = nats.url();
    let server = TestServer::start_with(move |c| c.nats.servers = vec![url]).await;
    server.paired_session("s").await;
    let out = eventually("the broker's streams to be set up", || async {
        let out = cli(&server, Via::Flags, "nats status").await.ok();
        (out.contains("NATS: connected") && out.contains("SWITCHBOARD_SEND")).then_some(out)
    })
    .await;
    assert_eq!(
        row(&out, "SWITCHBOARD_EVENTS")[1..],
        [
            "events",
            "switchboard.events.> switchboard.results.>",
            "created"
        ],
        "{out}"
    );
    assert!(out.contains("events out: "), "{out}");
    assert!(out.contains("sends in: 0 delivered"), "{out}");
    let json = cli(&server, Via::Flags, "nats status --json").await.ok();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["configured"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_are_minted_listed_and_revoked_from_the_command_line() {
    let server = TestServer::start().await;
    server.create_session("crm").await;
    let minted = cli(
        &server,
        Via::Flags,
        "tokens mint crm-bridge --session crm --scope read send --rate-per-minute 600",
    )
    .await
    .ok();
    assert!(
        minted.contains("minted token crm-bridge")
            && minted.contains("sessions crm with scopes read,send"),
        "{minted}"
    );
    let secret = minted
        .lines()
        .find(|l| l.starts_with("sbt_"))
        .unwrap_or_else(|| panic!("a secret line in:\n{minted}"))
        .trim()
        .to_owned();
    let works = server
        .http()
        .get(format!("{}/api/v1/sessions/crm", server.base()))
        .bearer_auth(&secret)
        .send()
        .await
        .unwrap();
    assert_eq!(works.status().as_u16(), 200);

    let listed = cli(&server, Via::Flags, "tokens list").await.ok();
    assert!(!listed.contains(&secret), "the secret is never listed");
    let id = {
        let line = listed
            .lines()
            .find(|l| l.contains("crm-bridge"))
            .unwrap_or_else(|| panic!("crm-bridge in:\n{listed}"));
        line.split_whitespace().next().unwrap().to_owned()
    };
    let r = row(&listed, &id);
    assert_eq!(r[1], "crm-bridge");
    assert_eq!(r[3], "crm");
    assert_eq!(r[4], "read,send");
    assert_eq!(r[5], "active");

    let revoked = cli(&server, Via::Flags, &format!("tokens revoke {id}"))
        .await
        .ok();
    assert!(revoked.contains("token `crm-bridge` revoked"), "{revoked}");
    let refused = server
        .http()
        .get(format!("{}/api/v1/sessions/crm", server.base()))
        .bearer_auth(&secret)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status().as_u16(), 401);

    // `*` names every session.
    let every = cli(
        &server,
        Via::Flags,
        "tokens mint ops --session * --scope read",
    )
    .await
    .ok();
    assert!(every.contains("for sessions * with scopes read"), "{every}");
}
