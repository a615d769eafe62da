//! The `standard` signature scheme (Standard Webhooks), checked by a real
//! receiver: `tests/support/standard_webhooks_receiver.py`, which verifies
//! every delivery with the `standardwebhooks` package from PyPI (installed
//! by the test itself into a venv under `target/`), not with anything of
//! Switchboard's. Also the registration rules of `signature_scheme`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Value, json};
use switchboard_tests::process::Lines;
use switchboard_tests::receiver::{
    Received, Respond, TestReceiver, add_webhook, dlq, inbound, ms, wait_for_dlq, wait_until_idle,
};
use switchboard_tests::venv::{venv_with, workspace_root};
use switchboard_tests::{TestServer, eventually};
use tokio::process::{Child, Command};

const HOOKS: &str = "/api/v1/sessions/s/webhooks";

/// The `standardwebhooks` release the receiver verifies with.
const STANDARDWEBHOOKS: &str = "1.1.0";

/// How long the receiver script may take to say it listens.
const START_PATIENCE: Duration = Duration::from_secs(30);

/// The Python of `target/standardwebhooks-venv`, with `standardwebhooks`
/// installed from PyPI.
fn python_with_standardwebhooks() -> PathBuf {
    venv_with(
        "standardwebhooks-venv",
        "standardwebhooks",
        STANDARDWEBHOOKS,
    )
    .join("bin")
    .join("python")
}

/// `tests/support/standard_webhooks_receiver.py`, running; killed when dropped.
struct StandardReceiver {
    _child: Child,
    stderr: Lines,
    base: String,
    http: reqwest::Client,
}

impl StandardReceiver {
    async fn start() -> StandardReceiver {
        let python = tokio::task::spawn_blocking(python_with_standardwebhooks)
            .await
            .expect("the venv is ready");
        let script = workspace_root()
            .join("tests")
            .join("support")
            .join("standard_webhooks_receiver.py");
        let mut child = Command::new(python)
            .arg(script)
            .env_remove("PYTHONPATH")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the receiver script starts");
        let stdout = Lines::collect(child.stdout.take().expect("piped stdout"));
        let stderr = Lines::collect(child.stderr.take().expect("piped stderr"));
        let deadline = tokio::time::Instant::now() + START_PATIENCE;
        let base = loop {
            let said = stdout.all().iter().find_map(|l| {
                l.strip_prefix("listening on ")
                    .map(|url| url.trim_end_matches('/').to_owned())
            });
            if let Some(base) = said {
                break base;
            }
            if let Ok(Some(status)) = child.try_wait() {
                // Not synchronisation: the start has failed either way; this
                // lets the reader collect stderr for the panic message.
                tokio::time::sleep(ms(100)).await;
                panic!(
                    "the receiver exited ({status}) before listening\nstderr:\n{}",
                    stderr.text()
                );
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the receiver did not say it listens\nstderr:\n{}",
                stderr.text()
            );
            // Polls its output, with the deadline above.
            tokio::time::sleep(ms(20)).await;
        };
        StandardReceiver {
            _child: child,
            stderr,
            base,
            http: switchboard_tests::http_client(),
        }
    }

    /// Where the gateway delivers.
    fn url(&self) -> String {
        format!("{}/hook", self.base)
    }

    /// Gives the receiver the secret to verify with.
    async fn set_secret(&self, secret: &str) {
        let resp = self
            .http
            .put(format!("{}/secret", self.base))
            .body(secret.to_owned())
            .send()
            .await
            .expect("PUT /secret");
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap_or_default();
        assert_eq!(status, 204, "the library takes the secret {secret}: {text}");
    }

    /// Every delivery it got, in arrival order.
    async fn results(&self) -> Vec<Value> {
        self.http
            .get(format!("{}/results", self.base))
            .send()
            .await
            .expect("GET /results")
            .json::<Vec<Value>>()
            .await
            .expect("the results are JSON")
    }

    /// Waits until it got at least `n` deliveries; returns all of them.
    async fn wait_for(&self, n: usize) -> Vec<Value> {
        eventually(&format!("{n} deliveries at {}", self.url()), || async {
            let got = self.results().await;
            (got.len() >= n).then_some(got)
        })
        .await
    }

    /// POSTs `body` with `headers` to it, as a delivery; returns the status.
    async fn post(&self, headers: &BTreeMap<String, String>, body: Vec<u8>) -> u16 {
        let mut req = self.http.post(self.url()).body(body);
        for (name, value) in headers {
            req = req.header(name, value);
        }
        req.send()
            .await
            .expect("POST to the receiver")
            .status()
            .as_u16()
    }
}

/// The headers of a delivery worth sending again: the signature's and the
/// gateway's own, and the content type (not the connection's).
fn delivery_headers(all: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    all.iter()
        .filter(|(name, _)| {
            name.starts_with("webhook-")
                || name.starts_with("x-webhook-")
                || name.as_str() == "content-type"
        })
        .map(|(n, v)| (n.clone(), v.clone()))
        .collect()
}

/// A recorded delivery's headers, by lowercased name.
fn headers_of(result: &Value) -> BTreeMap<String, String> {
    serde_json::from_value(result["headers"].clone()).expect("headers are a string map")
}

/// A recorded delivery's raw body.
fn body_of(result: &Value) -> Vec<u8> {
    BASE64
        .decode(result["body_b64"].as_str().expect("body_b64"))
        .expect("the body is base64")
}

#[track_caller]
fn assert_verified(result: &Value, stderr: &Lines) {
    assert_eq!(
        result["ok"],
        true,
        "standardwebhooks refused a delivery: {}\nreceiver stderr:\n{}",
        result["error"],
        stderr.text()
    );
}

/// Registers a `standard` webhook for `message` events at `url`; returns the answer.
async fn standard_hook(server: &TestServer, url: &str, secret: Option<&str>) -> Value {
    let mut body = json!({ "url": url, "events": ["message"], "signature_scheme": "standard" });
    if let Some(secret) = secret {
        body["secret"] = json!(secret);
    }
    add_webhook(server, "s", body).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_standard_delivery_verifies_with_the_standardwebhooks_package_and_a_tampered_one_is_refused()
 {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let rx = StandardReceiver::start().await;

    // No secret given: the gateway generates one and answers with it.
    let hook = standard_hook(&server, &rx.url(), None).await;
    assert_eq!(hook["signature_scheme"], "standard", "{hook}");
    let secret = hook["secret"].as_str().expect("a generated secret");
    assert!(secret.starts_with("whsec_"), "{secret}");
    rx.set_secret(secret).await;

    let texts = ["standard one", "standard two", "standard three"];
    for text in texts {
        inbound(&server, "s", text).await;
    }
    let got = rx.wait_for(texts.len()).await;
    let mut ids = Vec::new();
    for result in &got {
        assert_verified(result, &rx.stderr);
        let headers = headers_of(result);
        let id = headers.get("webhook-id").expect("a webhook-id");
        assert_eq!(
            headers.get("x-webhook-delivery-id"),
            Some(id),
            "webhook-id is the delivery id: {headers:?}"
        );
        assert_eq!(
            headers.get("x-webhook-event").map(String::as_str),
            Some("message")
        );
        assert!(
            headers
                .get("webhook-signature")
                .is_some_and(|s| s.starts_with("v1,")),
            "{headers:?}"
        );
        for gone in [
            "x-webhook-signature",
            "x-webhook-timestamp",
            "x-webhook-signature-version",
        ] {
            assert!(
                !headers.contains_key(gone),
                "no {gone} in the standard scheme: {headers:?}"
            );
        }
        assert_eq!(result["envelope"]["event"], "message", "{result}");
        assert_eq!(result["envelope"]["session_id"], "s", "{result}");
        ids.push(id.clone());
    }
    let mut sorted: Vec<String> = got
        .iter()
        .map(|r| {
            r["envelope"]["data"]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    sorted.sort();
    let mut expected: Vec<String> = texts.iter().map(|t| (*t).to_owned()).collect();
    expected.sort();
    assert_eq!(sorted, expected, "each message arrived once");
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), texts.len(), "one webhook-id per event");

    // The gateway counted the 204s as delivered: nothing retried, nothing dead.
    wait_until_idle(&server, "s", &rx.url()).await;
    assert_eq!(rx.results().await.len(), texts.len(), "no retries");
    assert!(dlq(&server, "s").await.is_empty());

    // The same delivery sent again verifies (headers copied faithfully)...
    let original = &got[0];
    let headers = delivery_headers(&headers_of(original));
    let body = body_of(original);
    assert_eq!(rx.post(&headers, body.clone()).await, 204);
    // ... and with one character of its body changed, it does not.
    let text = original["envelope"]["data"]["text"]
        .as_str()
        .expect("a text");
    let tampered = String::from_utf8(body)
        .expect("a UTF-8 body")
        .replacen(text, &text.to_uppercase(), 1)
        .into_bytes();
    assert_ne!(tampered, body_of(original));
    assert_eq!(
        rx.post(&headers, tampered).await,
        400,
        "a tampered body is refused"
    );
    let all = rx.results().await;
    let last = all.last().expect("the tampered delivery is recorded");
    assert_eq!(last["ok"], false, "{last}");
    assert!(
        last["error"]
            .as_str()
            .is_some_and(|e| e.contains("WebhookVerificationError")),
        "{last}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_standard_webhook_registered_with_its_own_whsec_secret_signs_with_that_secret() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let rx = StandardReceiver::start().await;
    let secret = format!("whsec_{}", BASE64.encode([0x5a_u8; 32]));
    rx.set_secret(&secret).await;
    let hook = standard_hook(&server, &rx.url(), Some(&secret)).await;
    assert_eq!(hook["secret"], secret.as_str(), "the given secret is kept");

    inbound(&server, "s", "own secret").await;
    let got = rx.wait_for(1).await;
    assert_verified(&got[0], &rx.stderr);
    assert_eq!(got[0]["envelope"]["data"]["text"], "own secret");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_id_stays_the_same_across_retries_and_a_dlq_replay_and_every_attempt_verifies() {
    let server = TestServer::start_with(|c| {
        c.webhooks.max_attempts = 2;
        c.webhooks.retry_delays = vec![ms(50)];
    })
    .await;
    server.paired_session("s").await;
    // Attempts land at a plain recording receiver first (two failures, then
    // the replay succeeds); each is then handed to the standardwebhooks one.
    let capture = TestReceiver::start().await;
    capture.push_answers([500, 500]);
    let hook = standard_hook(&server, &capture.url(), None).await;
    let secret = hook["secret"].as_str().expect("a generated secret");

    inbound(&server, "s", "retried").await;
    let entries = wait_for_dlq(&server, "s", 1).await;
    capture.set(Respond::Ok);
    server
        .post_empty(&format!(
            "/api/v1/sessions/s/webhooks/dlq/{}/replay",
            entries[0]["id"].as_str().expect("an entry id")
        ))
        .await
        .expect(200);
    let attempts: Vec<Received> = capture.wait_for(3).await;

    let first = attempts[0].header("webhook-id").expect("a webhook-id");
    for attempt in &attempts {
        assert_eq!(
            attempt.header("webhook-id"),
            Some(first),
            "the same id on every attempt"
        );
        assert_eq!(attempt.delivery_id(), first);
    }
    assert_eq!(
        entries[0]["delivery_id"], first,
        "the DLQ entry keeps it too"
    );

    let rx = StandardReceiver::start().await;
    rx.set_secret(secret).await;
    for attempt in &attempts {
        assert_eq!(
            rx.post(&delivery_headers(&attempt.headers), attempt.body.clone())
                .await,
            204,
            "the attempt verifies: {:?}",
            attempt.headers
        );
    }
    for result in rx.results().await {
        assert_verified(&result, &rx.stderr);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registration_names_signature_scheme_when_unknown_and_secret_when_it_is_no_whsec_key() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let url = "http://127.0.0.1:9/hook";

    for scheme in [json!("hmac"), json!("Standard"), json!(""), json!(1)] {
        let message = server
            .post(HOOKS, json!({ "url": url, "signature_scheme": scheme }))
            .await
            .expect_error(400, "invalid_field");
        assert!(message.contains("signature_scheme"), "{scheme}: {message}");
    }

    let short_key = format!("whsec_{}", BASE64.encode([1u8; 16]));
    for secret in ["s3cret", "whsec_", "whsec_not base64!", short_key.as_str()] {
        let message = server
            .post(
                HOOKS,
                json!({ "url": url, "signature_scheme": "standard", "secret": secret }),
            )
            .await
            .expect_error(400, "invalid_field");
        assert!(message.contains("`secret`"), "{secret}: {message}");
    }
    let list = server.get(HOOKS).await.expect(200);
    assert_eq!(list["count"], 0, "nothing refused was registered: {list}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scheme_defaults_to_switchboard_and_is_listed_and_kept_across_a_restart() {
    let mut server = TestServer::start().await;
    server.paired_session("s").await;
    let plain = add_webhook(&server, "s", json!({ "url": "http://127.0.0.1:9/plain" })).await;
    assert_eq!(plain["signature_scheme"], "switchboard", "{plain}");
    assert_eq!(plain["secret"], Value::Null, "{plain}");
    let explicit = add_webhook(
        &server,
        "s",
        json!({ "url": "http://127.0.0.1:9/v2", "secret": "s3cret", "signature_scheme": "switchboard" }),
    )
    .await;
    assert_eq!(explicit["signature_scheme"], "switchboard");
    assert_eq!(
        explicit["secret"], "s3cret",
        "a switchboard secret is any text"
    );
    let standard = add_webhook(
        &server,
        "s",
        json!({ "url": "http://127.0.0.1:9/std", "signature_scheme": "standard", "events": null }),
    )
    .await;
    let secret = standard["secret"].as_str().expect("a generated secret");
    let key = BASE64
        .decode(secret.strip_prefix("whsec_").expect("whsec_ prefix"))
        .expect("base64 after the prefix");
    assert_eq!(key.len(), 24, "{secret}");

    let scheme_of = |list: &Value, id: &Value| -> (Value, Value) {
        let hook = list["webhooks"]
            .as_array()
            .and_then(|all| all.iter().find(|h| &h["id"] == id))
            .unwrap_or_else(|| panic!("{id} is listed: {list}"));
        (hook["signature_scheme"].clone(), hook["secret"].clone())
    };
    server.restart().await;
    server.wait_for_status("s", "logged_in").await;
    let list = server.get(HOOKS).await.expect(200);
    assert_eq!(
        scheme_of(&list, &plain["id"]),
        (json!("switchboard"), Value::Null)
    );
    assert_eq!(
        scheme_of(&list, &explicit["id"]),
        (json!("switchboard"), json!("s3cret"))
    );
    assert_eq!(
        scheme_of(&list, &standard["id"]),
        (json!("standard"), json!(secret))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_switchboard_webhook_gets_the_v2_headers_and_none_of_the_standard_ones() {
    let server = TestServer::start().await;
    server.paired_session("s").await;
    let rx = TestReceiver::start().await;
    add_webhook(
        &server,
        "s",
        json!({ "url": rx.url(), "events": ["message"], "secret": "s3cret" }),
    )
    .await;
    inbound(&server, "s", "v2 still").await;
    let got = rx.wait_for(1).await.remove(0);
    assert_eq!(got.header("x-webhook-signature-version"), Some("v2"));
    assert!(switchboard_tests::receiver::verify_v2("s3cret", &got));
    for absent in ["webhook-id", "webhook-timestamp", "webhook-signature"] {
        assert_eq!(got.header(absent), None, "{absent}: {:?}", got.headers);
    }
}

/// The data's `message_id` of a recorded delivery.
fn message_id_of(result: &Value) -> String {
    let envelope: Value = serde_json::from_slice(&body_of(result)).expect("the body is JSON");
    envelope["data"]["message_id"]
        .as_str()
        .expect("a message event")
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standard_deliveries_owed_at_a_sigkill_verify_with_the_package_after_the_restart() {
    let dir = tempfile::tempdir().expect("a data directory");
    let start = || {
        let mut cmd = Command::new(crate::BINARY);
        cmd.env_clear()
            .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
            .arg(dir.path())
            .envs([
                ("API_TOKEN", switchboard_tests::TOKEN),
                ("SWITCHBOARD_NETWORK", "sim"),
                ("SWITCHBOARD_SIM_PAIR_DELAY_MS", "0"),
                ("WEBHOOK_ALLOW_PRIVATE", "true"),
                ("WEBHOOK_RETRY_DELAYS_SECS", "0.3"),
                ("WEBHOOK_RETRY_MAX_ATTEMPTS", "50"),
                ("WEBHOOK_SUSPEND_THRESHOLD", "1000000"),
            ]);
        switchboard_tests::process::GatewayProcess::start(cmd)
    };
    let http = switchboard_tests::http_client();
    let call = |base: &str, path: &str, body: Value| {
        http.post(format!("{base}{path}"))
            .bearer_auth(switchboard_tests::TOKEN)
            .json(&body)
            .send()
    };
    // The receiver knows no secret yet: it refuses every delivery (400,
    // retried), so every one is still owed when the gateway is killed.
    let rx = StandardReceiver::start().await;
    let gateway = start().await;
    let base = gateway.base.clone();
    let created = call(&base, "/api/v1/sessions", json!({ "id": "s" }))
        .await
        .unwrap();
    assert_eq!(created.status().as_u16(), 201);
    call(&base, "/api/v1/sessions/s/connect", json!({}))
        .await
        .unwrap();
    let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    let body = json!({ "url": rx.url(), "events": ["message"], "signature_scheme": "standard", "secret": secret });
    let registered = eventually("the session to take a webhook", || async {
        let r = call(&base, "/api/v1/sessions/s/webhooks", body.clone())
            .await
            .ok()?;
        (r.status().as_u16() == 201).then_some(())
    });
    registered.await;
    let mut owed = Vec::new();
    for n in 0..20 {
        let inject = || async {
            let r = call(
                &base,
                "/api/v1/sim/sessions/s/inbound",
                json!({ "from": "15550001111", "text": format!("owed {n}") }),
            )
            .await
            .ok()?;
            if r.status().as_u16() != 200 {
                return None;
            }
            let v: Value = r.json().await.ok()?;
            v["message_id"].as_str().map(str::to_owned)
        };
        owed.push(eventually("an injection answered", inject).await);
    }
    let refused = rx.wait_for(owed.len()).await;
    assert!(refused.iter().all(|r| r["ok"] == false));
    gateway.kill().await;

    rx.set_secret(secret).await;
    let _restarted = start().await;
    let results = eventually("every owed delivery verified after the restart", || async {
        let all = rx.results().await;
        let verified: Vec<String> = all
            .iter()
            .filter(|r| r["ok"] == true)
            .map(message_id_of)
            .collect();
        owed.iter().all(|id| verified.contains(id)).then_some(all)
    })
    .await;
    // Each event went under one webhook-id, before the kill and after it.
    let mut ids: BTreeMap<String, String> = BTreeMap::new();
    for r in &results {
        let id = r["webhook_id"].as_str().expect("a webhook-id").to_owned();
        let first = ids.entry(message_id_of(r)).or_insert_with(|| id.clone());
        assert_eq!(*first, id, "a redelivery keeps its webhook-id");
        if r["ok"] == true {
            assert_verified(r, &rx.stderr);
        }
    }
}
