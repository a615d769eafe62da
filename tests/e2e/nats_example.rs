//! The Python examples in `examples/nats-python`, run as a user would
//! against a real `nats-server -js` and gateway, with the `nats-py` package
//! (installed by the test into `target/nats-py-venv`): `send.py` sends a
//! command and prints its result; `consume.py` reads the events it caused.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use switchboard_tests::nats::NatsServer;
use switchboard_tests::process::Lines;
use switchboard_tests::venv::{venv_with, workspace_root};
use switchboard_tests::{TestServer, eventually};
use tokio::process::Command;

/// The `nats-py` release the examples are run with.
const NATS_PY: &str = "2.16.0";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_examples_send_a_command_and_read_the_events_of_the_session() {
    let python = tokio::task::spawn_blocking(|| {
        venv_with("nats-py-venv", "nats-py", NATS_PY)
            .join("bin")
            .join("python")
    })
    .await
    .unwrap();
    let examples = workspace_root().join("examples").join("nats-python");
    let nats = NatsServer::start().await;
    let url = nats.url();
    let server = TestServer::start_with({
        let url = url.clone();
        move |c| c.nats.servers = vec![url]
    })
    .await;
    eventually("the broker to be ready", || async {
        (server.get("/readyz").await.body["checks"]["nats"] == "ok").then_some(())
    })
    .await;
    server.paired_session("shop").await;

    let sent = Command::new(&python)
        .arg(examples.join("send.py"))
        .args([
            url.as_str(),
            "shop",
            "4940000001",
            "hello from python",
            "ex-1",
        ])
        .output()
        .await
        .expect("send.py runs");
    let stdout = String::from_utf8_lossy(&sent.stdout);
    assert!(
        sent.status.success(),
        "send.py: {}\n{stdout}\n{}",
        sent.status,
        String::from_utf8_lossy(&sent.stderr)
    );
    let result: Value = serde_json::from_str(&stdout).expect("send.py prints the result");
    assert_eq!(result["ok"], true, "{result}");
    assert_eq!(result["request_id"], "ex-1");
    let outbox = server
        .get("/api/v1/sim/sessions/shop/outbox")
        .await
        .expect(200);
    assert!(
        outbox["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["message_id"] == result["message_id"]),
        "{outbox}"
    );

    server
        .post(
            "/api/v1/sim/sessions/shop/inbound",
            json!({ "from": "15550001111", "text": "a customer writes" }),
        )
        .await
        .expect(200);
    let mut consumer = Command::new(&python)
        .arg(examples.join("consume.py"))
        .args([url.as_str(), "example-test"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("consume.py runs");
    let lines = Lines::collect(consumer.stdout.take().unwrap());
    let errors = Lines::collect(consumer.stderr.take().unwrap());
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        // "<seq> <session> <event>", one line per event.
        if lines.all().iter().any(|l| l.ends_with(" shop message")) {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "consume.py printed no message event:\n{}\n{}",
            lines.text(),
            errors.text()
        );
        // Polls what the script printed, with the deadline above.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        lines.all().iter().any(|l| l.ends_with(" shop connected")),
        "{}",
        lines.text()
    );
    consumer.kill().await.unwrap();
}
