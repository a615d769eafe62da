//! The `switchboard` binary: `switchboard serve` runs the gateway; the other
//! commands (`sessions`, `send`, `webhooks`, `blasts`, `plugins`) are the
//! command-line client of a running gateway (`switchboard::cli`).

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use switchboard::cli::{self, ClientCommand};
use switchboard::config::ServeArgs;

/// Self-hosted HTTP gateway to messaging-network sessions, and its client.
#[derive(Debug, Parser)]
#[command(name = "switchboard", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the gateway.
    // Both boxed: the variants differ a lot in size, and only one is ever built.
    Serve(Box<ServeArgs>),
    #[command(flatten)]
    Client(Box<ClientCommand>),
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => match serve(*args).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("switchboard: {e:#}");
                ExitCode::FAILURE
            }
        },
        Command::Client(command) => {
            let mut stdout = std::io::stdout();
            let result = cli::run(*command, &mut stdout).await;
            let _ = stdout.flush();
            match result {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("switchboard: {e}");
                    ExitCode::from(e.exit_code())
                }
            }
        }
    }
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    switchboard::telemetry::init(&args.log_level, args.log_format);
    let running = switchboard::start(args.config()).await?;
    shutdown_signal().await;
    tracing::info!("shutting down: finishing in-flight requests");
    running.shutdown().await
}

/// Resolves on SIGINT (Ctrl-C) or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}
