//! `switchboard sessions qr`: the pairing QR code drawn in the terminal, so a
//! phone can be linked from a server shell with nothing else installed.
//!
//! The code is drawn with Unicode half blocks (two modules per character
//! cell, dark on light with the quiet zone the standard asks for), which
//! every modern terminal shows and phones scan. With `--watch` the command
//! follows the session: it draws each rotated code as it appears, counts
//! down to its expiry, and ends when the phone has linked, printing the
//! account's phone number — the same one-call experience `POST …/pair`
//! gives with a pair code.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use qrcode::QrCode;
use qrcode::render::unicode::Dense1x2;
use serde_json::Value;

use super::client::{Api, CliError, seg};
use super::commands::print_json;
use super::table::cell;

/// How often `--watch` looks at the session and redraws the countdown.
const POLL: Duration = Duration::from_millis(250);

/// What `sessions qr` was asked for.
pub(super) struct QrRequest {
    /// The session id.
    pub id: String,
    /// How long to wait for the first QR code.
    pub wait: Duration,
    /// Follow rotations until the session is logged in.
    pub watch: bool,
}

/// Draws `code` as Unicode half blocks, with a quiet zone around it.
pub fn render(code: &str) -> Result<String, CliError> {
    let qr = QrCode::new(code.as_bytes())
        .map_err(|e| CliError::Outcome(format!("the gateway's QR code cannot be drawn: {e}")))?;
    Ok(qr
        .render::<Dense1x2>()
        .dark_color(Dense1x2::Light)
        .light_color(Dense1x2::Dark)
        .quiet_zone(true)
        .build())
}

/// Seconds from `now` to `expires_at` (Unix seconds), never negative.
pub fn seconds_left(expires_at: i64, now: i64) -> i64 {
    (expires_at - now).max(0)
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// `switchboard sessions qr <id> [--watch]`.
pub(super) async fn run(
    api: &Api,
    req: QrRequest,
    json: bool,
    out: &mut (dyn Write + Send),
) -> Result<(), CliError> {
    let path = format!("/api/v1/sessions/{}", seg(&req.id));
    let session = api.get(&path).await?;
    match session.get("status").and_then(Value::as_str) {
        Some("logged_in" | "connected") if !req.watch => {
            return Err(CliError::Outcome(format!(
                "session `{}` is already paired and connected; there is no QR code to scan",
                req.id
            )));
        }
        Some("logged_in") => return linked(api, &req.id, json, out).await,
        Some("disconnected") => {
            api.post(&format!("{path}/connect"), None).await?;
        }
        _ => {}
    }
    let first = first_code(api, &path, req.wait).await?;
    if !req.watch {
        if json {
            return print_json(out, &first);
        }
        show(&first, json, out)?;
        return Ok(());
    }
    watch(api, &req.id, &path, first, json, out).await
}

/// Waits up to `wait` for the session's first QR code.
async fn first_code(api: &Api, path: &str, wait: Duration) -> Result<Value, CliError> {
    let started = Instant::now();
    loop {
        match api.get(&format!("{path}/qr")).await {
            Err(CliError::Api { status: 409, .. }) if started.elapsed() < wait => {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            other => return other,
        }
    }
}

/// Prints one code: drawn, with how long it is good for (or one JSON line).
fn show(v: &Value, json: bool, out: &mut (dyn Write + Send)) -> Result<(), CliError> {
    if json {
        writeln!(out, "{v}")?;
        return Ok(());
    }
    let code = v.get("qr").and_then(Value::as_str).unwrap_or_default();
    let left = v
        .get("expires_at")
        .and_then(Value::as_i64)
        .map(|at| seconds_left(at, unix_now()));
    writeln!(out, "{}", render(code)?)?;
    writeln!(out, "{code}")?;
    writeln!(
        out,
        "Scan it on the phone: WhatsApp → Settings → Linked devices → Link a device."
    )?;
    match left {
        Some(s) => writeln!(
            out,
            "It expires in {s} s (at {} Unix time) and then rotates.",
            cell(v, "expires_at")
        )?,
        None => writeln!(out, "It rotates.")?,
    }
    out.flush()?;
    Ok(())
}

/// Follows the session: each new code drawn, a countdown on a terminal, the
/// phone number once logged in; an error when pairing stops.
async fn watch(
    api: &Api,
    id: &str,
    path: &str,
    first: Value,
    json: bool,
    out: &mut (dyn Write + Send),
) -> Result<(), CliError> {
    let live = !json && std::io::stdout().is_terminal();
    show(&first, json, out)?;
    let mut shown = first.get("qr").cloned();
    let mut expires_at = first.get("expires_at").and_then(Value::as_i64);
    loop {
        tokio::time::sleep(POLL).await;
        let status = api.get(&format!("{path}/status")).await?;
        match status.get("status").and_then(Value::as_str) {
            Some("logged_in") => {
                if live {
                    writeln!(out)?;
                }
                return linked(api, id, json, out).await;
            }
            Some("disconnected") => {
                return Err(CliError::Outcome(format!(
                    "session `{id}` stopped pairing (it is disconnected: the codes ran out or the connection dropped); run the command again"
                )));
            }
            // Scanned: the phone is linking; no code is shown meanwhile.
            Some("connected" | "connecting") => continue,
            _ => {}
        }
        match api.get(&format!("{path}/qr")).await {
            Ok(v) if v.get("qr") != shown.as_ref() => {
                if live {
                    writeln!(out)?;
                }
                show(&v, json, out)?;
                shown = v.get("qr").cloned();
                expires_at = v.get("expires_at").and_then(Value::as_i64);
            }
            Ok(_) => {}
            // Between codes, or scanned meanwhile: look at the status again.
            Err(CliError::Api { status: 409, .. }) => continue,
            Err(e) => return Err(e),
        }
        if live && let Some(at) = expires_at {
            write!(out, "\r  expires in {:>3} s ", seconds_left(at, unix_now()))?;
            out.flush()?;
        }
    }
}

/// Prints that the session is linked, with its phone number.
async fn linked(
    api: &Api,
    id: &str,
    json: bool,
    out: &mut (dyn Write + Send),
) -> Result<(), CliError> {
    let v = api
        .get(&format!("/api/v1/sessions/{}/status", seg(id)))
        .await?;
    if json {
        writeln!(out, "{v}")?;
    } else {
        writeln!(
            out,
            "Linked: session {id} is logged in as {}",
            cell(&v, "phone_number")
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_is_drawn_in_half_blocks_with_a_quiet_zone() {
        let drawn = render("2@abc,def,ghi").unwrap();
        let lines: Vec<&str> = drawn.lines().collect();
        // Version 1 is 21 modules; with the 4-module quiet zone each side
        // that is 29 columns, and two modules per character row.
        assert_eq!(lines[0].chars().count(), lines[1].chars().count());
        assert!(lines[0].chars().count() >= 29);
        assert_eq!(lines.len(), lines[0].chars().count().div_ceil(2));
        assert!(drawn.chars().all(|c| " ▀▄█\n".contains(c)), "{drawn}");
        assert!(drawn.contains('▀') || drawn.contains('▄'));
    }

    #[test]
    fn the_countdown_stops_at_zero() {
        assert_eq!(seconds_left(100, 90), 10);
        assert_eq!(seconds_left(100, 120), 0);
    }
}
