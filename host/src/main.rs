//! The `switchboard` binary: `switchboard serve` runs the gateway; the other
//! commands (`sessions`, `send`, `webhooks`, `blasts`, `plugins`) are the
//! command-line client of a running gateway (`switchboard::cli`).

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use switchboard::cli::{self, ClientCommand};
use switchboard::config::ServeArgs;

/// jemalloc rather than glibc's allocator. Every event allocates and frees
/// buffers of a kilobyte or two (the envelope, its record, the delivery),
/// and glibc serves those from its large bins, consolidating its fast bins
/// first: a fifth of the gateway's CPU under load went to malloc and free.
/// With jemalloc the inbound pipeline (`just bench` P1) carries about a
/// tenth more events on the same cores. The benchmark uses it too, so it
/// measures what ships.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

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
    // Installed before the gateway starts: once it logs that it listens, a
    // SIGTERM must stop it gracefully, not kill it with the default action.
    let stop = ShutdownSignal::install()?;
    let running = switchboard::start(args.config()).await?;
    stop.received().await;
    tracing::info!("shutting down: finishing in-flight requests");
    running.shutdown().await
}

/// SIGINT (Ctrl-C) and SIGTERM, caught from the moment it is installed.
struct ShutdownSignal {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
}

impl ShutdownSignal {
    fn install() -> std::io::Result<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(Self {
                interrupt: signal(SignalKind::interrupt())?,
                terminate: signal(SignalKind::terminate())?,
            })
        }
        #[cfg(not(unix))]
        Ok(Self {})
    }

    /// Resolves on the first of either signal.
    async fn received(mut self) {
        #[cfg(unix)]
        tokio::select! {
            _ = self.interrupt.recv() => {},
            _ = self.terminate.recv() => {},
        }
        #[cfg(not(unix))]
        {
            let _ = &mut self;
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
