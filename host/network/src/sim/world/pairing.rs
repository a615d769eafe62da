//! Pairing on the simulated network: rotating QR codes, pair codes, and the
//! moment a session's account is linked.

use std::collections::HashSet;
use std::sync::Arc;

use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;

use super::{Link, World, emit};
use crate::domain::session::Account;
use crate::domain::time::unix_now;
use crate::sim::ids::derived_phone;
use crate::{EventSink, NetworkError, NetworkEvent};

impl World {
    /// Rotates QR codes until pairing completes, the session leaves the pairing
    /// states, or the token is cancelled; completes pairing after the configured
    /// delay when automatic pairing is on.
    pub(super) async fn pairing_loop(self: &Arc<Self>, id: &str, token: CancellationToken) {
        let deadline = self
            .config
            .auto_pair
            .then(|| Instant::now() + self.config.pair_delay);
        loop {
            let Ok((link, events)) = self.with(id, |s| (s.link, s.events.clone())) else {
                return;
            };
            if link == Link::WaitingQr {
                let code = self.rng().qr_code();
                let expires_at = unix_now() + self.config.qr_interval.as_secs().max(1) as i64;
                emit(&events, NetworkEvent::Qr { code, expires_at }).await;
            } else if link != Link::WaitingPairCode {
                return;
            }
            let next_qr = Instant::now() + self.config.qr_interval;
            let wake = deadline.map_or(next_qr, |d| d.min(next_qr));
            tokio::select! {
                _ = token.cancelled() => return,
                _ = sleep_until(wake) => {}
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                let _ = Self::complete_pairing(self, id).await;
                return;
            }
        }
    }

    /// Pairs a session that is waiting for a QR scan or a pair code.
    pub(in crate::sim) async fn complete_pairing(
        world: &Arc<World>,
        id: &str,
    ) -> Result<Account, NetworkError> {
        let (events, account) = world.pair_now(id)?;
        emit(&events, NetworkEvent::Paired(account.clone())).await;
        emit(&events, NetworkEvent::LoggedIn).await;
        world.sync_after_pairing(id, &events).await;
        Ok(account)
    }

    /// The synchronous part of pairing: choose the phone, link the account.
    fn pair_now(&self, id: &str) -> Result<(EventSink, Account), NetworkError> {
        let seed = self.config.seed;
        let mut sessions = self.lock();
        let taken: HashSet<String> = sessions
            .iter()
            .filter(|(other, _)| other.as_str() != id)
            .filter_map(|(_, s)| s.account.as_ref().map(|a| a.phone.clone()))
            .collect();
        let s = sessions.get_mut(id).ok_or_else(|| {
            NetworkError::NotFound(format!("session `{id}` is not on the simulated network"))
        })?;
        if !matches!(s.link, Link::WaitingQr | Link::WaitingPairCode) {
            return Err(NetworkError::InvalidState(format!(
                "session `{id}` is not waiting to be paired; connect it first"
            )));
        }
        let phone = s
            .pair_phone
            .clone()
            .or_else(|| s.phone_hint.clone())
            .unwrap_or_else(|| derived_phone(seed, id));
        if taken.contains(&phone) {
            return Err(NetworkError::InvalidState(format!(
                "phone {phone} is already linked to another session"
            )));
        }
        let account = Account {
            jid: format!("{phone}@s.whatsapp.net"),
            push_name: Some(s.name.clone().unwrap_or_else(|| format!("Sim {id}"))),
            phone,
        };
        s.account = Some(account.clone());
        s.link = Link::Online;
        if let Some(t) = s.pairing.take() {
            t.cancel();
        }
        Ok((s.events.clone(), account))
    }

    pub(in crate::sim) async fn request_pair_code(
        &self,
        id: &str,
        phone: &str,
    ) -> Result<String, NetworkError> {
        let code = self.rng().pair_code();
        let events = self.with(id, |s| {
            if s.account.is_some() {
                return Err(NetworkError::InvalidState(
                    "the session is already paired".into(),
                ));
            }
            if !matches!(s.link, Link::WaitingQr | Link::WaitingPairCode) {
                return Err(NetworkError::NotConnected);
            }
            s.link = Link::WaitingPairCode;
            s.pair_phone = Some(phone.to_owned());
            Ok(s.events.clone())
        })??;
        emit(&events, NetworkEvent::PairCode { code: code.clone() }).await;
        Ok(code)
    }
}
