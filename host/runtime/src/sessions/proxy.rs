//! A session's proxy: set at create, read, changed and cleared. The record
//! keeps it sealed (the store's `seal_proxy`); the backend reads it at
//! each connect, so a change made while the session is connected or
//! connecting takes effect at once by closing the connection and opening
//! it again through the new route.

use super::{SessionError, Sessions};
use crate::domain::proxy::{Proxy, ProxyChoice};
use crate::domain::session::SessionStatus;

/// Which proxy a session uses, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyView {
    /// What the session itself asked for; `None` when it takes the
    /// gateway's default.
    pub own: Option<ProxyChoice>,
    /// The proxy its connections go through now (its own, else the
    /// default); `None` is a direct connection.
    pub effective: Option<Proxy>,
}

impl ProxyView {
    /// Where `effective` comes from: `session`, `default` or `none`.
    pub fn source(&self) -> &'static str {
        match (&self.own, &self.effective) {
            (Some(_), _) => "session",
            (None, Some(_)) => "default",
            (None, None) => "none",
        }
    }
}

impl Sessions {
    /// The gateway's default proxy, used by sessions that name none.
    pub fn default_proxy(&self) -> Option<&Proxy> {
        self.inner.default_proxy.as_ref()
    }

    /// The proxy of session `id`, its credentials unsealed.
    pub fn proxy(&self, id: &str) -> Result<ProxyView, SessionError> {
        self.live(id)?;
        let record = self.record(id)?;
        let own = record
            .proxy
            .as_ref()
            .map(|stored| self.inner.store.open_proxy(stored))
            .transpose()?;
        Ok(self.view(own))
    }

    fn view(&self, own: Option<ProxyChoice>) -> ProxyView {
        let effective = match &own {
            Some(ProxyChoice::Direct) => None,
            Some(ProxyChoice::Via(p)) => Some(p.clone()),
            None => self.inner.default_proxy.clone(),
        };
        ProxyView { own, effective }
    }

    /// Sets (`Some`) or clears (`None`: back to the gateway's default) the
    /// proxy of session `id`. A session that is connected, or on its way,
    /// is reconnected through the new route; the answer says whether it
    /// was.
    pub async fn set_proxy(
        &self,
        id: &str,
        choice: Option<ProxyChoice>,
    ) -> Result<(ProxyView, bool), SessionError> {
        let live = self.live(id)?;
        let stored = choice.as_ref().map(|c| self.inner.store.seal_proxy(c));
        let record = self.modify(id, |r| r.proxy = stored)?;
        let view = self.view(choice);
        tracing::info!(
            session = %id,
            proxy = %view.effective.as_ref().map_or_else(|| "none".to_owned(), Proxy::address),
            source = view.source(),
            "session proxy changed"
        );
        let status = live.state().status;
        if status == SessionStatus::Disconnected || record.paused {
            return Ok((view, false));
        }
        live.watch.expect_requested_close();
        live.client.disconnect().await?;
        live.update(|s| s.status = SessionStatus::Disconnected);
        self.connect_live(id).await?;
        Ok((view, true))
    }
}
