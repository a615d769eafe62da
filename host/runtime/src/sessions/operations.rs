//! Session operations beside the lifecycle: the stored contact directory
//! (local, any state) and the client of a session that has a live,
//! logged-in connection (for app-state resync).

use std::sync::Arc;

use super::{SessionError, Sessions};
use crate::domain::contact::{StoredContact, matches};
use crate::domain::session::SessionStatus;
use crate::network::NetworkSession;

/// One page of a session's contact directory.
#[derive(Debug, Clone)]
pub struct ContactPage {
    /// The contacts of the page, ordered by JID.
    pub contacts: Vec<StoredContact>,
    /// How many contacts match the filter in all.
    pub total: usize,
}

impl Sessions {
    /// The stored contacts matching `q` (see [`matches`]), one page of them.
    /// Local data only: works in any connection state.
    pub fn contacts(
        &self,
        id: &str,
        q: &str,
        limit: usize,
        offset: usize,
    ) -> Result<ContactPage, SessionError> {
        self.live(id)?;
        let all = self.inner.store.list_contacts(id, |c| matches(c, q))?;
        let total = all.len();
        let contacts = all.into_iter().skip(offset).take(limit).collect();
        Ok(ContactPage { contacts, total })
    }

    /// The client of a session that is logged in and not paused; `None` when
    /// it has no live client.
    pub fn logged_in_client(
        &self,
        id: &str,
    ) -> Result<Option<Arc<dyn NetworkSession>>, SessionError> {
        let live = self.live(id)?;
        let record = self.record(id)?;
        let online = !record.paused && live.state().status == SessionStatus::LoggedIn;
        Ok(online.then(|| live.client.clone()))
    }
}
