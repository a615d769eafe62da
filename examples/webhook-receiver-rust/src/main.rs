//! `webhook-receiver`: an example receiver for Switchboard webhooks.
//!
//! ```text
//! webhook-receiver --port 8080 --secret S [--allow-legacy] [--tolerance 300]
//! ```
//!
//! `WEBHOOK_SECRET` and `PORT` stand in for the flags (prefer the environment
//! for the secret: arguments are visible in `ps`). Prints one line per
//! accepted event (`event session_id delivery_id`) to stdout and each
//! rejection, with its reason, to stderr.

use std::net::{IpAddr, SocketAddr};

use clap::Parser;
use switchboard_webhook_receiver::DEFAULT_TOLERANCE_SECS;
use switchboard_webhook_receiver::server::{Config, router};

/// Example receiver for Switchboard webhooks.
#[derive(Debug, Parser)]
#[command(name = "webhook-receiver", version)]
struct Args {
    /// Port to listen on.
    #[arg(long, env = "PORT", default_value_t = 8080)]
    port: u16,
    /// Address to bind.
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    /// The webhook's secret.
    #[arg(long, env = "WEBHOOK_SECRET", hide_env_values = true)]
    secret: String,
    /// Largest accepted difference between the delivery's timestamp and our
    /// clock, in seconds.
    #[arg(long, default_value_t = DEFAULT_TOLERANCE_SECS)]
    tolerance: i64,
    /// Also accept legacy signatures (body only, from Switchboard before
    /// v0.9.8): these cannot be protected against replay.
    #[arg(long)]
    allow_legacy: bool,
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let args = Args::parse();
    if args.secret.is_empty() {
        eprintln!("webhook-receiver: the secret must not be empty");
        std::process::exit(2);
    }
    let mut config = Config::new(args.secret);
    config.tolerance_secs = args.tolerance;
    config.allow_legacy = args.allow_legacy;

    let listener = tokio::net::TcpListener::bind(SocketAddr::new(args.host, args.port)).await?;
    eprintln!("listening on http://{}/", listener.local_addr()?);
    axum::serve(listener, router(config))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
}
