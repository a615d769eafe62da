//! The send core: the one path every outbound message takes — from the API
//! (and the broker's send queue), from blasts and from the scheduler. It
//! checks the session can send, paces the ordinary sends (`pacing.rs`: the
//! API's and the broker's; blasts and the scheduler pace themselves), hands
//! the validated request to the network, and stores the message record.
//! A media URL is checked against the egress guard's public-address rule
//! here, before any backend sees the send, so a URL that leads inward is
//! refused alike on every backend (the whatsapp backend's fetch then
//! connects only to addresses the guard checks again, pinned).
//! Nothing else calls [`crate::network::NetworkSession::send`]; integration
//! plugins reach it through `plugin_sends.rs`.

mod bounded;
mod failure;
mod pacing;
mod plugin_sends;

pub use bounded::{BoundedSend, abandoned_reason};
pub use failure::SendFailure;
pub use pacing::{Pacer, PacingConfig, PacingMode, retry_after_secs};
pub use plugin_sends::PluginSends;

use std::sync::Arc;
use std::time::Duration;

use crate::domain::hooks::MessageTransform;
use crate::domain::message::{Direction, MessageRecord};
use crate::domain::send::{MediaSource, SendRequest};
use crate::media::{Media, MediaError};
use crate::network::NetworkError;
use crate::network::chats::ChatState;
use crate::sessions::{SessionError, Sessions};
use crate::store::Store;
use switchboard_egress::{MediaUrlConfig, Refusal};

/// Longest the check of a media URL waits for its host to resolve.
const MEDIA_URL_RESOLVE_TIMEOUT: Duration = Duration::from_secs(5);

/// The send core; cheap to clone.
#[derive(Clone)]
pub struct SendCore {
    sessions: Sessions,
    store: Store,
    media: Media,
    transforms: Option<Arc<dyn MessageTransform>>,
    typing: Duration,
    pacer: Pacer,
    media_urls: MediaUrlConfig,
}

impl SendCore {
    /// A send core over the session registry, the store, and the media a
    /// send may name by `media_id`.
    pub fn new(sessions: Sessions, store: Store, media: Media) -> Self {
        Self {
            sessions,
            store,
            media,
            transforms: None,
            typing: Duration::ZERO,
            pacer: Pacer::default(),
            media_urls: MediaUrlConfig::default(),
        }
    }

    /// The same core holding media URLs to `config`'s public-address rule
    /// (internal addresses refused unless it allows them, the default).
    pub fn with_media_urls(mut self, config: MediaUrlConfig) -> Self {
        self.media_urls = config;
        self
    }

    /// The same core pacing its ordinary sends ([`SendCore::send`]) by
    /// `pacer`; none are paced by default.
    pub fn with_pacing(mut self, pacer: Pacer) -> Self {
        self.pacer = pacer;
        self
    }

    /// The pacing of its ordinary sends, for the other ordinary sends (the
    /// message actions) to share.
    pub fn pacer(&self) -> Pacer {
        self.pacer.clone()
    }

    /// The same core showing typing for `typing` before each send of
    /// [`SendCore::send_typed`] (the blasts' and the scheduler's).
    pub fn with_typing(mut self, typing: Duration) -> Self {
        self.typing = typing;
        self
    }

    /// [`SendCore::send_with_id`], after showing the recipient typing for
    /// the configured time (none by default), as a person would before
    /// writing. Typing that cannot be shown does not stop the send.
    pub async fn send_typed(
        &self,
        session_id: &str,
        request: SendRequest,
        message_id: &str,
    ) -> Result<MessageRecord, SessionError> {
        self.check_hold(session_id, &request)?;
        if !self.typing.is_zero()
            && let Ok((client, _)) = self.sessions.sender(session_id)
        {
            match client
                .send_chat_state(&request.to, ChatState::Composing)
                .await
            {
                Ok(()) => tokio::time::sleep(self.typing).await,
                Err(e) => {
                    tracing::debug!(session = %session_id, error = %e, "typing could not be shown before a send");
                }
            }
        }
        self.send_with_id(session_id, request, message_id).await
    }

    /// The same core with message transforms (the plugins') in its path.
    pub fn with_plugins(mut self, transforms: impl MessageTransform) -> Self {
        self.transforms = Some(Arc::new(transforms));
        self
    }

    /// Sends one validated request on a session as an ordinary send (the
    /// API's and the broker's), paced by the session's send pacing, and
    /// records it; under `message_id` when the caller chose one (the broker
    /// does, one per command), else under a new one.
    ///
    /// Refused without touching the network when the session is unknown,
    /// paused or not logged in, or when its pacing refuses the send
    /// ([`SessionError::SendPaced`]); a send its pacing queues waits here.
    pub async fn send(
        &self,
        session_id: &str,
        request: SendRequest,
        message_id: Option<&str>,
    ) -> Result<MessageRecord, SessionError> {
        let message_id = message_id.map_or_else(new_message_id, str::to_owned);
        self.deliver(session_id, request, &message_id, true).await
    }

    /// Sends under a caller-chosen message id. Blasts and the scheduler choose
    /// the id before the first attempt and keep it, so a send interrupted by a
    /// crash can be checked with [`SendCore::has_sent`] instead of repeated,
    /// and a repeat of the same id is one message on the network. Not paced:
    /// blasts and the scheduler pace their own sends.
    pub async fn send_with_id(
        &self,
        session_id: &str,
        request: SendRequest,
        message_id: &str,
    ) -> Result<MessageRecord, SessionError> {
        self.deliver(session_id, request, message_id, false).await
    }

    /// Sends and records, paced when `paced`: pacing comes after every check
    /// that can refuse the send, so a refused send takes no slot, and just
    /// before the network, so the slot's time is the send's.
    async fn deliver(
        &self,
        session_id: &str,
        request: SendRequest,
        message_id: &str,
        paced: bool,
    ) -> Result<MessageRecord, SessionError> {
        let (client, account) = self.sessions.sender(session_id)?;
        // Again for a typed send: a lock can be learned while it types.
        self.check_hold(session_id, &request)?;
        // Plugin transforms see the validated send last, just before the network.
        let request = match &self.transforms {
            Some(t) => t.transform(session_id, request)?,
            None => request,
        };
        if let Some(MediaSource::Stored(media_id)) = request.content.media_source() {
            self.media
                .for_send(session_id, media_id)
                .await
                .map_err(|e| SessionError::Invalid {
                    field: "media_id",
                    message: match e {
                        MediaError::NotFound { .. } => {
                            format!("names no media of session `{session_id}` (upload it first)")
                        }
                        other => format!("cannot be sent: {other}"),
                    },
                })?;
        }
        if let Some(MediaSource::Url(url)) = request.content.media_source() {
            self.check_media_url(url).await?;
        }
        let (client, account) = if paced {
            self.pacer
                .pace(&self.sessions, session_id, (client, account))
                .await?
        } else {
            (client, account)
        };
        let receipt = match client.send(message_id, &request.to, &request.content).await {
            Ok(receipt) => receipt,
            Err(NetworkError::ReachOutTimelock { until }) => {
                return Err(self.timelock_refusal(session_id, until));
            }
            Err(e) => return Err(e.into()),
        };
        let record = MessageRecord {
            message_id: receipt.message_id,
            session_id: session_id.to_owned(),
            direction: Direction::Outbound,
            chat: request.to.to_string(),
            sender: account.map(|a| a.jid),
            kind: request.content.kind().as_str().to_owned(),
            body: serde_json::to_value(&request.content).map_err(crate::store::StoreError::from)?,
            timestamp: receipt.timestamp,
        };
        // The network has the message: a failure to record it must not turn
        // into a retry that sends it twice, so it is logged, not returned.
        if let Err(e) = self.store.append_message_async(&record).await {
            tracing::error!(session = %session_id, message_id = %record.message_id, error = %e, "sent message could not be recorded");
        }
        tracing::info!(session = %session_id, kind = %record.kind, message_id = %record.message_id, "message sent");
        Ok(record)
    }
}

impl SendCore {
    /// Refuses a send to someone the session's account has no chat with
    /// while the account is under a reach-out timelock: sending it would
    /// only be refused again, and a run of refused first contacts is what
    /// WhatsApp punishes.
    fn check_hold(&self, session_id: &str, request: &SendRequest) -> Result<(), SessionError> {
        match self.sessions.hold_for(session_id, &request.to) {
            Some(lock) => Err(SessionError::Timelocked {
                session: session_id.to_owned(),
                lock,
                refused: false,
            }),
            None => Ok(()),
        }
    }

    /// What a send refused for a reach-out timelock becomes: the lock is
    /// recorded (so the next first contacts are held), and the send fails
    /// with it; a lock the network says is already over is an ordinary
    /// failed attempt.
    fn timelock_refusal(&self, session_id: &str, until: Option<i64>) -> SessionError {
        match self.sessions.note_timelock(session_id, until) {
            Some(lock) => SessionError::Timelocked {
                session: session_id.to_owned(),
                lock,
                refused: true,
            },
            None => SessionError::Network(NetworkError::Failed(
                "WhatsApp refused the message (error 463) for a reach-out timelock that has ended since; try again".into(),
            )),
        }
    }

    /// Refuses a media URL that leads to an internal address (an IP literal,
    /// or a name that resolves only to such addresses) unless the operator
    /// allows them, as [`SessionError::Invalid`] naming `url`. A name that
    /// does not resolve is left to the backend: the sim never fetches, the
    /// whatsapp backend's fetch then reaches nothing and says so. Every send
    /// is checked here before the network; the API also asks when it stores
    /// a send for later (scheduled, a blast), to refuse it at once.
    pub async fn check_media_url(&self, raw: &str) -> Result<(), SessionError> {
        let invalid = |message: String| SessionError::Invalid {
            field: "url",
            message,
        };
        let url = url::Url::parse(raw).map_err(|e| invalid(format!("is not a valid URL: {e}")))?;
        let within = MEDIA_URL_RESOLVE_TIMEOUT.min(self.media_urls.timeout);
        match self.media_urls.guard().check_url(&url, within).await {
            Ok(()) => Ok(()),
            Err(Refusal::Internal(blocked)) => Err(invalid(blocked.message().to_owned())),
            Err(Refusal::Unresolved(why)) => {
                tracing::debug!(url = %raw, %why, "a media URL's host did not resolve when checked");
                Ok(())
            }
        }
    }

    /// Whether the network already has a message with this id from the
    /// session; `None` when the backend cannot tell.
    pub async fn has_sent(
        &self,
        session_id: &str,
        message_id: &str,
    ) -> Result<Option<bool>, SessionError> {
        let client = self.sessions.client(session_id)?;
        Ok(client.has_sent(message_id).await?)
    }
}

/// A new message id in the network's style: `3EB0` and 16 upper-case hex digits.
pub fn new_message_id() -> String {
    let b = uuid::Uuid::new_v4().into_bytes();
    let n = u64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
    format!("3EB0{n:016X}")
}

#[cfg(test)]
mod tests {
    use super::new_message_id;

    #[test]
    fn message_ids_look_like_the_networks_and_do_not_repeat() {
        let a = new_message_id();
        assert_eq!(a.len(), 20);
        assert!(a.starts_with("3EB0"));
        assert!(
            a[4..]
                .chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_lowercase())
        );
        assert_ne!(a, new_message_id());
    }
}
