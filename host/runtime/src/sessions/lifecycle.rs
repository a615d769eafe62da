//! Connection lifecycle of a session: connect, disconnect, logout, pause,
//! resume, pairing by code and the current QR code.

use super::{SessionError, SessionInfo, Sessions};
use crate::domain::jid::Jid;
use crate::domain::session::SessionStatus;

impl Sessions {
    /// Connects (and remembers to reconnect after a restart).
    pub async fn connect(&self, id: &str) -> Result<SessionInfo, SessionError> {
        self.live(id)?;
        let record = self.record(id)?;
        if record.paused {
            return Err(SessionError::Paused(id.to_owned()));
        }
        self.modify(id, |r| r.want_connected = true)?;
        // A manual connect lifts an account-lock cooldown and goes at once.
        self.live(id)?.watch.lift();
        self.connect_live(id).await?;
        self.get(id)
    }

    pub(super) async fn connect_live(&self, id: &str) -> Result<(), SessionError> {
        let live = self.live(id)?;
        live.update(|s| {
            if s.status == SessionStatus::Disconnected {
                s.status = SessionStatus::Connecting;
            }
        });
        if let Err(e) = live.client.connect().await {
            live.update(|s| {
                s.status = SessionStatus::Disconnected;
                s.last_error = Some(e.to_string());
            });
            return Err(e.into());
        }
        Ok(())
    }

    /// Disconnects and keeps the credentials.
    pub async fn disconnect(&self, id: &str) -> Result<SessionInfo, SessionError> {
        let live = self.live(id)?;
        self.modify(id, |r| r.want_connected = false)?;
        live.watch.expect_requested_close();
        live.client.disconnect().await?;
        live.update(|s| s.status = SessionStatus::Disconnected);
        self.get(id)
    }

    /// Unlinks the account; the next connect shows a QR code again.
    pub async fn logout(&self, id: &str) -> Result<SessionInfo, SessionError> {
        let live = self.live(id)?;
        live.watch.expect_requested_close();
        live.client.logout().await?;
        self.modify(id, |r| {
            r.account = None;
            r.want_connected = false;
        })?;
        live.update(|s| s.status = SessionStatus::Disconnected);
        self.get(id)
    }

    /// Takes the session deliberately offline; it stays paused across restarts.
    pub async fn pause(&self, id: &str) -> Result<(), SessionError> {
        let live = self.live(id)?;
        self.modify(id, |r| r.paused = true)?;
        live.watch.expect_requested_close();
        live.client.disconnect().await?;
        live.update(|s| s.status = SessionStatus::Disconnected);
        tracing::info!(session = %id, "session paused");
        Ok(())
    }

    /// Ends a pause and reconnects when the session was meant to be connected.
    pub async fn resume(&self, id: &str) -> Result<(), SessionError> {
        self.live(id)?;
        let record = self.modify(id, |r| r.paused = false)?;
        tracing::info!(session = %id, "session resumed");
        if record.want_connected {
            self.connect_live(id).await?;
        }
        Ok(())
    }

    /// Asks for a pair code for `phone`, connecting first when needed.
    pub async fn pair(&self, id: &str, phone: &str) -> Result<String, SessionError> {
        let digits = Jid::user(phone)
            .map_err(|e| SessionError::Invalid {
                field: "phone_number",
                message: format!("is not a phone number: {e}"),
            })?
            .user_part()
            .to_owned();
        let record = self.record(id)?;
        if record.account.is_some() {
            return Err(SessionError::WrongState(format!(
                "session `{id}` is already paired; log it out to pair another account"
            )));
        }
        let taken = self.inner.store.list_sessions()?.into_iter().any(|r| {
            r.id != id
                && (r.phone_hint.as_deref() == Some(&digits)
                    || r.account.as_ref().is_some_and(|a| a.phone == digits))
        });
        if taken {
            return Err(SessionError::PhoneTaken(digits));
        }
        if self.live(id)?.state().status == SessionStatus::Disconnected {
            self.connect(id).await?;
        }
        Ok(self.live(id)?.client.request_pair_code(&digits).await?)
    }

    /// The current QR code and its expiry.
    pub fn qr(&self, id: &str) -> Result<(String, i64), SessionError> {
        let state = self.live(id)?.state();
        state.qr.ok_or_else(|| {
            SessionError::WrongState(match state.status {
                SessionStatus::LoggedIn | SessionStatus::Connected => {
                    format!("session `{id}` is already paired; no QR code is shown")
                }
                SessionStatus::WaitingForPairCode => {
                    format!("session `{id}` is pairing by code; no QR code is shown")
                }
                _ => format!("session `{id}` shows no QR code; connect it first"),
            })
        })
    }
}
