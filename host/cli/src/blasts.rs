//! `switchboard blasts create`: reads the recipients file, creates the blast
//! and follows it with a progress bar until it ends.
//!
//! The recipients file has one recipient per line (a phone number or a
//! JID). CSV works too: the first field of each line is the recipient, and a
//! first line whose first field has no digit is taken as a header. Blank
//! lines and lines starting with `#` are skipped.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Value, json};

use super::client::{Api, CliError, seg};
use super::commands::print_json;
use super::table::cell;

/// Flags of `switchboard blasts create`.
#[derive(Debug, Args)]
pub struct CreateArgs {
    /// The sending session.
    pub session: String,
    /// One recipient per line, or CSV with the recipient in the first column.
    #[arg(long)]
    pub recipients_file: PathBuf,
    /// The text to send (a `text` blast).
    #[arg(long, conflicts_with = "body")]
    pub text: Option<String>,
    /// Send kind of the blast (`text`, `image`, … or a plugin endpoint).
    #[arg(long, default_value = "text")]
    pub endpoint: String,
    /// The send body as JSON, for kinds other than text; its `to` is replaced per recipient.
    #[arg(long)]
    pub body: Option<String>,
    /// Pause between two sends, in milliseconds.
    #[arg(long)]
    pub delay_ms: Option<u64>,
    /// Random extra pause up to this many milliseconds.
    #[arg(long)]
    pub jitter_ms: Option<u64>,
    /// Attempts per recipient before it is dead-lettered.
    #[arg(long)]
    pub max_attempts: Option<u32>,
    /// Print the created job and return at once instead of following it.
    #[arg(long)]
    pub no_wait: bool,
    /// How often the progress is polled, in milliseconds.
    #[arg(long, default_value_t = 500)]
    pub poll_ms: u64,
}

/// The recipients of a recipients file (see the module documentation).
pub(super) fn parse_recipients(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut first = true;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let field = line
            .split([',', ';', '\t'])
            .next()
            .unwrap_or("")
            .trim()
            .trim_matches('"')
            .trim();
        let header = first && !field.chars().any(|c| c.is_ascii_digit());
        first = false;
        if !header && !field.is_empty() {
            out.push(field.to_owned());
        }
    }
    out
}

fn request_body(args: &CreateArgs, recipients: Vec<String>) -> Result<Value, CliError> {
    let mut body = match (&args.text, &args.body) {
        (Some(text), _) => json!({ "text": text }),
        (None, Some(raw)) => serde_json::from_str::<Value>(raw)
            .ok()
            .filter(Value::is_object)
            .ok_or_else(|| CliError::Input("--body must be a JSON object".into()))?,
        (None, None) => {
            return Err(CliError::Input(
                "give the message: --text for a text blast, or --body with a JSON object".into(),
            ));
        }
    };
    // The API validates `to` like any send's, then replaces it per recipient.
    if body.get("to").is_none()
        && let (Some(obj), Some(first)) = (body.as_object_mut(), recipients.first())
    {
        obj.insert("to".into(), Value::String(first.clone()));
    }
    let mut req = json!({ "endpoint": args.endpoint, "body": body, "recipients": recipients });
    for (k, v) in [
        ("delay_ms", args.delay_ms.map(Value::from)),
        ("jitter_ms", args.jitter_ms.map(Value::from)),
        ("max_attempts", args.max_attempts.map(Value::from)),
    ] {
        if let Some(v) = v {
            req[k] = v;
        }
    }
    Ok(req)
}

fn count(job: &Value, key: &str) -> u64 {
    job.get(key).and_then(Value::as_u64).unwrap_or(0)
}

fn is_terminal(status: &str) -> bool {
    matches!(
        status,
        "completed" | "completed_with_failures" | "cancelled" | "failed"
    )
}

/// Creates the blast and, unless `--no-wait`, follows it to its end.
pub(super) async fn create(
    api: &Api,
    args: CreateArgs,
    json: bool,
    out: &mut (dyn Write + Send),
) -> Result<(), CliError> {
    let text = std::fs::read_to_string(&args.recipients_file).map_err(|e| {
        CliError::Input(format!(
            "could not read {}: {e}",
            args.recipients_file.display()
        ))
    })?;
    let recipients = parse_recipients(&text);
    if recipients.is_empty() {
        return Err(CliError::Input(format!(
            "{} lists no recipient",
            args.recipients_file.display()
        )));
    }
    let req = request_body(&args, recipients)?;
    let session = seg(&args.session);
    let created = api
        .post(&format!("/api/v1/sessions/{session}/blast"), Some(&req))
        .await?;
    let job_id = cell(&created, "job_id");
    if args.no_wait {
        if json {
            return print_json(out, &created);
        }
        writeln!(
            out,
            "created blast {job_id}: {} recipients, {} skipped as duplicates",
            cell(&created, "total"),
            cell(&created, "skipped_dup")
        )?;
        return Ok(());
    }
    let total = count(&created, "total");
    let bar = if json {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(total)
    };
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{bar:40}] {pos}/{len} {msg} ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    let path = format!("/api/v1/sessions/{session}/blasts/{}", seg(&job_id));
    let job = loop {
        let job = api.get(&path).await?;
        let status = cell(&job, "status");
        let done = count(&job, "sent_count") + count(&job, "dlq_count");
        bar.set_position(done.min(total));
        bar.set_message(format!(
            "{status}, {} failed attempts",
            count(&job, "failed_count")
        ));
        if is_terminal(&status) {
            break job;
        }
        tokio::time::sleep(Duration::from_millis(args.poll_ms.max(50))).await;
    };
    bar.finish_and_clear();
    let status = cell(&job, "status");
    if json {
        print_json(out, &job)?;
    } else {
        writeln!(
            out,
            "blast {job_id} {status}: {} sent, {} dead-lettered, {} failed attempts, {} skipped as duplicates",
            count(&job, "sent_count"),
            count(&job, "dlq_count"),
            count(&job, "failed_count"),
            count(&job, "skipped_dup_count"),
        )?;
    }
    if status == "failed" {
        return Err(CliError::Outcome(format!(
            "blast {job_id} failed: {}",
            cell(&job, "reason")
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_list_gives_one_recipient_per_line_skipping_blanks_and_comments() {
        let got = parse_recipients("4915112345678\n\n# a comment\n+1 555 000 1111\n");
        assert_eq!(got, vec!["4915112345678", "+1 555 000 1111"]);
    }

    #[test]
    fn a_csv_gives_its_first_column_and_drops_a_header() {
        let got = parse_recipients("phone,name\n4915112345678,Greta\n\"+1 555 000 1111\",Bob\n");
        assert_eq!(got, vec!["4915112345678", "+1 555 000 1111"]);
    }

    #[test]
    fn a_first_line_with_digits_is_a_recipient_not_a_header() {
        assert_eq!(parse_recipients("4915112345678;x\n"), vec!["4915112345678"]);
    }
}
