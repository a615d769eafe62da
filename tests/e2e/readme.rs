//! The README, run as written: its first command starts the real binary in
//! a fresh directory with nothing configured, and its "Five minutes with the
//! simulated network" walkthrough runs, block by block, in bash against that
//! binary. Both read README.md itself, so they follow it when it changes.

use std::process::Stdio;

use serde_json::Value;
use switchboard_tests::process::GatewayProcess;
use switchboard_tests::readme::{self, Expectation, Step};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

use crate::BINARY;

const README: &str = include_str!("../../README.md");

/// The command that starts the gateway in a README block, split into the
/// environment assignments before it and the arguments after `--`.
fn serve_command(steps: &[Step]) -> (Vec<(String, String)>, Vec<String>) {
    let step = steps
        .iter()
        .find(|s| s.command.contains("cargo run --release -- serve"))
        .expect("a block that starts the gateway with `cargo run --release -- serve`");
    let mut words = step.command.split_whitespace().peekable();
    let mut env = Vec::new();
    while let Some((k, v)) = words.peek().and_then(|w| w.split_once('=')) {
        env.push((k.to_owned(), v.to_owned()));
        words.next();
    }
    let rest: Vec<&str> = words.collect();
    assert_eq!(
        rest[..4],
        ["cargo", "run", "--release", "--"],
        "{}",
        step.command
    );
    (env, rest[4..].iter().map(|w| (*w).to_owned()).collect())
}

/// The binary started as the README's command says, in `cwd`, with no
/// environment but `env`, listening on a free port.
async fn start_as_written(
    cwd: &std::path::Path,
    env: &[(String, String)],
    args: &[String],
) -> GatewayProcess {
    let mut cmd = Command::new(BINARY);
    cmd.env_clear()
        .envs(env.iter().cloned())
        .args(args)
        .args(["--listen", "127.0.0.1:0"])
        .current_dir(cwd);
    GatewayProcess::start(cmd).await
}

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
    let gateway = start_as_written(cwd.path(), &env, &args).await;

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

    let again = start_as_written(cwd.path(), &env, &args).await;
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

/// A bash that runs one step at a time and says where each ends.
struct Shell {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    stdout: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

/// What one step printed: its output, and curl's status when it called curl.
struct Ran {
    exit: i32,
    output: String,
    status: Option<u16>,
}

impl Shell {
    /// bash in `cwd`, with curl set (through `CURL_HOME`) to print each
    /// answer's status after its body.
    async fn start(cwd: &std::path::Path, base: &str) -> Shell {
        let home = cwd.join("home");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(
            home.join(".curlrc"),
            "write-out = \"\\n@@status %{http_code}\\n\"\n",
        )
        .unwrap();
        let mut child = Command::new("bash")
            .args(["--noprofile", "--norc"])
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("CURL_HOME", &home)
            .env("LANG", "C.UTF-8")
            .env("SWITCHBOARD_URL", base)
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("bash runs");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut shell = Shell {
            child,
            stdin,
            stdout,
        };
        // As in an interactive shell: the README's alias works, and errors
        // show beside the output they belong to.
        let ran = shell.run("shopt -s expand_aliases; exec 2>&1").await;
        assert_eq!(ran.exit, 0, "{}", ran.output);
        shell
    }

    async fn run(&mut self, command: &str) -> Ran {
        let script = format!("{command}\nprintf '\\n@@end %d\\n' $?\n");
        self.stdin.write_all(script.as_bytes()).await.unwrap();
        self.stdin.flush().await.unwrap();
        let mut output = Vec::new();
        let mut status = None;
        loop {
            let line =
                tokio::time::timeout(std::time::Duration::from_secs(60), self.stdout.next_line())
                    .await
                    .unwrap_or_else(|_| panic!("`{command}` did not finish: {output:?}"))
                    .unwrap()
                    .unwrap_or_else(|| panic!("bash ended during `{command}`: {output:?}"));
            if let Some(code) = line.strip_prefix("@@end ") {
                return Ran {
                    exit: code.trim().parse().unwrap(),
                    output: output.join("\n").trim().to_owned(),
                    status,
                };
            }
            if let Some(code) = line.strip_prefix("@@status ") {
                status = code.trim().parse().ok();
                continue;
            }
            output.push(line);
        }
    }
}

/// Checks a step's answer against its comment; the answer's JSON when it is JSON.
#[track_caller]
fn check(step: &Step, ran: &Ran) -> Option<Value> {
    let at = format!("README.md line {}: `{}`", step.line, step.command);
    assert_eq!(ran.exit, 0, "{at} exited {}: {}", ran.exit, ran.output);
    let expected = Expectation::parse(&step.comment);
    let Some(status) = ran.status else {
        assert!(
            expected.status.is_none() && expected.fields.is_empty(),
            "{at}: its comment describes an answer, but it made no HTTP call"
        );
        return None;
    };
    let body: Value = serde_json::from_str(&ran.output).unwrap_or(Value::Null);
    match expected.status {
        Some(want) => assert_eq!(status, want, "{at} answered {}", ran.output),
        None => assert!(
            (200..300).contains(&status),
            "{at} answered {status} {}",
            ran.output
        ),
    }
    if let Some(code) = &expected.error_code {
        assert_eq!(body["error"]["code"], code.as_str(), "{at}: {}", ran.output);
    }
    for (field, value) in &expected.fields {
        let got = body.get(field).unwrap_or_else(|| {
            panic!("{at}: the comment names `{field}`, the answer lacks it: {body}")
        });
        if let Some(value) = value {
            assert_eq!(got, value, "{at}: `{field}` in {body}");
        }
    }
    Some(body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_five_minute_walkthrough_runs_as_written() {
    let title = "Five minutes with the simulated network";
    let steps = section_steps(title);
    let (env, args) = serve_command(&steps);
    let cwd = tempfile::tempdir().unwrap();
    let gateway = start_as_written(cwd.path(), &env, &args).await;
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
        if let Some(body) = check(step, &ran) {
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
