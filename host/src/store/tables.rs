//! Every redb table of the gateway, in one place. Values are JSON documents;
//! the table name carries a version so a schema change adds a table instead of
//! reinterpreting old bytes.

use redb::TableDefinition;

/// Store-wide metadata: `schema_version`, sequence counters.
pub const META: TableDefinition<&str, u64> = TableDefinition::new("meta_v1");

/// Session records by session id.
pub const SESSIONS: TableDefinition<&str, &[u8]> = TableDefinition::new("sessions_v1");

/// Message records by (session id, sequence number); the sequence grows with
/// every record, so a reverse range scan lists a session's messages newest first.
pub const MESSAGES: TableDefinition<(&str, u64), &[u8]> = TableDefinition::new("messages_v1");

/// Simulated network: outside users by phone digits.
pub const SIM_USERS: TableDefinition<&str, &[u8]> = TableDefinition::new("sim_users_v1");

/// Simulated network: what the network received from each session, by
/// (session id, sequence number).
pub const SIM_OUTBOX: TableDefinition<(&str, u64), &[u8]> = TableDefinition::new("sim_outbox_v1");

/// Simulated network: index of the outbox by (session id, message id) → outbox sequence.
pub const SIM_OUTBOX_IDS: TableDefinition<(&str, &str), u64> =
    TableDefinition::new("sim_outbox_ids_v1");

/// `META` key of the schema version the file was created with.
pub const SCHEMA_VERSION_KEY: &str = "schema_version";

/// `META` key of the next message sequence number.
pub const MESSAGE_SEQ_KEY: &str = "message_seq";

/// `META` key of the next sim outbox sequence number.
pub const OUTBOX_SEQ_KEY: &str = "sim_outbox_seq";

/// Lid-to-phone mapping learned per session: (session id, lid user part) → phone digits.
pub const LID_MAP: TableDefinition<(&str, &str), &str> = TableDefinition::new("lid_map_v1");

/// Registered webhooks: (session id, webhook id) → webhook document.
pub const WEBHOOKS: TableDefinition<(&str, &str), &[u8]> = TableDefinition::new("webhooks_v1");

/// The webhook dead-letter queue: (session id, sequence) → entry document. The
/// name is the spec's (`webhook_dlq`).
pub const WEBHOOK_DLQ: TableDefinition<(&str, u64), &[u8]> = TableDefinition::new("webhook_dlq");

/// `META` key of the next dead-letter sequence number.
pub const DLQ_SEQ_KEY: &str = "webhook_dlq_seq";
