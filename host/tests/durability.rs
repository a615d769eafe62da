//! A send answered 200 survives `kill -9`: the gateway runs as a child
//! process (`switchboard serve`), many sends run concurrently (so the store
//! commits them in groups), the process is killed with SIGKILL while sends
//! are still in flight, and every send that had been answered 200 must be in
//! the store: the message record and the sim outbox entry.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use switchboard::store::Store;

const TOKEN: &str = "durability-token-0123456789";

/// The gateway child; killed (SIGKILL) when dropped.
struct Gateway(Child);

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

async fn call(
    http: &reqwest::Client,
    method: reqwest::Method,
    url: &str,
    body: Value,
) -> (u16, Value) {
    let resp = http
        .request(method, url)
        .bearer_auth(TOKEN)
        .json(&body)
        .send()
        .await
        .expect("request sent");
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

async fn eventually_ok(http: &reqwest::Client, url: &str, want: impl Fn(&Value) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(r) = http.get(url).bearer_auth(TOKEN).send().await
            && r.status().is_success()
            && want(&r.json().await.unwrap_or(Value::Null))
        {
            return;
        }
        assert!(Instant::now() < deadline, "{url} never became ready");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_send_answered_200_survives_kill_9() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let port = free_port();
    let base = format!("http://127.0.0.1:{port}/api/v1");
    let mut child = Gateway(
        Command::new(env!("CARGO_BIN_EXE_switchboard"))
            .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
            .arg("--data-dir")
            .arg(dir.path())
            .args([
                "--sim-pair-delay-ms",
                "0",
                "--log-level",
                "warn",
                "--network",
                "sim",
            ])
            .env("API_TOKEN", TOKEN)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the gateway binary starts"),
    );
    switchboard::install_crypto_provider();
    let http = reqwest::Client::new();
    eventually_ok(&http, &format!("http://127.0.0.1:{port}/livez"), |_| true).await;
    let (status, _) = call(
        &http,
        reqwest::Method::POST,
        &format!("{base}/sessions"),
        json!({ "id": "s" }),
    )
    .await;
    assert_eq!(status, 201);
    call(
        &http,
        reqwest::Method::POST,
        &format!("{base}/sessions/s/connect"),
        json!({}),
    )
    .await;
    eventually_ok(&http, &format!("{base}/sessions/s/status"), |v| {
        v["status"] == "logged_in"
    })
    .await;

    // 16 senders send as fast as they are answered; the answered ids are kept.
    let answered = Arc::new(Mutex::new(Vec::<String>::new()));
    let mut senders = Vec::new();
    for w in 0..16 {
        let (http, base, answered) = (http.clone(), base.clone(), answered.clone());
        senders.push(tokio::spawn(async move {
            for i in 0.. {
                let body = json!({ "to": format!("49151{w:02}{i:05}"), "text": format!("durable {w}/{i}") });
                let url = format!("{base}/sessions/s/messages/text");
                let Ok(resp) = http.post(&url).bearer_auth(TOKEN).json(&body).send().await else {
                    return; // the gateway is gone
                };
                if resp.status().as_u16() != 200 {
                    return;
                }
                let Ok(v) = resp.json::<Value>().await else { return };
                let id = v["message_id"].as_str().expect("a message id").to_owned();
                answered.lock().unwrap().push(id);
            }
        }));
    }
    // Kill in the middle of the traffic, once plenty has been answered.
    let deadline = Instant::now() + Duration::from_secs(30);
    while answered.lock().unwrap().len() < 300 {
        assert!(Instant::now() < deadline, "the sends did not get going");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    child.0.kill().expect("SIGKILL");
    let _ = child.0.wait();
    let answered: Vec<String> = answered.lock().unwrap().clone();
    for s in senders {
        let _ = s.await;
    }

    let store = Store::open(dir.path()).expect("the store opens after the kill");
    let messages: std::collections::HashSet<String> = store
        .list_messages("s", 0, usize::MAX)
        .expect("messages")
        .into_iter()
        .map(|m| m.message_id)
        .collect();
    let outbox: std::collections::HashSet<String> = store
        .list_outbox("s")
        .expect("outbox")
        .into_iter()
        .map(|e| e.message_id)
        .collect();
    assert!(answered.len() >= 300);
    for id in &answered {
        assert!(
            messages.contains(id),
            "send {id} was answered 200 but its record is lost"
        );
        assert!(
            outbox.contains(id),
            "send {id} was answered 200 but the network lost it"
        );
    }
}
