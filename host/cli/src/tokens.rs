//! `switchboard tokens mint|list|revoke`: API tokens for integrations and
//! tenants, minted with the admin token. The secret is printed once, when
//! minted; the gateway keeps only its hash.

use std::io::Write;

use serde_json::{Value, json};

use super::TokensCmd;
use super::client::{Api, CliError, seg};
use super::commands::print_json;
use super::table::{cell, render};

/// `sessions` as the API takes it: `*` for every session, else the ids.
fn session_set(sessions: &[String]) -> Value {
    if sessions.iter().any(|s| s == "*") {
        json!("*")
    } else {
        json!(sessions)
    }
}

/// A token's sessions as a cell: `*` or the ids, comma-separated.
fn sessions_cell(t: &Value) -> String {
    match &t["sessions"] {
        Value::String(s) => s.clone(),
        Value::Array(ids) => ids
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(","),
        _ => String::new(),
    }
}

fn scopes_cell(t: &Value) -> String {
    t["scopes"]
        .as_array()
        .map(|s| {
            s.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default()
}

/// `switchboard tokens …`
pub(super) async fn tokens(
    api: &Api,
    cmd: TokensCmd,
    json: bool,
    out: &mut (dyn Write + Send),
) -> Result<(), CliError> {
    match cmd {
        TokensCmd::Mint {
            name,
            sessions,
            scopes,
            expires_in_seconds,
            rate_per_minute,
        } => {
            let mut body = json!({
                "name": name,
                "sessions": session_set(&sessions),
                "scopes": scopes,
            });
            if let Some(s) = expires_in_seconds {
                body["expires_in_seconds"] = json!(s);
            }
            if let Some(r) = rate_per_minute {
                body["rate_per_minute"] = json!(r);
            }
            let v = api.post("/api/v1/tokens", Some(&body)).await?;
            if json {
                return print_json(out, &v);
            }
            let t = &v["token"];
            writeln!(
                out,
                "minted token {} ({}) for sessions {} with scopes {}",
                cell(t, "name"),
                cell(t, "id"),
                sessions_cell(t),
                scopes_cell(t)
            )?;
            writeln!(
                out,
                "secret (shown this once; the gateway keeps only its hash):"
            )?;
            writeln!(out, "{}", cell(&v, "secret"))?;
        }
        TokensCmd::List => {
            let v = api.get("/api/v1/tokens").await?;
            if json {
                return print_json(out, &v);
            }
            let rows: Vec<Vec<String>> = v["tokens"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| {
                    vec![
                        cell(t, "id"),
                        cell(t, "name"),
                        cell(t, "prefix"),
                        sessions_cell(t),
                        scopes_cell(t),
                        cell(t, "status"),
                        cell(t, "last_used_at"),
                    ]
                })
                .collect();
            write!(
                out,
                "{}",
                render(
                    &[
                        "ID",
                        "NAME",
                        "PREFIX",
                        "SESSIONS",
                        "SCOPES",
                        "STATUS",
                        "LAST USED"
                    ],
                    &rows
                )
            )?;
        }
        TokensCmd::Revoke { id } => {
            let v = api.delete(&format!("/api/v1/tokens/{}", seg(&id))).await?;
            if json {
                return print_json(out, &v);
            }
            writeln!(out, "{}", cell(&v, "message"))?;
        }
    }
    Ok(())
}
