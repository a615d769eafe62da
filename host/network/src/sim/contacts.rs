//! Contact operations of the simulated network: the [`ContactOps`] of a sim
//! session's client, and the control surface over each account's address book.

use async_trait::async_trait;

use super::SimNetwork;
use super::client::SimClient;
use crate::NetworkError;
use crate::contacts::{Blocked, ContactInfo, ContactOps, PhoneCheck, ProfilePicture, UserInfo};
use crate::domain::jid::Jid;
use crate::store::SimAddressEntry;

#[async_trait]
impl ContactOps for SimClient {
    async fn check_phones(&self, phones: &[String]) -> Result<Vec<PhoneCheck>, NetworkError> {
        self.world.check_phones(&self.id, phones)
    }

    async fn contact_info(&self, jid: &Jid) -> Result<ContactInfo, NetworkError> {
        self.world.contact_info(&self.id, jid)
    }

    async fn contact_infos(&self, jids: &[Jid]) -> Result<Vec<ContactInfo>, NetworkError> {
        self.world.contact_infos(&self.id, jids)
    }

    async fn profile_picture(&self, jid: &Jid) -> Result<Option<ProfilePicture>, NetworkError> {
        self.world.profile_picture(&self.id, jid)
    }

    async fn user_info(&self, jids: &[Jid]) -> Result<Vec<UserInfo>, NetworkError> {
        self.world.user_info(&self.id, jids)
    }

    async fn blocklist(&self) -> Result<Vec<Blocked>, NetworkError> {
        self.world.blocklist(&self.id)
    }

    async fn set_blocked(&self, jid: &Jid, blocked: bool) -> Result<(), NetworkError> {
        self.world.set_blocked(&self.id, jid, blocked)
    }
}

impl SimNetwork {
    /// Adds or replaces an entry of a session's address book (the version is
    /// assigned by the network). An online session receives it at once as an
    /// incremental app-state mutation; others with their next login, or in the
    /// full sync after pairing.
    pub async fn put_address_entry(
        &self,
        session_id: &str,
        entry: SimAddressEntry,
    ) -> Result<SimAddressEntry, NetworkError> {
        self.world.put_address_entry(session_id, entry).await
    }

    /// A session's address book, ordered by phone.
    pub fn address_book(&self, session_id: &str) -> Result<Vec<SimAddressEntry>, NetworkError> {
        self.world.address_book(session_id)
    }
}
