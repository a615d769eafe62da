//! Checking a create request and planning its recipients, all in memory and
//! before anything is written: one bad field or recipient refuses the whole
//! request.

use std::collections::HashSet;

use serde::Deserialize;
use serde_json::Value;

use crate::blast::model::{BlastOptions, BlastRecipient, RecipientStatus};
use crate::jid::{Jid, JidKind};
use crate::send::{FieldError, SendKind, SendRequest};
use crate::time::parse_iso8601;

/// Longest `delay_ms` and `jitter_ms`: one day.
pub const MAX_DELAY_MS: u64 = 86_400_000;

/// Most `max_attempts`.
pub const MAX_ATTEMPTS: u32 = 100;

/// The body of `POST /sessions/{id}/blast`.
#[derive(Debug, Clone, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(
    feature = "openapi",
    schema(example = json!({
        "endpoint": "text",
        "body": {"to": "15550001111", "text": "Hello"},
        "recipients": ["15550001111", "15550002222@s.whatsapp.net"],
        "delay_ms": 1000
    }))
)]
#[serde(deny_unknown_fields)]
pub struct BlastRequest {
    /// The send kind the body is for (`text`, `image`, `cta-url`, …), or the
    /// blast endpoint key of a plugin bound to the session (so the set of
    /// accepted values depends on the gateway's plugins).
    #[cfg_attr(feature = "openapi", schema(min_length = 1))]
    pub endpoint: String,
    /// That kind's request (one of the `SendBody` shapes, with its own `to`);
    /// `to` is overwritten per recipient, `send_at` ignored. A plugin
    /// endpoint's body is any object.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub body: Value,
    /// JIDs or bare phone numbers, in send order (at most
    /// `SWITCHBOARD_BLAST_MAX_RECIPIENTS`, 100000 unless configured).
    #[cfg_attr(
        feature = "openapi",
        schema(
            value_type = Vec<crate::address_schema::ChatAddress>,
            min_items = 1,
            max_items = 100000
        )
    )]
    pub recipients: Vec<String>,
    /// Base pause between sends (1000).
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 86400000))]
    pub delay_ms: Option<u64>,
    /// Extra random pause, 0..=jitter_ms (0).
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 86400000))]
    pub jitter_ms: Option<u64>,
    /// Attempts per recipient (3).
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 100))]
    pub max_attempts: Option<u32>,
    /// Skip recipients an earlier job of the session sent to (false).
    pub dedup_across_jobs: Option<bool>,
    /// ISO-8601 start time (RFC 3339, with an offset).
    #[cfg_attr(feature = "openapi", schema(format = DateTime))]
    pub send_at: Option<String>,
}

/// A create request that passed every check.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidBlast {
    /// The endpoint as given.
    pub endpoint: String,
    /// The send kind; `None` for a plugin endpoint.
    pub kind: Option<SendKind>,
    /// The body to send, without `send_at`; `to` is replaced per recipient.
    pub body: Value,
    /// Canonical recipient JIDs, in request order, duplicates included.
    pub recipients: Vec<String>,
    /// Options with defaults filled in.
    pub options: BlastOptions,
    /// Unix seconds of the delayed start.
    pub send_at: Option<i64>,
}

/// The send kind a blast `endpoint` names. The seam where plugin-registered
/// blast endpoints will join the built-in send kinds.
pub fn endpoint_kind(endpoint: &str) -> Option<SendKind> {
    SendKind::parse(endpoint)
}

/// Checks a create request; `max_recipients` bounds the list.
pub fn validate(req: BlastRequest, max_recipients: usize) -> Result<ValidBlast, FieldError> {
    validate_with(req, max_recipients, |_| false)
}

/// Checks a create request whose endpoint may also be a plugin endpoint key
/// (`is_plugin_endpoint`); a plugin endpoint's body only has to be an object.
pub fn validate_with(
    req: BlastRequest,
    max_recipients: usize,
    is_plugin_endpoint: impl Fn(&str) -> bool,
) -> Result<ValidBlast, FieldError> {
    let kind = endpoint_kind(&req.endpoint);
    if kind.is_none() && !is_plugin_endpoint(&req.endpoint) {
        let known: Vec<&str> = SendKind::ALL.iter().map(|k| k.as_str()).collect();
        return Err(FieldError::new(
            "endpoint",
            format!(
                "names no send endpoint (`{}`); use one of {} or a blast endpoint key of a bound plugin",
                req.endpoint,
                known.join(", ")
            ),
        ));
    }
    let options = options(&req)?;
    let send_at = req
        .send_at
        .as_deref()
        .map(parse_iso8601)
        .transpose()
        .map_err(|e| FieldError::new("send_at", format!("is invalid: {e}")))?;
    let recipients = recipients(&req.recipients, max_recipients)?;
    let body = match kind {
        Some(kind) => body(kind, req.body, &recipients)?,
        None => match req.body {
            Value::Object(mut o) => {
                o.remove("send_at");
                Value::Object(o)
            }
            _ => {
                return Err(FieldError::new(
                    "body",
                    "must be a JSON object: the endpoint's request",
                ));
            }
        },
    };
    Ok(ValidBlast {
        endpoint: req.endpoint,
        kind,
        body,
        recipients,
        options,
        send_at,
    })
}

fn options(req: &BlastRequest) -> Result<BlastOptions, FieldError> {
    let d = BlastOptions::default();
    let delay_ms = req.delay_ms.unwrap_or(d.delay_ms);
    let jitter_ms = req.jitter_ms.unwrap_or(d.jitter_ms);
    for (field, v) in [("delay_ms", delay_ms), ("jitter_ms", jitter_ms)] {
        if v > MAX_DELAY_MS {
            return Err(FieldError::new(
                field,
                format!("must be at most {MAX_DELAY_MS} (one day)"),
            ));
        }
    }
    let max_attempts = req.max_attempts.unwrap_or(d.max_attempts);
    if !(1..=MAX_ATTEMPTS).contains(&max_attempts) {
        return Err(FieldError::new(
            "max_attempts",
            format!("must be between 1 and {MAX_ATTEMPTS}"),
        ));
    }
    Ok(BlastOptions {
        delay_ms,
        jitter_ms,
        max_attempts,
        dedup_across_jobs: req.dedup_across_jobs.unwrap_or(d.dedup_across_jobs),
    })
}

fn recipients(list: &[String], max: usize) -> Result<Vec<String>, FieldError> {
    if list.is_empty() {
        return Err(FieldError::new("recipients", "must not be empty"));
    }
    if list.len() > max {
        return Err(FieldError::new(
            "recipients",
            format!("has {} entries; a blast takes at most {max}", list.len()),
        ));
    }
    list.iter()
        .enumerate()
        .map(|(i, r)| {
            Jid::parse_recipient(r)
                .map(|jid| jid.to_string())
                .map_err(|e| FieldError::new(format!("recipients[{i}]"), e.to_string()))
        })
        .collect()
}

/// Validates the body as the kind's request: once as given (its own `to` is
/// required, as any text, since each recipient replaces it), then once per kind of recipient address present (a reaction's
/// rules depend on whether `to` is a group), so every recipient's request is
/// known valid without validating 100,000 copies.
fn body(kind: SendKind, body: Value, recipients: &[String]) -> Result<Value, FieldError> {
    let Value::Object(mut object) = body else {
        return Err(FieldError::new(
            "body",
            "must be a JSON object: the endpoint's request",
        ));
    };
    object.remove("send_at");
    let body = Value::Object(object);
    let in_body = |e: FieldError| {
        if e.field == "body" {
            e
        } else {
            FieldError::new(format!("body.{}", e.field), e.message)
        }
    };
    // `to` is replaced for every recipient, so it must be there (the
    // request's shape) as text, but any text will do: clients written for
    // other gateways put a placeholder there.
    let first = recipients.iter().find(|r| Jid::parse(r).is_ok());
    let as_given = match (body.get("to"), first) {
        (Some(Value::String(_)), Some(first)) => {
            let mut shaped = body.clone();
            shaped["to"] = Value::String(first.clone());
            shaped
        }
        _ => body.clone(),
    };
    SendRequest::from_json(kind, as_given).map_err(in_body)?;
    let mut seen: Vec<JidKind> = Vec::new();
    for r in recipients {
        let Ok(jid) = Jid::parse(r) else { continue };
        if seen.contains(&jid.kind()) {
            continue;
        }
        seen.push(jid.kind());
        request_for(kind, &body, r).map_err(|e| {
            let e = in_body(e);
            FieldError::new(e.field, format!("{} (for recipient `{r}`)", e.message))
        })?;
    }
    Ok(body)
}

/// The send request of one recipient: the body with `to` set to it.
pub fn request_for(kind: SendKind, body: &Value, to: &str) -> Result<SendRequest, FieldError> {
    let mut body = body.clone();
    if let Value::Object(map) = &mut body {
        map.insert("to".into(), Value::String(to.to_owned()));
    }
    SendRequest::from_json(kind, body)
}

/// The recipient rows of a new job, in request order with ids from 1: the
/// first of equal recipients is pending, later ones `skipped_dup`, as are
/// recipients in `already_sent` (an earlier job of the session sent to them).
/// Returns the rows and how many are pending.
pub fn plan(
    recipients: &[String],
    already_sent: &HashSet<String>,
    now: i64,
) -> (Vec<BlastRecipient>, u64) {
    let mut seen: HashSet<&str> = HashSet::with_capacity(recipients.len());
    let mut accepted = 0;
    let rows = recipients
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let fresh = seen.insert(r.as_str()) && !already_sent.contains(r);
            if fresh {
                accepted += 1;
            }
            BlastRecipient {
                id: i as u64 + 1,
                recipient: r.clone(),
                status: if fresh {
                    RecipientStatus::Pending
                } else {
                    RecipientStatus::SkippedDup
                },
                attempts: 0,
                last_error: None,
                message_id: None,
                updated_at: now,
                held_until: None,
            }
        })
        .collect();
    (rows, accepted)
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
