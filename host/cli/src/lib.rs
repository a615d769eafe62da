//! The command-line client: the jobs people do by hand against a running
//! gateway (`switchboard sessions list`, `switchboard send text`, …), in the
//! same binary as the server.
//!
//! - this file: the commands and their flags (clap), and [`run`]
//! - `client`: the HTTP calls and how API errors become [`CliError`]s
//! - `commands`: sessions, send, webhooks, plugins
//! - `blasts`: creating a blast from a recipients file, with a progress bar
//! - `qr`: the pairing QR code drawn in the terminal, and `--watch`
//! - `table`: plain-text tables
//! - `tokens`: minting, listing and revoking API tokens
//!
//! Output is a human-readable table or sentence by default and the API's raw
//! JSON with `--json`. Errors go to stderr with a non-zero exit code.

mod blasts;
mod client;
mod commands;
mod nats;
pub mod qr;
mod table;
mod tokens;

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

pub use client::CliError;

/// Where the gateway is and how to authenticate; every client command takes these.
#[derive(Debug, Clone, Args)]
pub struct Connection {
    /// Base URL of the gateway.
    #[arg(
        long,
        env = "SWITCHBOARD_URL",
        default_value = "http://127.0.0.1:3451",
        global = true
    )]
    pub url: String,
    /// API token. When unset: `API_TOKEN`, then `<SWITCHBOARD_DATA_DIR or ./data>/api-token`.
    #[arg(long, env = "SWITCHBOARD_TOKEN", hide_env_values = true, global = true)]
    pub token: Option<String>,
    /// Print the API's JSON answer instead of a table.
    #[arg(long, global = true)]
    pub json: bool,
    /// Timeout of one HTTP request, in seconds.
    #[arg(long, default_value_t = 60, global = true)]
    pub timeout_secs: u64,
}

/// The client commands (each a top-level subcommand of `switchboard`).
#[derive(Debug, Subcommand)]
pub enum ClientCommand {
    /// Sessions: list, create, show the QR code to pair.
    Sessions {
        /// Where the gateway is and its token.
        #[command(flatten)]
        conn: Connection,
        /// What to do.
        #[command(subcommand)]
        cmd: SessionsCmd,
    },
    /// Send a message.
    Send {
        /// Where the gateway is and its token.
        #[command(flatten)]
        conn: Connection,
        /// What to do.
        #[command(subcommand)]
        cmd: SendCmd,
    },
    /// Webhooks: list, the dead-letter queue, replay.
    Webhooks {
        /// Where the gateway is and its token.
        #[command(flatten)]
        conn: Connection,
        /// What to do.
        #[command(subcommand)]
        cmd: WebhooksCmd,
    },
    /// Blasts: one message to many recipients.
    Blasts {
        /// Where the gateway is and its token.
        #[command(flatten)]
        conn: Connection,
        /// What to do.
        #[command(subcommand)]
        cmd: BlastsCmd,
    },
    /// Plugins: load, list, remove.
    Plugins {
        /// Where the gateway is and its token.
        #[command(flatten)]
        conn: Connection,
        /// What to do.
        #[command(subcommand)]
        cmd: PluginsCmd,
    },
    /// API tokens limited to some sessions and scopes (needs the admin token).
    Tokens {
        /// Where the gateway is and its token.
        #[command(flatten)]
        conn: Connection,
        /// What to do.
        #[command(subcommand)]
        cmd: TokensCmd,
    },
    /// The NATS JetStream broker (`serve --nats-url`).
    Nats {
        /// Where the gateway is and its token.
        #[command(flatten)]
        conn: Connection,
        /// What to do.
        #[command(subcommand)]
        cmd: NatsCmd,
    },
}

/// `switchboard sessions …`
#[derive(Debug, Subcommand)]
pub enum SessionsCmd {
    /// Every session with its status and phone number.
    List,
    /// Create a session.
    Create {
        /// Its id (generated when left out).
        id: Option<String>,
        /// A label (on the sim also the account's push name).
        #[arg(long)]
        name: Option<String>,
        /// Network backend (the gateway's default when left out).
        #[arg(long)]
        network: Option<String>,
        /// Simulated network only: the account's phone number.
        #[arg(long)]
        phone: Option<String>,
    },
    /// Connect the session if needed and draw its current QR code in the
    /// terminal, to scan with the phone (WhatsApp → Linked devices).
    Qr {
        /// The session id.
        id: String,
        /// How long to wait for a QR code to appear, in seconds.
        #[arg(long, default_value_t = 10)]
        wait_secs: u64,
        /// Follow the rotating codes, with a countdown, until the phone has
        /// linked; then print the session's phone number. With --json: one
        /// JSON line per code, then the session's status.
        #[arg(long)]
        watch: bool,
    },
}

/// `switchboard send …`
#[derive(Debug, Subcommand)]
pub enum SendCmd {
    /// A text message.
    Text {
        /// The sending session.
        session: String,
        /// The recipient: a phone number or a JID.
        #[arg(long)]
        to: String,
        /// The text.
        #[arg(long)]
        text: String,
    },
}

/// `switchboard webhooks …`
#[derive(Debug, Subcommand)]
pub enum WebhooksCmd {
    /// A session's webhooks.
    List {
        /// The session id.
        session: String,
    },
    /// A session's dead-lettered deliveries, newest first.
    Dlq {
        /// The session id.
        session: String,
    },
    /// Deliver a dead-lettered entry again.
    Replay {
        /// The session id.
        session: String,
        /// The DLQ entry id.
        entry: String,
    },
}

/// `switchboard blasts …`
#[derive(Debug, Subcommand)]
pub enum BlastsCmd {
    /// Create a blast and follow it to the end with a progress bar.
    Create(blasts::CreateArgs),
}

/// `switchboard plugins …`
#[derive(Debug, Subcommand)]
pub enum PluginsCmd {
    /// Upload a WebAssembly component.
    Load {
        /// The `.wasm` file.
        file: PathBuf,
        /// Its name (the component's own when left out).
        #[arg(long)]
        name: Option<String>,
    },
    /// Every loaded plugin with its counters.
    List,
    /// Remove a plugin, its bindings and its key-value store.
    Remove {
        /// The plugin id.
        id: String,
    },
}

/// `switchboard tokens …`
#[derive(Debug, Subcommand)]
pub enum TokensCmd {
    /// Mint a token; its secret is printed once.
    Mint {
        /// Its name (shown in lists, logs and metrics).
        name: String,
        /// The sessions it may act on: ids, or `*` for every session.
        #[arg(long = "session", required = true, num_args = 1..)]
        sessions: Vec<String>,
        /// What it may do: `read`, `send`, `manage`, `admin`.
        #[arg(long = "scope", required = true, num_args = 1..)]
        scopes: Vec<String>,
        /// It stops working this many seconds from now.
        #[arg(long)]
        expires_in_seconds: Option<i64>,
        /// Most requests per minute.
        #[arg(long)]
        rate_per_minute: Option<u32>,
    },
    /// Every token (never its secret).
    List,
    /// Revoke a token at once.
    Revoke {
        /// The token id.
        id: String,
    },
}

/// `switchboard nats …`
#[derive(Debug, Subcommand)]
pub enum NatsCmd {
    /// The connection, the streams, events waiting for the stream, and the
    /// send queue's commands.
    Status,
}

/// The client alone, for callers that parse arguments without the server's
/// `serve` command (tests, embedders): `ClientCli::try_parse_from(["switchboard", "sessions", "list"])`.
#[derive(Debug, Parser)]
#[command(name = "switchboard")]
pub struct ClientCli {
    /// The command.
    #[command(subcommand)]
    pub command: ClientCommand,
}

/// Runs one client command, writing its output to `out`.
pub async fn run(command: ClientCommand, out: &mut (dyn Write + Send)) -> Result<(), CliError> {
    match command {
        ClientCommand::Sessions { conn, cmd } => {
            let api = client::Api::new(&conn)?;
            commands::sessions(&api, cmd, conn.json, out).await
        }
        ClientCommand::Send { conn, cmd } => {
            let api = client::Api::new(&conn)?;
            commands::send(&api, cmd, conn.json, out).await
        }
        ClientCommand::Webhooks { conn, cmd } => {
            let api = client::Api::new(&conn)?;
            commands::webhooks(&api, cmd, conn.json, out).await
        }
        ClientCommand::Blasts { conn, cmd } => {
            let api = client::Api::new(&conn)?;
            match cmd {
                BlastsCmd::Create(args) => blasts::create(&api, args, conn.json, out).await,
            }
        }
        ClientCommand::Plugins { conn, cmd } => {
            let api = client::Api::new(&conn)?;
            commands::plugins(&api, cmd, conn.json, out).await
        }
        ClientCommand::Tokens { conn, cmd } => {
            let api = client::Api::new(&conn)?;
            tokens::tokens(&api, cmd, conn.json, out).await
        }
        ClientCommand::Nats { conn, cmd } => {
            let api = client::Api::new(&conn)?;
            nats::nats(&api, cmd, conn.json, out).await
        }
    }
}
