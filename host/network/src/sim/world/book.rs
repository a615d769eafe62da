//! The account's address book on the simulated network and the app-state sync
//! that carries it to the session: a full sync after pairing, the changes
//! made while offline after a login, each change at once while online, and
//! resync on request (with faults). Also the account lock.

use std::time::Duration;

use super::account_memory::{AppStateFault, Claim};
use super::{Link, World, emit, internal};
use crate::account::{Collection, CollectionOutcome, ResyncMode};
use crate::contacts::{AddressBookEntry, Applied, ContactSync};
use crate::domain::jid::Jid;
use crate::store::SimAddressEntry;
use crate::{EventSink, NetworkError, NetworkEvent};

/// The collection that holds the address book.
const CONTACTS: Collection = Collection::CriticalUnblockLow;

/// How long a resync waits for the session to store what it fetched.
const APPLY_TIMEOUT: Duration = Duration::from_secs(10);

impl World {
    /// Adds or replaces an entry of a session's address book. A session that is
    /// online receives it at once as an incremental app-state mutation; others
    /// get it with their next login (or in the full sync after pairing).
    pub(in crate::sim) async fn put_address_entry(
        &self,
        id: &str,
        entry: SimAddressEntry,
    ) -> Result<SimAddressEntry, NetworkError> {
        self.with(id, |_| ())?;
        let stored = self
            .store
            .put_sim_address_entry(id, entry)
            .map_err(internal)?;
        let live = self.with(id, |s| {
            (s.link == Link::Online && s.account.is_some()).then(|| s.events.clone())
        })?;
        if let Some(events) = live {
            self.sync_contacts(id, &events, false, false).await?;
        }
        Ok(stored)
    }

    /// A session's address book, ordered by phone.
    pub(in crate::sim) fn address_book(
        &self,
        id: &str,
    ) -> Result<Vec<SimAddressEntry>, NetworkError> {
        self.with(id, |_| ())?;
        self.store.sim_address_book(id).map_err(internal)
    }

    /// After pairing: the new device gets the whole address book.
    pub(super) async fn sync_after_pairing(&self, id: &str, events: &EventSink) {
        if let Err(e) = self.sync_contacts(id, events, true, false).await {
            tracing::warn!(session = %id, error = %e, "sim full app-state sync failed");
        }
    }

    /// After a login: the device gets the changes made while it was away.
    pub(super) async fn sync_after_login(&self, id: &str, events: &EventSink) {
        if let Err(e) = self.sync_contacts(id, events, false, false).await {
            tracing::warn!(session = %id, error = %e, "sim app-state sync after login failed");
        }
    }

    /// Delivers the address book: everything (`full`) or the entries newer
    /// than the version the device holds. With `wait`, returns `false` unless
    /// the session confirms it stored them.
    async fn sync_contacts(
        &self,
        id: &str,
        events: &EventSink,
        full: bool,
        wait: bool,
    ) -> Result<bool, NetworkError> {
        let key = CONTACTS.as_str();
        let held = if full {
            0
        } else {
            self.store
                .sim_app_state_version(id, key)
                .map_err(internal)?
        };
        let book = self.store.sim_address_book(id).map_err(internal)?;
        let newest = book.iter().map(|e| e.version).max().unwrap_or(0);
        let contacts = book
            .into_iter()
            .filter(|e| full || e.version > held)
            .map(|e| self.delivered_entry(e))
            .collect::<Result<Vec<_>, _>>()?;
        if !contacts.is_empty() {
            let (applied, rx) = if wait {
                let (a, rx) = Applied::new();
                (Some(a), Some(rx))
            } else {
                (None, None)
            };
            let sync = ContactSync {
                full_sync: full,
                contacts,
                applied,
            };
            emit(events, NetworkEvent::Contacts(sync)).await;
            if let Some(rx) = rx
                && !matches!(tokio::time::timeout(APPLY_TIMEOUT, rx).await, Ok(Ok(true)))
            {
                return Ok(false);
            }
        }
        self.store
            .set_sim_app_state_version(id, key, newest.max(held))
            .map_err(internal)?;
        Ok(true)
    }

    /// An address-book entry as app-state sync carries it: the network adds
    /// what it knows of a registered user (its lid, its business name).
    fn delivered_entry(&self, e: SimAddressEntry) -> Result<AddressBookEntry, NetworkError> {
        let user = self.store.get_sim_user(&e.phone).map_err(internal)?;
        let jid = Jid::user(&e.phone)
            .map(|j| j.to_string())
            .unwrap_or_else(|_| format!("{}@s.whatsapp.net", e.phone));
        Ok(AddressBookEntry {
            jid,
            lid: e.lid.or_else(|| user.as_ref().and_then(|u| u.lid.clone())),
            business_name: user.and_then(|u| u.business_name),
            phone: e.phone,
            full_name: e.full_name,
            first_name: e.first_name,
        })
    }

    /// Fetches the collections for a logged-in session, with the session's
    /// app-state faults. A collection another fetch of the session is already
    /// fetching is `skipped`.
    pub(in crate::sim) async fn resync_app_state(
        &self,
        id: &str,
        collections: &[Collection],
        mode: ResyncMode,
    ) -> Result<Vec<(Collection, CollectionOutcome)>, NetworkError> {
        let (events, faults) = self.with(id, |s| match (s.link, &s.account) {
            (Link::Online, Some(_)) => Ok((s.events.clone(), s.faults.clone())),
            _ => Err(NetworkError::NotConnected),
        })??;
        let claimed = self.accounts.claim(id, collections);
        let mine: Vec<Collection> = collections
            .iter()
            .zip(&claimed)
            .filter(|(_, m)| **m)
            .map(|(c, _)| *c)
            .collect();
        let _claim = Claim::new(&self.accounts, id, mine.clone());
        if !mine.is_empty() && faults.appstate_latency_ms > 0 {
            tokio::time::sleep(Duration::from_millis(faults.appstate_latency_ms)).await;
        }
        let mut out = Vec::with_capacity(collections.len());
        for (c, mine) in collections.iter().zip(claimed) {
            let outcome = if !mine {
                CollectionOutcome::Skipped
            } else {
                match faults.appstate.get(c) {
                    Some(AppStateFault::Fatal) => CollectionOutcome::Fatal,
                    Some(AppStateFault::Retryable) => CollectionOutcome::Retryable,
                    None => self.fetch(id, &events, *c, mode).await,
                }
            };
            out.push((*c, outcome));
        }
        Ok(out)
    }

    /// Fetches one collection: `retryable` when the session went offline or the
    /// result could not be stored.
    async fn fetch(
        &self,
        id: &str,
        events: &EventSink,
        c: Collection,
        mode: ResyncMode,
    ) -> CollectionOutcome {
        let online = self.with(id, |s| s.link == Link::Online).unwrap_or(false);
        if !online {
            return CollectionOutcome::Retryable;
        }
        let full = mode == ResyncMode::Snapshot;
        let done = if c == CONTACTS {
            self.sync_contacts(id, events, full, true).await
        } else {
            // The sim keeps nothing else in app state: a fetch brings no patches.
            Ok(true)
        };
        match done {
            Ok(true) => CollectionOutcome::Synced,
            Ok(false) => CollectionOutcome::Retryable,
            Err(e) => {
                tracing::warn!(session = %id, collection = c.as_str(), error = %e, "sim app-state fetch failed");
                CollectionOutcome::Retryable
            }
        }
    }

    /// Locks the account of an online session: the network closes the socket
    /// (credentials kept) and tells the session why.
    pub(in crate::sim) async fn lock_account(
        &self,
        id: &str,
        reason: String,
        until: Option<i64>,
    ) -> Result<(), NetworkError> {
        let events = self.with(id, |s| {
            if s.link != Link::Online {
                return Err(NetworkError::NotConnected);
            }
            s.link = Link::Offline;
            Ok(s.events.clone())
        })??;
        let locked = NetworkEvent::AccountLocked {
            reason,
            until,
            url: None,
        };
        emit(&events, locked).await;
        Ok(())
    }

    /// Another client takes over an online session's device: the network
    /// closes the socket as replaced (credentials kept).
    pub(in crate::sim) async fn replace_connection(&self, id: &str) -> Result<(), NetworkError> {
        let events = self.with(id, |s| {
            if s.link != Link::Online {
                return Err(NetworkError::NotConnected);
            }
            s.link = Link::Offline;
            Ok(s.events.clone())
        })??;
        let reason = "stream replaced: another client connected with this device".to_owned();
        emit(&events, NetworkEvent::Replaced { reason }).await;
        Ok(())
    }
}
