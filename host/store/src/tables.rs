//! Every redb table of the gateway, in one place. Values are JSON documents;
//! the table name carries a version so a schema change adds a table instead of
//! reinterpreting old bytes.

use redb::{TableDefinition, WriteTransaction};

/// Store-wide metadata: `schema_version`, sequence counters.
pub const META: TableDefinition<&str, u64> = TableDefinition::new("meta_v1");

/// Session records by session id.
pub const SESSIONS: TableDefinition<&str, &[u8]> = TableDefinition::new("sessions_v1");

/// The live incarnation of each session by session id (see
/// `SessionRecord::incarnation`): every session-owned write reads it in its
/// own transaction and is refused when it was made for another.
pub const SESSION_INCARNATIONS: TableDefinition<&str, u64> =
    TableDefinition::new("session_incarnations_v1");

/// `META` key of the last session incarnation given.
pub const SESSION_INCARNATION_KEY: &str = "session_incarnation";

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

/// Simulated network: groups by group id (the digits before `@g.us`). Network
/// state: a group outlives the sessions that are its members.
pub const SIM_GROUPS: TableDefinition<&str, &[u8]> = TableDefinition::new("sim_groups_v1");

/// `META` key of the schema version the file was created with.
pub const SCHEMA_VERSION_KEY: &str = "schema_version";

/// `META` key of the next message sequence number.
pub const MESSAGE_SEQ_KEY: &str = "message_seq";

/// `META` key of the next sim outbox sequence number.
pub const OUTBOX_SEQ_KEY: &str = "sim_outbox_seq";

/// Media the gateway holds (inbound media, uploads), keyed `(session id,
/// media id)`: the JSON `MediaRecord`; the bytes are in the media store.
pub const MEDIA: TableDefinition<(&str, &str), &[u8]> = TableDefinition::new("media_v1");

/// API tokens by id: the JSON `TokenRecord` (never the secret, only its hash).
pub const TOKENS: TableDefinition<&str, &[u8]> = TableDefinition::new("tokens_v1");

/// Token ids by the hex SHA-256 of their secret.
pub const TOKEN_HASHES: TableDefinition<&str, &str> = TableDefinition::new("token_hashes_v1");

/// Chats of each session, keyed `(session id, chat JID)`: the JSON `ChatRecord`.
pub const CHATS: TableDefinition<(&str, &str), &[u8]> = TableDefinition::new("chats_v1");

/// Each chat's messages in order: `(session id, chat JID, message seq)` →
/// message id (the record is the `MESSAGES` row of that seq).
pub const CHAT_MESSAGES: TableDefinition<(&str, &str, u64), &str> =
    TableDefinition::new("chat_messages_v1");

/// Message records by id: `(session id, message id)` → message seq (the
/// latest record of that id).
pub const MESSAGE_IDS: TableDefinition<(&str, &str), u64> = TableDefinition::new("message_ids_v1");

/// `META` key set once every message record is in the chat index (a store
/// written before the index existed is indexed when opened).
pub const CHATS_INDEXED_KEY: &str = "chats_indexed";

/// Lid-to-phone mapping learned per session: (session id, lid user part) → phone digits.
pub const LID_MAP: TableDefinition<(&str, &str), &str> = TableDefinition::new("lid_map_v1");

/// The same mapping the other way: (session id, phone digits) → lid user part.
pub const LID_BY_PHONE: TableDefinition<(&str, &str), &str> =
    TableDefinition::new("lid_by_phone_v1");

/// `META` key set once every learned lid is in `LID_BY_PHONE` (a store
/// written before that index existed is indexed when opened).
pub const LID_REVERSE_INDEXED_KEY: &str = "lid_reverse_indexed";

/// Registered webhooks: (session id, webhook id) → webhook document.
pub const WEBHOOKS: TableDefinition<(&str, &str), &[u8]> = TableDefinition::new("webhooks_v1");

/// The webhook dead-letter queue: (session id, sequence) → entry document. The
/// name is the spec's (`webhook_dlq`).
pub const WEBHOOK_DLQ: TableDefinition<(&str, u64), &[u8]> = TableDefinition::new("webhook_dlq");

/// `META` key of the next dead-letter sequence number.
pub const DLQ_SEQ_KEY: &str = "webhook_dlq_seq";

/// Scheduled sends: (session id, scheduled id) → record document. Scheduled
/// ids are time-ordered, so a reverse range scan lists a session's newest first.
pub const SCHEDULED: TableDefinition<(&str, &str), &[u8]> = TableDefinition::new("scheduled_v1");

/// The request body of each scheduled send that is not yet terminal:
/// (session id, scheduled id) → the JSON body as posted (without `send_at`).
pub const SCHEDULED_BODIES: TableDefinition<(&str, &str), &[u8]> =
    TableDefinition::new("scheduled_bodies_v1");

/// Every scheduled id → its session id: the fleet-wide listing, newest first.
pub const SCHEDULED_IDS: TableDefinition<&str, &str> = TableDefinition::new("scheduled_ids_v1");

/// The scheduler's due index: (due Unix milliseconds, scheduled id) → session
/// id, one row per scheduled send with work left; the first row is the next wake-up.
pub const SCHEDULED_DUE: TableDefinition<(u64, &str), &str> =
    TableDefinition::new("scheduled_due_v1");

/// Due sends parked until their session can send: (session id, scheduled id)
/// → the wait's deadline (Unix milliseconds, also their due-index key).
pub const SCHEDULED_WAITING: TableDefinition<(&str, &str), u64> =
    TableDefinition::new("scheduled_waiting_v1");

/// Blast jobs: (session id, job sequence) → job document. The sequence grows
/// with every job of the instance, so it is also the creation order.
pub const BLAST_JOBS: TableDefinition<(&str, u64), &[u8]> = TableDefinition::new("blast_jobs_v1");

/// Index of blast jobs: (session id, job id) → job sequence.
pub const BLAST_JOB_IDS: TableDefinition<(&str, &str), u64> =
    TableDefinition::new("blast_job_ids_v1");

/// The body of each blast job, apart so status checks never decode media:
/// (session id, job sequence) → body document.
pub const BLAST_BODIES: TableDefinition<(&str, u64), &[u8]> =
    TableDefinition::new("blast_bodies_v1");

/// Blast recipients: (session id, job sequence, recipient id) → recipient document.
pub const BLAST_RECIPIENTS: TableDefinition<(&str, u64, u64), &[u8]> =
    TableDefinition::new("blast_recipients_v1");

/// Recipients a blast of the session sent to: (session id, JID) → sequence of
/// the job that sent first (for `dedup_across_jobs`).
pub const BLAST_SENT: TableDefinition<(&str, &str), u64> = TableDefinition::new("blast_sent_v1");

/// `META` key of the next blast job sequence number.
pub const BLAST_SEQ_KEY: &str = "blast_job_seq";

/// The contact directory of each session: (session id, user JID) → stored contact document.
pub const CONTACTS: TableDefinition<(&str, &str), &[u8]> = TableDefinition::new("contacts_v1");

/// Simulated network: each session's address book, (session id, phone) → entry document.
pub const SIM_ADDRESS_BOOK: TableDefinition<(&str, &str), &[u8]> =
    TableDefinition::new("sim_address_book_v1");

/// `META` key of the next sim address-book version.
pub const ADDRESS_BOOK_SEQ_KEY: &str = "sim_address_book_seq";

/// Simulated network: the app-state version each session's device holds,
/// (session id, collection) → version.
pub const SIM_APP_STATE: TableDefinition<(&str, &str), u64> =
    TableDefinition::new("sim_app_state_v1");

/// Simulated network: trust contact tokens in each session's device store,
/// (session id, JID) → token document.
pub const SIM_TCTOKENS: TableDefinition<(&str, &str), &[u8]> =
    TableDefinition::new("sim_tctokens_v1");

/// Simulated network: the accounts each session's account blocked,
/// (session id, user JID) → when (Unix seconds).
pub const SIM_BLOCKS: TableDefinition<(&str, &str), i64> = TableDefinition::new("sim_blocks_v1");

/// Simulated network: each session's own profile beside its push name,
/// (session id, field: `about` or `picture`) → the about text, or the
/// picture's content hash.
pub const SIM_PROFILES: TableDefinition<(&str, &str), &str> =
    TableDefinition::new("sim_profiles_v1");

/// Plugins: plugin id → plugin document.
pub const PLUGINS: TableDefinition<&str, &[u8]> = TableDefinition::new("plugins_v1");

/// Plugin component bytes: plugin id → the uploaded component.
pub const PLUGIN_BLOBS: TableDefinition<&str, &[u8]> = TableDefinition::new("plugin_blobs_v1");

/// Plugin bindings: binding id → binding document.
pub const PLUGIN_BINDINGS: TableDefinition<&str, &[u8]> =
    TableDefinition::new("plugin_bindings_v1");

/// Each plugin's private key-value store: (plugin id, key) → value.
pub const PLUGIN_KV: TableDefinition<(&str, &str), &[u8]> = TableDefinition::new("plugin_kv_v1");

/// WhatsApp backend: the device record (identity, keys, account) of each
/// session, session id → device document.
pub const WA_DEVICE: TableDefinition<&str, &[u8]> = TableDefinition::new("wa_device_v1");

/// WhatsApp backend: Signal protocol state (identities, sessions, pre-keys,
/// signed pre-keys, sender keys), (session id, kind, key) → record bytes.
pub const WA_SIGNAL: TableDefinition<(&str, &str, &[u8]), &[u8]> =
    TableDefinition::new("wa_signal_v1");

/// WhatsApp backend: app-state sync keys, collection versions and mutation
/// MACs, (session id, kind, key) → bytes.
pub const WA_APP_STATE: TableDefinition<(&str, &str, &[u8]), &[u8]> =
    TableDefinition::new("wa_app_state_v1");

/// WhatsApp backend: protocol bookkeeping (sender-key devices, lid/phone
/// mapping, base keys, device lists, group metadata, trust tokens, sent
/// messages kept for retries, pending inbound, message secrets),
/// (session id, kind, key) → bytes.
pub const WA_PROTOCOL: TableDefinition<(&str, &str, &[u8]), &[u8]> =
    TableDefinition::new("wa_protocol_v1");

/// WhatsApp backend: the raw message protos kept for quotes and poll votes
/// (sent and received), (session id, message id) → message record (binary,
/// see `store/whatsapp/messages.rs`). Message history, not device state: a
/// logout keeps it, deleting the session drops it.
pub const WA_MESSAGES: TableDefinition<(&str, &str), &[u8]> =
    TableDefinition::new("wa_messages_v1");

/// WhatsApp backend: `WA_MESSAGES` in time order, (session id, timestamp,
/// message id) → nothing, so the oldest rows of a session are pruned without
/// reading the records.
pub const WA_MESSAGES_BY_TIME: TableDefinition<(&str, i64, &str), ()> =
    TableDefinition::new("wa_messages_by_time_v1");

/// WhatsApp backend: how many `WA_MESSAGES` rows each session has, session
/// id → count (kept with every write, so the bound is checked without a scan).
pub const WA_MESSAGE_COUNTS: TableDefinition<&str, u64> =
    TableDefinition::new("wa_message_counts_v1");

/// WhatsApp backend: each chat's disappearing-messages timer as last seen
/// on the network, (session id, chat JID) → (seconds, `0` for none; when
/// the network said so, Unix seconds). Chat state, like the message
/// history: a logout keeps it, deleting the session drops it.
pub const WA_CHAT_TIMERS: TableDefinition<(&str, &str), (u32, i64)> =
    TableDefinition::new("wa_chat_timers_v1");

/// The event log: every recorded envelope by its gateway-wide sequence
/// number → the envelope's Unix seconds (8 bytes, little-endian) then its
/// JSON. Kept for a while (by age and count) so an event-stream client that
/// reconnects gets what it missed.
pub const EVENT_LOG: TableDefinition<u64, &[u8]> = TableDefinition::new("event_log_v1");

/// `META` key of the highest event sequence number ever given (the log may
/// have pruned it): a restart goes on above it.
pub const EVENT_SEQ_KEY: &str = "event_seq";

/// `META` key of the highest sequence number the event log pruned: a
/// stream client asking to resume from below it has missed events for good.
pub const EVENT_PRUNED_KEY: &str = "event_log_pruned_through";

/// `META` key of how many rows the event log holds.
pub const EVENT_COUNT_KEY: &str = "event_log_count";

/// The webhook outbox: every delivery owed, (session id, URL, event
/// sequence number, delivery id) → the pending delivery (see `outbox.rs`
/// for the layout), so a session's deliveries to a URL read in event order
/// and each session's are one key range.
pub const WEBHOOK_OUTBOX: TableDefinition<(&str, &str, u64, &str), &[u8]> =
    TableDefinition::new("webhook_outbox_v2");

/// How many deliveries each session has pending for each URL, (session id,
/// URL) → count (kept with every write, so the backlog limit is checked
/// without a scan).
pub const WEBHOOK_OUTBOX_DEPTH: TableDefinition<(&str, &str), u64> =
    TableDefinition::new("webhook_outbox_depth_v2");

/// The outbox as the release before per-session backlogs kept it, (URL,
/// sequence number, delivery id) → the same row layout; moved into
/// [`WEBHOOK_OUTBOX`] at open.
pub const WEBHOOK_OUTBOX_V1: TableDefinition<(&str, u64, &str), &[u8]> =
    TableDefinition::new("webhook_outbox_v1");

/// The depths of [`WEBHOOK_OUTBOX_V1`], by URL; emptied with it at open.
pub const WEBHOOK_OUTBOX_DEPTH_V1: TableDefinition<&str, u64> =
    TableDefinition::new("webhook_outbox_depth_v1");

/// The open table in `slot`, opened in `tx` first if need be: for writers
/// that keep tables open across many writes of one transaction and close
/// them (set the slot to `None`) before anything else opens them.
pub(crate) fn opened<'s, 't, K: redb::Key + 'static, V: redb::Value + 'static>(
    slot: &'s mut Option<redb::Table<'t, K, V>>,
    tx: &'t WriteTransaction,
    def: redb::TableDefinition<'static, K, V>,
) -> super::StoreResult<&'s mut redb::Table<'t, K, V>> {
    let table = match slot.take() {
        Some(t) => t,
        None => tx.open_table(def)?,
    };
    Ok(slot.insert(table))
}
