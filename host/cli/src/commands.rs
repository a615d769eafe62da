//! Sessions, send, webhooks and plugins: one API call or two each, printed
//! as a table or a sentence (or the raw JSON with `--json`).

use std::io::Write;
use std::time::Duration;

use serde_json::{Value, json};

use super::client::{Api, CliError, seg};
use super::table::{cell, render};
use super::{PluginsCmd, SendCmd, SessionsCmd, WebhooksCmd};

/// Writes the raw answer as pretty JSON.
pub(super) fn print_json(out: &mut (dyn Write + Send), v: &Value) -> Result<(), CliError> {
    let text = serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string());
    writeln!(out, "{text}")?;
    Ok(())
}

/// The rows of `list[key]`, each turned into cells by `pick`.
fn rows(v: &Value, key: &str, pick: impl Fn(&Value) -> Vec<String>) -> Vec<Vec<String>> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|items| items.iter().map(pick).collect())
        .unwrap_or_default()
}

/// `switchboard sessions …`
pub(super) async fn sessions(
    api: &Api,
    cmd: SessionsCmd,
    json: bool,
    out: &mut (dyn Write + Send),
) -> Result<(), CliError> {
    match cmd {
        SessionsCmd::List => {
            let v = api.get("/api/v1/sessions").await?;
            if json {
                return print_json(out, &v);
            }
            let rows = rows(&v, "sessions", |s| {
                ["id", "status", "network", "phone_number", "name"]
                    .iter()
                    .map(|k| cell(s, k))
                    .collect()
            });
            write!(
                out,
                "{}",
                render(&["ID", "STATUS", "NETWORK", "PHONE", "NAME"], &rows)
            )?;
        }
        SessionsCmd::Create {
            id,
            name,
            network,
            phone,
        } => {
            let mut body = serde_json::Map::new();
            for (k, v) in [
                ("id", id),
                ("name", name),
                ("network", network),
                ("phone", phone),
            ] {
                if let Some(v) = v {
                    body.insert(k.into(), Value::String(v));
                }
            }
            let v = api
                .post("/api/v1/sessions", Some(&Value::Object(body)))
                .await?;
            if json {
                return print_json(out, &v);
            }
            writeln!(
                out,
                "created session {} on {} ({})",
                cell(&v, "id"),
                cell(&v, "network"),
                cell(&v, "status")
            )?;
        }
        SessionsCmd::Qr {
            id,
            wait_secs,
            watch,
        } => {
            let req = super::qr::QrRequest {
                id,
                wait: Duration::from_secs(wait_secs),
                watch,
            };
            super::qr::run(api, req, json, out).await?;
        }
    }
    Ok(())
}

/// `switchboard send …`
pub(super) async fn send(
    api: &Api,
    cmd: SendCmd,
    json: bool,
    out: &mut (dyn Write + Send),
) -> Result<(), CliError> {
    match cmd {
        SendCmd::Text { session, to, text } => {
            let path = format!("/api/v1/sessions/{}/messages/text", seg(&session));
            let v = api
                .post(&path, Some(&json!({ "to": to, "text": text })))
                .await?;
            if json {
                return print_json(out, &v);
            }
            writeln!(out, "sent {} to {}", cell(&v, "message_id"), cell(&v, "to"))?;
        }
    }
    Ok(())
}

/// `switchboard webhooks …`
pub(super) async fn webhooks(
    api: &Api,
    cmd: WebhooksCmd,
    json: bool,
    out: &mut (dyn Write + Send),
) -> Result<(), CliError> {
    match cmd {
        WebhooksCmd::List { session } => {
            let v = api
                .get(&format!("/api/v1/sessions/{}/webhooks", seg(&session)))
                .await?;
            if json {
                return print_json(out, &v);
            }
            // The secret stays out of the table (it is in --json, as the API lists it).
            let rows = rows(&v, "webhooks", |w| {
                ["id", "url", "events", "enabled"]
                    .iter()
                    .map(|k| cell(w, k))
                    .collect()
            });
            write!(
                out,
                "{}",
                render(&["ID", "URL", "EVENTS", "ENABLED"], &rows)
            )?;
        }
        WebhooksCmd::Dlq { session } => {
            let v = api
                .get(&format!("/api/v1/sessions/{}/webhooks/dlq", seg(&session)))
                .await?;
            if json {
                return print_json(out, &v);
            }
            let rows = rows(&v, "entries", |e| {
                [
                    "id",
                    "event",
                    "webhook_url",
                    "attempts",
                    "last_error",
                    "failed_at",
                ]
                .iter()
                .map(|k| cell(e, k))
                .collect()
            });
            write!(
                out,
                "{}",
                render(
                    &["ID", "EVENT", "URL", "ATTEMPTS", "LAST ERROR", "FAILED AT"],
                    &rows
                )
            )?;
        }
        WebhooksCmd::Replay { session, entry } => {
            let path = format!(
                "/api/v1/sessions/{}/webhooks/dlq/{}/replay",
                seg(&session),
                seg(&entry)
            );
            let v = api.post(&path, None).await?;
            if json {
                return print_json(out, &v);
            }
            writeln!(out, "entry {entry}: {}", cell(&v, "message"))?;
        }
    }
    Ok(())
}

/// `switchboard plugins …`
pub(super) async fn plugins(
    api: &Api,
    cmd: PluginsCmd,
    json: bool,
    out: &mut (dyn Write + Send),
) -> Result<(), CliError> {
    match cmd {
        PluginsCmd::Load { file, name } => {
            let bytes = std::fs::read(&file)
                .map_err(|e| CliError::Input(format!("could not read {}: {e}", file.display())))?;
            let path = match &name {
                Some(n) => format!("/api/v1/plugins?name={}", seg(n)),
                None => "/api/v1/plugins".to_owned(),
            };
            let v = api.post_bytes(&path, "application/wasm", bytes).await?;
            if json {
                return print_json(out, &v);
            }
            writeln!(
                out,
                "loaded plugin {} {} ({}), id {}",
                cell(&v, "name"),
                cell(&v, "version"),
                cell(&v, "hooks"),
                cell(&v, "id")
            )?;
        }
        PluginsCmd::List => {
            let v = api.get("/api/v1/plugins").await?;
            if json {
                return print_json(out, &v);
            }
            let rows = rows(&v, "plugins", |p| {
                let counters = p.get("counters").cloned().unwrap_or(Value::Null);
                let mut row: Vec<String> = ["id", "name", "version", "hooks", "status"]
                    .iter()
                    .map(|k| cell(p, k))
                    .collect();
                row.extend(
                    ["calls", "traps", "timeouts"]
                        .iter()
                        .map(|k| cell(&counters, k)),
                );
                row
            });
            write!(
                out,
                "{}",
                render(
                    &[
                        "ID", "NAME", "VERSION", "HOOKS", "STATUS", "CALLS", "TRAPS", "TIMEOUTS"
                    ],
                    &rows
                )
            )?;
        }
        PluginsCmd::Remove { id } => {
            let v = api.delete(&format!("/api/v1/plugins/{}", seg(&id))).await?;
            if json {
                return print_json(out, &v);
            }
            writeln!(out, "removed plugin {id}")?;
        }
    }
    Ok(())
}
