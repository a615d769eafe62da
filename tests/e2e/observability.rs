//! Request ids on every answer, `/livez` and `/readyz` (with workers stopped
//! by hand), and the JSON logs of the real binary: `switchboard serve
//! --log-format json` as a subprocess, every line of its output parsed as
//! JSON, a request's lines carrying its id, no message body or token in them.

use std::process::Stdio;
use std::sync::{Arc, Mutex};

use reqwest::Method;
use serde_json::{Value, json};
use switchboard::Config;
use switchboard_tests::{TOKEN, TestServer, eventually};
use tokio::io::{AsyncBufReadExt, BufReader};

use switchboard_tests::assembled::Assembled;

/// The binary built from the host's `main.rs` (see tests/Cargo.toml).
const BINARY: &str = env!("CARGO_BIN_EXE_switchboard-e2e");

/// The `x-request-id` of an answer; panics when there is none.
#[track_caller]
fn request_id(resp: &reqwest::Response) -> String {
    let value = resp.headers().get("x-request-id");
    let value = value.unwrap_or_else(|| panic!("no x-request-id on the answer to {}", resp.url()));
    value.to_str().expect("a visible ASCII id").to_owned()
}

fn is_uuid(s: &str) -> bool {
    switchboard_tests::receiver::is_uuid(s)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_carries_a_fresh_request_id() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::new(dir.path());
    config.listen = "127.0.0.1:0".parse().unwrap();
    config.metrics_listen = Some("127.0.0.1:0".parse().unwrap());
    config.api_token = Some(TOKEN.into());
    config.max_body_bytes = 1024;
    let running = switchboard::start(config).await.expect("server starts");
    let base = running.base_url();
    let metrics = format!("http://{}", running.metrics_addr().unwrap());
    let http = switchboard_tests::http_client();
    let big = "x".repeat(4096);
    // (method, URL, body, status); every answer needs a fresh id.
    let mut cases: Vec<(&str, String, &str, u16)> = [
        ("GET", "/livez", "", 200),
        ("GET", "/api/v1/sessions", "", 200),
        ("GET", "/api/v1/sessions/nobody", "", 404),
        ("GET", "/no/such/route", "", 404),
        ("DELETE", "/livez", "", 405),
        ("POST", "/api/v1/sessions", "{not json", 400),
        ("POST", "/api/v1/sessions", big.as_str(), 413),
        ("GET", "/docs", "", 200),
    ]
    .into_iter()
    .map(|(m, path, body, status)| (m, format!("{base}{path}"), body, status))
    .collect();
    cases.push(("GET", format!("{metrics}/metrics"), "", 200));
    cases.push(("GET", format!("{metrics}/elsewhere"), "", 404));
    let mut seen = std::collections::BTreeSet::new();
    for (method, url, body, status) in cases {
        let mut req = http
            .request(Method::from_bytes(method.as_bytes()).unwrap(), &url)
            .bearer_auth(TOKEN);
        if !body.is_empty() {
            req = req
                .header("content-type", "application/json")
                .body(body.to_owned());
        }
        let resp = req.send().await.unwrap();
        assert_eq!(resp.status(), status, "{method} {url}");
        let id = request_id(&resp);
        assert!(is_uuid(&id), "{method} {url}: {id}");
        assert!(seen.insert(id), "{method} {url}: a request id was reused");
    }
    let refused = http
        .get(format!("{base}/api/v1/sessions"))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
    assert!(is_uuid(&request_id(&refused)), "a refusal has one too");
    running.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sensible_caller_request_id_is_echoed_and_an_odd_one_replaced() {
    let server = TestServer::start().await;
    let with_id = |id: String| {
        server
            .http()
            .get(format!("{}/api/v1/sessions", server.base()))
            .bearer_auth(TOKEN)
            .header("x-request-id", id)
            .send()
    };
    let resp = with_id("trace-42.a:b_c".into()).await.unwrap();
    assert_eq!(request_id(&resp), "trace-42.a:b_c");
    for odd in ["has space".to_owned(), "x".repeat(129)] {
        let resp = with_id(odd.clone()).await.unwrap();
        let id = request_id(&resp);
        assert!(is_uuid(&id), "`{odd}` is replaced by a fresh id, got {id}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn livez_and_readyz_answer_without_a_token_while_all_is_well() {
    let server = TestServer::start().await;
    let get = |path: &str| {
        let url = format!("{}{path}", server.base());
        async move { TestServer::read(reqwest::get(url).await.unwrap()).await }
    };
    assert_eq!(get("/livez").await.expect(200), json!({ "status": "ok" }));
    let ready = get("/readyz").await.expect(200);
    assert_eq!(ready["status"], "ready", "{ready}");
    let checks = ready["checks"].as_object().expect("checks");
    let names: Vec<&str> = checks.keys().map(String::as_str).collect();
    for name in ["store", "blast_worker", "scheduler", "webhook_workers"] {
        assert!(names.contains(&name), "{name} in {ready}");
    }
    assert!(checks.values().all(|v| v == "ok"), "{ready}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_is_unavailable_while_a_background_worker_is_not_running() {
    let app = Assembled::new(true).await;
    let base = app.serve().await;
    let get = |path: &str| {
        let url = format!("{base}{path}");
        async move { TestServer::read(reqwest::get(url).await.unwrap()).await }
    };
    // The scheduler is not started yet.
    let body = get("/readyz").await.expect(503);
    assert_eq!(body["status"], "unavailable", "{body}");
    assert_eq!(body["reason"], "scheduler", "{body}");
    assert_eq!(body["checks"]["scheduler"], "down", "{body}");
    assert_eq!(body["checks"]["blast_worker"], "ok", "{body}");

    app.gateway.start_workers();
    eventually("ready once the scheduler runs", || async {
        (get("/readyz").await.status == 200).then_some(())
    })
    .await;

    app.gateway.stop_workers().await;
    let body = get("/readyz").await.expect(503);
    assert_eq!(
        body["reason"], "blast_worker",
        "the first failing check: {body}"
    );
    assert_eq!(body["checks"]["scheduler"], "down", "{body}");
    assert_eq!(
        get("/livez").await.expect(200)["status"],
        "ok",
        "still alive"
    );
}

/// The output lines of a child process, collected as they come.
type Lines = Arc<Mutex<Vec<String>>>;

fn collect(stream: impl tokio::io::AsyncRead + Unpin + Send + 'static) -> Lines {
    let lines: Lines = Arc::default();
    let sink = lines.clone();
    tokio::spawn(async move {
        let mut reader = BufReader::new(stream).lines();
        while let Ok(Some(line)) = reader.next_line().await {
            sink.lock().unwrap().push(line);
        }
    });
    lines
}

fn parsed(lines: &Lines) -> Vec<Value> {
    lines
        .lock()
        .unwrap()
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}")))
        .collect()
}

/// Whether a log line was written inside the request with this id.
fn in_request(line: &Value, id: &str) -> bool {
    line["span"]["request_id"] == id
        || line["spans"]
            .as_array()
            .is_some_and(|s| s.iter().any(|span| span["request_id"] == id))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_logs_are_one_object_per_line_and_carry_the_request_id() {
    let dir = tempfile::tempdir().unwrap();
    let secret_text = "the launch code is 0451-zebra";
    let mut child = tokio::process::Command::new(BINARY)
        .args(["serve", "--log-format", "json", "--log-level", "info"])
        .args([
            "--listen",
            "127.0.0.1:0",
            "--sim-pair-delay-ms",
            "0",
            "--network",
            "sim",
        ])
        .arg("--data-dir")
        .arg(dir.path())
        .env("API_TOKEN", TOKEN)
        .env_remove("SWITCHBOARD_LOG")
        .env_remove("SWITCHBOARD_LOG_FORMAT")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the binary starts");
    let stdout = collect(child.stdout.take().unwrap());
    let stderr = collect(child.stderr.take().unwrap());
    let addr = eventually("the listening line", || async {
        parsed(&stdout)
            .iter()
            .find(|l| l["message"] == "switchboard listening")
            .map(|l| l["addr"].as_str().expect("addr").to_owned())
    })
    .await;
    let base = format!("http://{addr}");
    // The gateway runs in a child process: nothing in this one has installed
    // the TLS crypto provider a reqwest client needs yet.
    switchboard::install_crypto_provider();
    let http = switchboard_tests::http_client();
    let call = |method: Method, path: &str, id: &str, body: Value| {
        http.request(method, format!("{base}{path}"))
            .bearer_auth(TOKEN)
            .header("x-request-id", id)
            .json(&body)
            .send()
    };
    let created = call(
        Method::POST,
        "/api/v1/sessions",
        "req-create-1",
        json!({ "id": "s" }),
    );
    assert_eq!(created.await.unwrap().status(), 201);
    let connect = call(
        Method::POST,
        "/api/v1/sessions/s/connect",
        "req-connect-1",
        json!({}),
    );
    assert_eq!(connect.await.unwrap().status(), 200);
    eventually("the session paired", || async {
        let r = call(
            Method::GET,
            "/api/v1/sessions/s/status",
            "poll",
            Value::Null,
        )
        .await;
        let body: Value = r.unwrap().json().await.unwrap();
        (body["status"] == "logged_in").then_some(())
    })
    .await;
    let sent = call(
        Method::POST,
        "/api/v1/sessions/s/messages/text",
        "req-send-1",
        json!({ "to": "+15550002222", "text": secret_text }),
    );
    assert_eq!(sent.await.unwrap().status(), 200);

    let pid = child.id().expect("a running child").to_string();
    let term = tokio::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status();
    assert!(term.await.unwrap().success());
    let status = child.wait().await.unwrap();
    assert!(status.success(), "a graceful stop: {status}");
    let stopped = eventually("the output read to its end", || async {
        let lines = parsed(&stdout);
        lines
            .iter()
            .any(|l| l["message"] == "switchboard stopped")
            .then_some(lines)
    })
    .await;

    let mut all = stopped;
    all.extend(parsed(&stderr));
    for line in &all {
        for key in ["timestamp", "level", "message"] {
            assert!(line[key].is_string(), "`{key}` in {line}");
        }
        let text = line.to_string();
        assert!(
            !text.contains(secret_text) && !text.contains("0451-zebra"),
            "a body: {text}"
        );
        assert!(!text.contains(TOKEN), "the token: {text}");
    }
    let of = |id: &str, message: &str| {
        all.iter()
            .find(|l| l["message"] == message && in_request(l, id))
            .unwrap_or_else(|| panic!("no `{message}` line of request {id} in {all:#?}"))
            .clone()
    };
    let created = of("req-create-1", "session created");
    assert_eq!(created["session"], "s");
    assert_eq!(created["span"]["route"], "/api/v1/sessions", "{created}");
    let sent = of("req-send-1", "message sent");
    assert_eq!(sent["span"]["method"], "POST", "{sent}");
    assert!(
        !all.iter()
            .any(|l| l["message"] == "message sent" && in_request(l, "req-create-1")),
        "a line belongs to the request that wrote it"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sigterm_the_moment_the_gateway_says_it_listens_stops_it_gracefully() {
    // The signal handlers must be in place before the listening line: a
    // supervisor may stop the gateway as soon as it has seen it.
    for _ in 0..3 {
        let dir = tempfile::tempdir().unwrap();
        let mut cmd = tokio::process::Command::new(BINARY);
        cmd.args(["serve", "--listen", "127.0.0.1:0", "--network", "sim"])
            .arg("--data-dir")
            .arg(dir.path())
            .env("API_TOKEN", TOKEN);
        switchboard_tests::process::GatewayProcess::start(cmd)
            .await
            .stop()
            .await;
    }
}
