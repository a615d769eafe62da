//! `switchboard nats status`: the gateway's NATS JetStream broker as it
//! reports itself (`GET /api/v1/nats`): the connection, the streams it set
//! up, how far the event outbox has drained into the stream, and the send
//! queue's commands.

use std::io::Write;

use switchboard_domain::broker::BrokerStatus;

use super::NatsCmd;
use super::client::{Api, CliError};
use super::commands::print_json;
use super::table::render;

/// `switchboard nats …`
pub(super) async fn nats(
    api: &Api,
    cmd: NatsCmd,
    json: bool,
    out: &mut (dyn Write + Send),
) -> Result<(), CliError> {
    match cmd {
        NatsCmd::Status => {
            let v = api.get("/api/v1/nats").await?;
            if json {
                return print_json(out, &v);
            }
            let status: BrokerStatus = serde_json::from_value(v).map_err(|e| {
                CliError::Input(format!("the gateway's answer is not a broker status: {e}"))
            })?;
            write_status(&status, out)
        }
    }
}

fn write_status(s: &BrokerStatus, out: &mut (dyn Write + Send)) -> Result<(), CliError> {
    if !s.configured {
        writeln!(
            out,
            "NATS is not configured (start the gateway with --nats-url)"
        )?;
        return Ok(());
    }
    let state = if s.connected {
        "connected"
    } else {
        "not connected"
    };
    writeln!(out, "NATS: {state} ({})", s.servers.join(", "))?;
    if let Some(e) = &s.last_error {
        writeln!(out, "last error: {e}")?;
    }
    let rows: Vec<Vec<String>> = s
        .streams
        .iter()
        .map(|st| {
            let setup = if st.drift.is_empty() {
                st.setup.clone()
            } else {
                format!("{} ({})", st.setup, st.drift.join("; "))
            };
            vec![
                st.name.clone(),
                st.role.clone(),
                st.subjects.join(" "),
                setup,
            ]
        })
        .collect();
    write!(
        out,
        "{}",
        render(&["STREAM", "ROLE", "SUBJECTS", "SETUP"], &rows)
    )?;
    let e = &s.events;
    let lag = e
        .lag_seconds
        .map(|l| format!(", oldest {l:.1} s"))
        .unwrap_or_default();
    writeln!(
        out,
        "events out: {} pending{lag}; {} published, {} acknowledged ({} duplicates), {} failed",
        e.pending, e.published, e.acked, e.duplicates, e.failed
    )?;
    let c = &s.commands;
    writeln!(
        out,
        "sends in: {} delivered ({} again); {} sent, {} already sent, {} failed, {} put back",
        c.delivered, c.redelivered, c.succeeded, c.already_sent, c.failed, c.retried
    )?;
    Ok(())
}
