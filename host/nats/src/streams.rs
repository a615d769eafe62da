//! The two streams the gateway uses, set up at start: created when missing;
//! when one exists with settings other than the gateway's, the differing
//! fields are updated and reported (logged and shown by `GET /api/v1/nats`),
//! or, when JetStream cannot change them in place (storage, a work queue's
//! retention), left as they are and reported as drift. Nothing is changed
//! silently.
//!
//! - the events stream captures `<prefix>.events.>` and `<prefix>.results.>`,
//!   limited by age and size, with a duplicate window that makes a
//!   republished event (same `Nats-Msg-Id`) one message;
//! - the send stream is a work queue on `<prefix>.send.>`: a command leaves
//!   it once the gateway acknowledges it.

use std::time::Duration;

use async_nats::jetstream::stream::{Config, DiscardPolicy, RetentionPolicy, StorageType};
use async_nats::jetstream::{self, ErrorCode};
use switchboard_domain::broker::BrokerStream;

use crate::config::{NatsConfig, Storage};
use crate::subjects::Subjects;

/// What the gateway uses a stream for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Events out (and send results).
    Events,
    /// Send commands in.
    Send,
}

impl Role {
    fn as_str(self) -> &'static str {
        match self {
            Role::Events => "events",
            Role::Send => "send",
        }
    }
}

/// The configuration the gateway wants for the stream of `role`.
pub fn wanted(config: &NatsConfig, role: Role) -> Config {
    let subjects = Subjects::new(&config.prefix);
    let storage = match config.storage {
        Storage::File => StorageType::File,
        Storage::Memory => StorageType::Memory,
    };
    match role {
        Role::Events => Config {
            name: config.events_stream.clone(),
            description: Some("Switchboard events and send results".into()),
            subjects: vec![subjects.all_events(), subjects.all_results()],
            retention: RetentionPolicy::Limits,
            max_age: config.events_max_age,
            max_bytes: config.events_max_bytes,
            storage,
            num_replicas: config.replicas,
            duplicate_window: config.duplicate_window,
            discard: DiscardPolicy::Old,
            ..Default::default()
        },
        Role::Send => Config {
            name: config.send_stream.clone(),
            description: Some("Switchboard send commands (a work queue)".into()),
            subjects: vec![subjects.all_sends()],
            retention: RetentionPolicy::WorkQueue,
            storage,
            num_replicas: config.replicas,
            duplicate_window: config.duplicate_window,
            discard: DiscardPolicy::Old,
            ..Default::default()
        },
    }
}

/// A limit as the server reports it: 0 (no limit) comes back as -1.
fn limit(v: i64) -> i64 {
    if v <= 0 { -1 } else { v }
}

/// The fields of `have` that differ from `want`, among those the gateway
/// sets, compared as the server normalises them.
pub fn drift(want: &Config, have: &Config) -> Vec<String> {
    let window = |d: Duration| {
        if d.is_zero() {
            Duration::from_secs(120)
        } else {
            d
        }
    };
    let sorted = |v: &[String]| {
        let mut v = v.to_vec();
        v.sort();
        v
    };
    let mut out = Vec::new();
    let mut differs = |field: &str, a: String, b: String| {
        if a != b {
            out.push(format!("{field}: {b} (the gateway's: {a})"));
        }
    };
    differs(
        "subjects",
        sorted(&want.subjects).join(","),
        sorted(&have.subjects).join(","),
    );
    differs(
        "retention",
        format!("{:?}", want.retention),
        format!("{:?}", have.retention),
    );
    differs(
        "storage",
        format!("{:?}", want.storage),
        format!("{:?}", have.storage),
    );
    differs(
        "max_age",
        format!("{:?}", want.max_age),
        format!("{:?}", have.max_age),
    );
    differs(
        "max_bytes",
        limit(want.max_bytes).to_string(),
        limit(have.max_bytes).to_string(),
    );
    differs(
        "num_replicas",
        want.num_replicas.max(1).to_string(),
        have.num_replicas.max(1).to_string(),
    );
    differs(
        "duplicate_window",
        format!("{:?}", window(want.duplicate_window)),
        format!("{:?}", window(have.duplicate_window)),
    );
    differs(
        "discard",
        format!("{:?}", want.discard),
        format!("{:?}", have.discard),
    );
    out
}

/// Creates the stream of `role` or brings an existing one in line; the
/// report says which. `Err` only when JetStream did not answer at all.
pub async fn ensure(
    js: &jetstream::Context,
    config: &NatsConfig,
    role: Role,
) -> Result<BrokerStream, String> {
    let want = wanted(config, role);
    let mut report = BrokerStream {
        name: want.name.clone(),
        role: role.as_str().into(),
        subjects: want.subjects.clone(),
        setup: String::new(),
        drift: Vec::new(),
    };
    match js.get_stream(&want.name).await {
        Ok(stream) => {
            let fields = drift(&want, &stream.cached_info().config);
            if fields.is_empty() {
                report.setup = "matches".into();
                return Ok(report);
            }
            // Only the gateway's own fields change: the rest of the
            // stream's settings (set by an operator) stay as they are.
            let mut merged = stream.cached_info().config.clone();
            merged.subjects = want.subjects.clone();
            merged.retention = want.retention;
            merged.storage = want.storage;
            merged.max_age = want.max_age;
            merged.max_bytes = want.max_bytes;
            merged.num_replicas = want.num_replicas;
            merged.duplicate_window = want.duplicate_window;
            merged.discard = want.discard;
            match js.update_stream(&merged).await {
                Ok(_) => {
                    tracing::warn!(stream = %want.name, drift = ?fields, "NATS stream settings differed from the gateway's and were updated");
                    report.setup = "updated".into();
                }
                Err(e) => {
                    tracing::warn!(stream = %want.name, drift = ?fields, error = %e, "NATS stream settings differ from the gateway's and cannot be changed in place; left as they are");
                    report.setup = "drifted".into();
                }
            }
            report.drift = fields;
            Ok(report)
        }
        Err(e) if is_not_found(&e) => {
            js.create_stream(want.clone())
                .await
                .map_err(|e| format!("could not create the stream `{}`: {e}", want.name))?;
            tracing::info!(stream = %want.name, subjects = ?want.subjects, "NATS stream created");
            report.setup = "created".into();
            Ok(report)
        }
        Err(e) => Err(format!("could not read the stream `{}`: {e}", want.name)),
    }
}

fn is_not_found(e: &jetstream::context::GetStreamError) -> bool {
    matches!(
        e.kind(),
        jetstream::context::GetStreamErrorKind::JetStream(j)
            if j.error_code() == ErrorCode::STREAM_NOT_FOUND
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_as_the_server_reports_it_has_no_drift_from_what_was_asked() {
        let config = NatsConfig::default();
        let want = wanted(&config, Role::Events);
        // The server fills in what was left at zero.
        let mut have = want.clone();
        have.max_bytes = -1;
        have.max_messages = -1;
        have.num_replicas = 1;
        have.subjects.reverse();
        assert!(drift(&want, &have).is_empty(), "{:?}", drift(&want, &have));
    }

    #[test]
    fn each_changed_setting_is_named_with_both_values() {
        let config = NatsConfig::default();
        let want = wanted(&config, Role::Send);
        let mut have = want.clone();
        have.retention = RetentionPolicy::Limits;
        have.storage = StorageType::Memory;
        have.duplicate_window = Duration::from_secs(5);
        let fields = drift(&want, &have);
        assert_eq!(fields.len(), 3, "{fields:?}");
        assert!(fields[0].starts_with("retention: Limits"), "{fields:?}");
        assert!(fields[1].contains("Memory") && fields[1].contains("File"));
        assert!(fields[2].starts_with("duplicate_window: 5s"));
    }

    #[test]
    fn the_send_stream_is_a_work_queue_on_the_send_subjects() {
        let config = NatsConfig {
            prefix: "acme".into(),
            ..Default::default()
        };
        let send = wanted(&config, Role::Send);
        assert_eq!(send.retention, RetentionPolicy::WorkQueue);
        assert_eq!(send.subjects, ["acme.send.>"]);
        let events = wanted(&config, Role::Events);
        assert_eq!(events.subjects, ["acme.events.>", "acme.results.>"]);
    }
}
