//! The README, run as written: its first command starts the real binary in
//! a fresh directory with nothing configured, and its "Five minutes with the
//! simulated network" walkthrough runs, block by block, in bash against that
//! binary. Both read README.md itself, so they follow it when it changes.

use std::process::Stdio;

use serde_json::Value;
use switchboard_tests::readme::{self, Step};
use switchboard_tests::walkthrough::{Shell, check, serve_command, start_as_written};
use tokio::process::Command;

use crate::BINARY;

const README: &str = include_str!("../../README.md");

fn section_steps(title: &str) -> Vec<Step> {
    let body = readme::section(README, title);
    let offset = README.find(body).expect("the section is in the README");
    let first_line = README[..offset].lines().count() + 1;
    readme::steps(body, first_line)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_command_serves_from_a_fresh_directory_with_nothing_configured() {
    let steps = section_steps("Set up");
    let (env, args) = serve_command(&steps);
    assert!(
        env.is_empty(),
        "the first command sets no variables: {env:?}"
    );
    assert_eq!(args, ["serve"]);
    let cwd = tempfile::tempdir().unwrap();
    let gateway = start_as_written(BINARY, cwd.path(), &env, &args).await;

    let token_file = cwd.path().join("data/api-token");
    let token = std::fs::read_to_string(&token_file).expect("./data/api-token was written");
    let token = token.trim().to_owned();
    assert_eq!(token.len(), 64, "{token}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&token_file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "owner-only");
    }
    let printed = format!("{}\n{}", gateway.stdout.text(), gateway.stderr.text());
    assert_eq!(
        printed.matches(&token).count(),
        1,
        "printed once:\n{printed}"
    );
    let data_dir = cwd.path().canonicalize().unwrap().join("data");
    assert!(
        gateway
            .stdout
            .all()
            .iter()
            .any(|l| l.contains("using the data directory")
                && l.contains(&data_dir.display().to_string())),
        "the resolved data directory is logged:\n{}",
        gateway.stdout.text()
    );

    let http = switchboard_tests::http_client();
    for path in ["/livez", "/readyz"] {
        let r = http.get(format!("{}{path}", gateway.base)).send().await;
        assert_eq!(r.unwrap().status(), 200, "{path}");
    }
    let r = http
        .get(format!("{}/api/v1/sessions", gateway.base))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200, "the printed token opens the API");
    assert!(
        cwd.path().join("data/plugin-cache").is_dir(),
        "the plugin engine's cache lives in the data directory"
    );
    gateway.stop().await;

    let again = start_as_written(BINARY, cwd.path(), &env, &args).await;
    let printed = format!("{}\n{}", again.stdout.text(), again.stderr.text());
    assert!(
        !printed.contains(&token),
        "a later start reads the token without printing it:\n{printed}"
    );
    again.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_data_directory_that_cannot_be_created_stops_the_start_with_its_path_and_option() {
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(cwd.path().join("taken"), b"a file").unwrap();
    let out = Command::new(BINARY)
        .env_clear()
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--data-dir",
            "taken/data",
        ])
        .current_dir(cwd.path())
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let want = cwd.path().canonicalize().unwrap().join("taken/data");
    assert!(
        stderr.contains(&want.display().to_string())
            && stderr.contains("--data-dir / SWITCHBOARD_DATA_DIR")
            && stderr.contains("cannot be created"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_five_minute_walkthrough_runs_as_written() {
    let title = "Five minutes with the simulated network";
    let steps = section_steps(title);
    let (env, args) = serve_command(&steps);
    let cwd = tempfile::tempdir().unwrap();
    let gateway = start_as_written(BINARY, cwd.path(), &env, &args).await;
    let mut shell = Shell::start(cwd.path(), &gateway.base).await;
    let mut answers: Vec<Value> = Vec::new();
    let mut calls = 0;
    for step in steps.iter().filter(|s| !s.command.contains("cargo run")) {
        let mut command = step.command.clone();
        for (placeholder, field) in readme::placeholders(&command) {
            let value = answers
                .iter()
                .rev()
                .find_map(|a| a.get(&field).and_then(Value::as_str))
                .unwrap_or_else(|| {
                    panic!(
                        "README.md line {}: no earlier answer has `{field}` for {placeholder}",
                        step.line
                    )
                });
            command = command.replace(&placeholder, value);
        }
        let ran = shell.run(&command).await;
        if ran.status.is_some() {
            calls += 1;
        }
        if let Some(body) = check("README.md", step, &ran) {
            answers.push(body);
        }
    }
    assert!(calls >= 20, "the walkthrough made {calls} API calls");
    // Both sessions the walkthrough paired are still logged in at its end.
    let http = switchboard_tests::http_client();
    let token = std::fs::read_to_string(cwd.path().join("data/api-token")).unwrap();
    for id in ["alice", "bob"] {
        let s: Value = http
            .get(format!("{}/api/v1/sessions/{id}/status", gateway.base))
            .bearer_auth(token.trim())
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(s["status"], "logged_in", "{id}: {s}");
    }
    drop(shell.stdin);
    let _ = shell.child.wait().await;
    gateway.stop().await;
}
