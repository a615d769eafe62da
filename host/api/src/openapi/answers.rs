//! Answers that handlers build as JSON documents in place: their shapes, for
//! the OpenAPI document. Each names the route that gives it. They describe;
//! they are never built, hence `dead_code` is allowed here.

#![allow(dead_code)]

use std::collections::BTreeMap;

use serde::Serialize;
use utoipa::ToSchema;

use crate::domain::message::MessageRecord;
use crate::sessions::SessionOut;

/// `GET /livez`.
#[derive(Serialize, ToSchema)]
pub struct Live {
    /// `ok`.
    pub status: String,
}

/// `GET /readyz`: `200` when every check is `ok`, else `503`.
#[derive(Serialize, ToSchema)]
pub struct Ready {
    /// `ready` or `unavailable`.
    pub status: String,
    /// With `unavailable`: the first failing check.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Each check (`store`, `blast_worker`, `scheduler`, `webhook_workers`): `ok` or `down`.
    pub checks: BTreeMap<String, String>,
}

/// `GET /api/v1/sessions`.
#[derive(Serialize, ToSchema)]
pub struct SessionList {
    /// How many sessions.
    pub count: usize,
    /// Every session.
    pub sessions: Vec<SessionOut>,
}

/// `GET /api/v1/sessions/{id}/status`: the session and its webhooks' delivery health.
#[derive(Serialize, ToSchema)]
pub struct SessionStatusOut {
    /// The session.
    #[serde(flatten)]
    pub session: SessionOut,
    /// Delivery diagnostics.
    pub diagnostics: Diagnostics,
}

/// The `diagnostics` of a session's status.
#[derive(Serialize, ToSchema)]
pub struct Diagnostics {
    /// One entry per webhook URL of the session.
    pub webhooks: Vec<WebhookHealth>,
}

/// Delivery health of one webhook URL.
#[derive(Serialize, ToSchema)]
pub struct WebhookHealth {
    /// The URL.
    pub url: String,
    /// Whether the URL is suspended (deliveries skipped, one probe at a time).
    pub circuit_open: bool,
    /// Failed attempts in a row.
    pub consecutive_failures: u32,
    /// Seconds until the next probe, while suspended.
    pub retry_in_seconds: Option<u64>,
    /// The last failure.
    pub last_error: Option<String>,
    /// Deliveries skipped while suspended.
    pub skipped_while_suspended: u64,
}

/// `GET /api/v1/sessions/{id}/qr`.
#[derive(Serialize, ToSchema)]
pub struct QrOut {
    /// The current QR code's content (rotates).
    pub qr: String,
    /// Unix seconds when it is replaced.
    pub expires_at: i64,
}

/// `POST /api/v1/sessions/{id}/pair`.
#[derive(Serialize, ToSchema)]
pub struct PairOut {
    /// The code to type on the phone, `ABCD-EFGH`.
    pub pair_code: String,
}

/// `POST /api/v1/sessions/{id}/pause` and `/resume`.
#[derive(Serialize, ToSchema)]
pub struct PausedOut {
    /// Whether the session is now paused.
    pub paused: bool,
}

/// `200` of `POST /api/v1/sessions/{id}/messages/{kind}`: sent now.
#[derive(Serialize, ToSchema)]
pub struct SentOut {
    /// The network's message id.
    pub message_id: String,
    /// The chat JID it went to.
    pub to: String,
    /// Unix seconds.
    pub timestamp: i64,
}

/// `202` of `POST /api/v1/sessions/{id}/messages/{kind}` with a future `send_at`.
#[derive(Serialize, ToSchema)]
pub struct ScheduledAccepted {
    /// The scheduled send's id.
    pub scheduled_id: String,
    /// ISO-8601 time it is due.
    pub send_at: String,
    /// `scheduled`.
    pub status: String,
}

/// `GET /api/v1/sessions/{id}/messages`: newest first.
#[derive(Serialize, ToSchema)]
pub struct MessageList {
    /// The page of message records.
    pub messages: Vec<MessageRecord>,
    /// Records on this page.
    pub count: usize,
    /// The page size used.
    pub limit: usize,
    /// Records skipped.
    pub offset: usize,
}

/// `GET /api/v1/sessions/{id}/groups`.
#[derive(Serialize, ToSchema)]
pub struct GroupList {
    /// How many groups.
    pub total: usize,
    /// The groups the account is a member of.
    pub groups: Vec<crate::domain::group::GroupSummary>,
}

/// `201` of `POST /api/v1/sessions/{id}/groups`.
#[derive(Serialize, ToSchema)]
pub struct GroupCreated {
    /// The new group's JID.
    pub group_jid: String,
    /// What happened to each requested participant.
    pub participants: Vec<crate::domain::group::ParticipantResult>,
}

/// `POST`/`DELETE …/groups/{group}/participants`.
#[derive(Serialize, ToSchema)]
pub struct ParticipantResults {
    /// One result per requested JID.
    pub results: Vec<crate::domain::group::ParticipantResult>,
}

/// `GET …/groups/{group}/invite-link`.
#[derive(Serialize, ToSchema)]
pub struct InviteLink {
    /// `https://chat.whatsapp.com/<code>`.
    pub invite_link: String,
}

/// `201` of `POST /api/v1/sessions/{id}/blast`.
#[derive(Serialize, ToSchema)]
pub struct BlastCreated {
    /// The job id.
    pub job_id: String,
    /// Recipients queued (after dedup).
    pub total: usize,
    /// Recipients dropped as duplicates.
    pub skipped_dup: usize,
    /// `pending` (or `running`).
    pub status: switchboard_runtime::blast::model::JobStatus,
}

/// A blast job as the API shows it.
#[derive(Serialize, ToSchema)]
pub struct BlastJobView {
    /// The job id.
    pub id: String,
    /// The job's session.
    pub session_id: String,
    /// The send kind, or a plugin's blast endpoint.
    pub endpoint: String,
    /// Where the job is.
    pub status: switchboard_runtime::blast::model::JobStatus,
    /// Pacing and retry options.
    pub options: switchboard_runtime::blast::model::BlastOptions,
    /// Recipients in the job.
    pub total: u64,
    /// Sent.
    pub sent_count: u64,
    /// Failed for good.
    pub failed_count: u64,
    /// Dead-lettered (retryable with `/retry`).
    pub dlq_count: u64,
    /// Skipped as duplicates.
    pub skipped_dup_count: u64,
    /// ISO-8601 start time asked for.
    pub send_at: Option<String>,
    /// ISO-8601.
    pub created_at: String,
    /// ISO-8601.
    pub started_at: Option<String>,
    /// ISO-8601.
    pub finished_at: Option<String>,
}

/// `GET /api/v1/blasts` and `GET /api/v1/sessions/{id}/blasts`.
#[derive(Serialize, ToSchema)]
pub struct BlastJobList {
    /// How many jobs.
    pub count: usize,
    /// Newest first.
    pub jobs: Vec<BlastJobView>,
}

/// One recipient of a blast job.
#[derive(Serialize, ToSchema)]
pub struct BlastRecipientView {
    /// Position in the job.
    pub id: u64,
    /// The recipient's JID.
    pub recipient: String,
    /// Where it is.
    pub status: switchboard_runtime::blast::model::RecipientStatus,
    /// Attempts made.
    pub attempts: u32,
    /// The last failure.
    pub last_error: Option<String>,
    /// The message id chosen for it.
    pub message_id: Option<String>,
    /// ISO-8601.
    pub updated_at: String,
}

/// `GET …/blasts/{job}/recipients`.
#[derive(Serialize, ToSchema)]
pub struct BlastRecipientList {
    /// Recipients on this page.
    pub count: usize,
    /// The page.
    pub recipients: Vec<BlastRecipientView>,
}

/// `GET /api/v1/scheduled` and `GET /api/v1/sessions/{id}/scheduled`.
#[derive(Serialize, ToSchema)]
pub struct ScheduledList {
    /// The page of scheduled sends.
    pub scheduled: Vec<crate::scheduled::ScheduledOut>,
    /// Sends on this page.
    pub count: usize,
    /// The page size used.
    pub limit: usize,
    /// Sends skipped.
    pub offset: usize,
}

/// `GET /api/v1/sessions/{id}/contacts`.
#[derive(Serialize, ToSchema)]
pub struct ContactPage {
    /// The page of the directory.
    pub contacts: Vec<crate::domain::contact::StoredContact>,
    /// Matching contacts in all.
    pub total: usize,
    /// The page size used.
    pub limit: usize,
    /// Contacts skipped.
    pub offset: usize,
}

/// One phone of `POST …/contacts/check`.
#[derive(Serialize, ToSchema)]
pub struct PhoneCheckOut {
    /// The phone as given.
    pub phone: String,
    /// Whether an account has it.
    pub exists: bool,
    /// The account's JID.
    pub jid: Option<String>,
}

/// `POST …/contacts/check`.
#[derive(Serialize, ToSchema)]
pub struct PhoneChecks {
    /// One result per phone, in order.
    pub results: Vec<PhoneCheckOut>,
}

/// `POST …/contacts/users`.
#[derive(Serialize, ToSchema)]
pub struct UserInfos {
    /// One entry per JID.
    pub users: Vec<switchboard_runtime::network::contacts::UserInfo>,
}

/// `POST …/spam/report`.
#[derive(Serialize, ToSchema)]
pub struct SpamReported {
    /// Always `true`.
    pub success: bool,
    /// The network's report id.
    pub report_id: String,
}

/// `POST …/tctoken/issue`.
#[derive(Serialize, ToSchema)]
pub struct IssuedTokens {
    /// One token per JID.
    pub tokens: Vec<switchboard_runtime::network::account::IssuedToken>,
}

/// `GET …/tctoken/{jid}`.
#[derive(Serialize, ToSchema)]
pub struct TokenLookup {
    /// The contact's JID.
    pub jid: String,
    /// Unix seconds the contact's token was received; `null` when not found.
    pub token_timestamp: Option<i64>,
    /// Unix seconds this account last sent its own token; `null` when not found.
    pub sender_timestamp: Option<i64>,
    /// Whether a token is held.
    pub found: bool,
    /// Whether it has expired.
    pub expired: bool,
}

/// `GET …/tctoken/list`.
#[derive(Serialize, ToSchema)]
pub struct TokenJids {
    /// JIDs with a token.
    pub jids: Vec<String>,
}

/// `DELETE …/tctoken/expired`.
#[derive(Serialize, ToSchema)]
pub struct TokensPruned {
    /// Tokens removed.
    pub pruned_count: usize,
}

/// `GET`/`PUT …/history-sync`.
#[derive(Serialize, ToSchema)]
pub struct HistorySync {
    /// Whether history sync is skipped at the next pairing.
    pub skip_history_sync: bool,
}

/// `201` of `POST …/webhooks`.
#[derive(Serialize, ToSchema)]
pub struct WebhookCreated {
    /// The webhook id.
    pub id: String,
    /// The URL.
    pub url: String,
    /// The subscribed event names (or `all`).
    pub events: Vec<String>,
    /// Whether deliveries are attempted.
    pub enabled: bool,
}

/// `GET …/webhooks`.
#[derive(Serialize, ToSchema)]
pub struct WebhookList {
    /// The session's webhooks.
    pub webhooks: Vec<crate::webhooks::WebhookOut>,
    /// How many.
    pub count: usize,
}

/// `GET …/webhooks/dlq`.
#[derive(Serialize, ToSchema)]
pub struct DlqList {
    /// Dead-lettered deliveries.
    pub entries: Vec<crate::webhooks::DlqOut>,
    /// How many.
    pub count: usize,
}

/// `GET /api/v1/plugins`.
#[derive(Serialize, ToSchema)]
pub struct PluginList {
    /// How many.
    pub count: usize,
    /// Every plugin.
    pub plugins: Vec<switchboard_plugins::PluginView>,
}

/// `GET /api/v1/plugins/bindings`.
#[derive(Serialize, ToSchema)]
pub struct BindingList {
    /// How many.
    pub count: usize,
    /// Every binding.
    pub bindings: Vec<switchboard_plugins::model::Binding>,
}

/// `GET /api/v1/sim/users`.
#[derive(Serialize, ToSchema)]
pub struct SimUserList {
    /// The registered outside users.
    pub users: Vec<switchboard_runtime::store::SimUser>,
    /// How many.
    pub count: usize,
}

/// `POST /api/v1/sim/sessions/{id}/scan`.
#[derive(Serialize, ToSchema)]
pub struct Scanned {
    /// Always `true`.
    pub success: bool,
    /// The linked account's JID.
    pub jid: String,
    /// Its phone digits.
    pub phone_number: String,
}

/// `POST /api/v1/sim/sessions/{id}/inbound`.
#[derive(Serialize, ToSchema)]
pub struct Injected {
    /// The delivered message's id.
    pub message_id: String,
}

/// `GET /api/v1/sim/sessions/{id}/outbox`.
#[derive(Serialize, ToSchema)]
pub struct Outbox {
    /// What the network received from the session, oldest first.
    pub messages: Vec<switchboard_runtime::store::OutboxEntry>,
    /// How many.
    pub count: usize,
}

/// `GET /api/v1/sim/sessions/{id}/address-book`.
#[derive(Serialize, ToSchema)]
pub struct AddressBook {
    /// The account's address book.
    pub entries: Vec<switchboard_runtime::store::SimAddressEntry>,
    /// How many.
    pub count: usize,
}

/// `POST /api/v1/sim/sessions/{id}/lock`.
#[derive(Serialize, ToSchema)]
pub struct Locked {
    /// Always `true`.
    pub success: bool,
    /// The reason the session will see.
    pub reason: String,
}

/// `GET /api/v1/sim/sessions/{id}/spam-reports`.
#[derive(Serialize, ToSchema)]
pub struct SpamReports {
    /// Reports the network received from the session.
    pub reports: Vec<switchboard_runtime::network::account::SpamReport>,
    /// How many.
    pub count: usize,
}

/// `POST /api/v1/sim/sessions/{id}/events`.
#[derive(Serialize, ToSchema)]
pub struct EventInjected {
    /// Always `true`.
    pub success: bool,
    /// The delivered event's name.
    pub event: crate::domain::event::EventName,
}

/// `POST /api/v1/sim/groups/join`.
#[derive(Serialize, ToSchema)]
pub struct Joined {
    /// The group joined.
    pub group_jid: String,
    /// `joined`, or `requested` when the group approves members.
    pub status: String,
}
