//! Running a documented shell walkthrough as written: the command that
//! starts the gateway, the real binary started that way, a bash that runs
//! the steps one by one, and each answer checked against its comment (the
//! conventions of `readme.rs`). The README's walkthrough and
//! docs/whatsapp.md's run through it.

use std::process::Stdio;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

use crate::process::GatewayProcess;
use crate::readme::{Expectation, Step};

/// The command that starts the gateway in a walkthrough block, split into the
/// environment assignments before it and the arguments after `--`.
pub fn serve_command(steps: &[Step]) -> (Vec<(String, String)>, Vec<String>) {
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

/// `binary` started as a walkthrough's command says, in `cwd`, with no
/// environment but `env`, listening on a free port.
pub async fn start_as_written(
    binary: &str,
    cwd: &std::path::Path,
    env: &[(String, String)],
    args: &[String],
) -> GatewayProcess {
    let mut cmd = Command::new(binary);
    cmd.env_clear()
        .envs(env.iter().cloned())
        .args(args)
        .args(["--listen", "127.0.0.1:0"])
        .current_dir(cwd);
    GatewayProcess::start(cmd).await
}

/// A bash that runs one step at a time and says where each ends.
pub struct Shell {
    /// The bash process.
    pub child: tokio::process::Child,
    /// Its input.
    pub stdin: tokio::process::ChildStdin,
    stdout: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

/// What one step printed: its output, and curl's status when it called curl.
pub struct Ran {
    /// The exit status.
    pub exit: i32,
    /// What it printed (without the status line).
    pub output: String,
    /// The HTTP status of its curl call, if it made one.
    pub status: Option<u16>,
}

impl Shell {
    /// bash in `cwd`, with curl set (through `CURL_HOME`) to print each
    /// answer's status after its body.
    pub async fn start(cwd: &std::path::Path, base: &str) -> Shell {
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

    /// Runs one step; what it printed.
    pub async fn run(&mut self, command: &str) -> Ran {
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

/// Checks a step's answer against its comment (`file` names the document
/// in messages); the answer's JSON when it is JSON.
#[track_caller]
pub fn check(file: &str, step: &Step, ran: &Ran) -> Option<Value> {
    let at = format!("{file} line {}: `{}`", step.line, step.command);
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
