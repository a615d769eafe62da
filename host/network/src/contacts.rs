//! Contact operations a network answers (registered phones, contact info,
//! profile pictures, user info, the account's blocklist), and the
//! address-book contacts it delivers to
//! a session through app-state sync ([`ContactSync`], carried by
//! [`super::NetworkEvent::Contacts`]).

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde::Serialize;
use tokio::sync::oneshot;

use super::NetworkError;
use crate::domain::jid::Jid;

/// Whether one phone number is registered on the network.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhoneCheck {
    /// The phone digits asked about.
    pub phone: String,
    /// The account's user JID when the number is registered.
    pub jid: Option<String>,
}

/// What the network says about one account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ContactInfo {
    /// The user JID.
    pub jid: String,
    /// The name this account saved for the contact, else the contact's push
    /// name, else its phone digits.
    pub name: String,
    /// The contact's push name (empty when it set none).
    pub notify: String,
    /// The verified business name, for business accounts.
    pub verified_name: Option<String>,
    /// The account's `<id>@lid`; `null` when the network does not reveal it.
    pub lid: Option<String>,
    /// Always `true`, under waxum's name: an account that is not on the
    /// network has no contact info (`404`, or left out of a list).
    pub is_registered: bool,
    /// Whether it is a business account.
    pub is_business: bool,
    /// The account's about text; `null` when it has none or does not show
    /// it to this account (waxum's name).
    pub status: Option<String>,
    /// The id of the current profile picture; `null` when there is none or
    /// it is not shown to this account.
    pub picture_id: Option<String>,
}

/// A profile picture.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProfilePicture {
    /// Where the picture can be downloaded.
    pub url: String,
    /// The picture's id; it changes when the picture does.
    pub id: String,
    /// The same as `id`, under waxum's name, for its clients.
    pub picture_id: String,
    /// The picture's path on the media host (the URL without its scheme
    /// and host), waxum's field; `null` when the network gives none.
    pub direct_path: Option<String>,
}

impl ProfilePicture {
    /// A picture with its id (shown under both names) and path.
    pub fn new(url: String, id: String, direct_path: Option<String>) -> Self {
        Self {
            url,
            picture_id: id.clone(),
            id,
            direct_path,
        }
    }
}

/// Public facts about one account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UserInfo {
    /// The user JID.
    pub jid: String,
    /// The verified business name, for business accounts.
    pub verified_name: Option<String>,
    /// The id of the current profile picture, when there is one.
    pub picture_id: Option<String>,
    /// The account's `<id>@lid`; `null` when the network does not reveal it.
    pub lid: Option<String>,
    /// Whether it is a business account.
    pub is_business: bool,
    /// The account's about text; `null` when it has none or does not show
    /// it to this account (waxum's name).
    pub status: Option<String>,
}

/// An account this account blocked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Blocked {
    /// Its JID as the network names it (a phone JID, or an `@lid`).
    pub jid: String,
    /// When it was blocked (Unix seconds); `null` when the network does not say.
    pub blocked_at: Option<i64>,
}

/// Contact lookups a network answers for a logged-in session.
#[async_trait]
pub trait ContactOps: Send + Sync {
    /// Which of these phone numbers (digits) are registered, in the same order.
    async fn check_phones(&self, phones: &[String]) -> Result<Vec<PhoneCheck>, NetworkError>;

    /// What the network (and this account's address book) knows about a user;
    /// `NotFound` when the account is not on the network.
    async fn contact_info(&self, jid: &Jid) -> Result<ContactInfo, NetworkError>;

    /// [`ContactOps::contact_info`] of several users at once, in the order
    /// asked; accounts not on the network are left out.
    async fn contact_infos(&self, jids: &[Jid]) -> Result<Vec<ContactInfo>, NetworkError>;

    /// A user's profile picture: `None` when the user has none; `NotFound` when
    /// the account is not on the network.
    async fn profile_picture(&self, jid: &Jid) -> Result<Option<ProfilePicture>, NetworkError>;

    /// Public facts about the users that are on the network, in the order
    /// asked; accounts not on the network are left out.
    async fn user_info(&self, jids: &[Jid]) -> Result<Vec<UserInfo>, NetworkError>;

    /// The accounts this account blocked, as the network keeps them.
    async fn blocklist(&self) -> Result<Vec<Blocked>, NetworkError>;

    /// Blocks an account (`blocked`), or unblocks it: a blocked account's
    /// messages and calls no longer reach this one. Doing it twice is no
    /// error.
    async fn set_blocked(&self, jid: &Jid, blocked: bool) -> Result<(), NetworkError>;

    /// Whether this account blocked `jid` (under any of its addresses the
    /// network knows).
    async fn is_blocked(&self, jid: &Jid) -> Result<bool, NetworkError> {
        let wanted = jid.to_string();
        Ok(self.blocklist().await?.iter().any(|b| b.jid == wanted))
    }
}

/// One entry of the account's address book, as app-state sync delivers it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AddressBookEntry {
    /// The user JID.
    pub jid: String,
    /// Phone digits.
    pub phone: String,
    /// The saved full name.
    pub full_name: Option<String>,
    /// The saved first name.
    pub first_name: Option<String>,
    /// The contact's `<id>@lid`, when the network reveals it.
    pub lid: Option<String>,
    /// The verified business name, when the contact is a business.
    pub business_name: Option<String>,
}

/// Address-book contacts delivered by app-state sync.
#[derive(Debug, Clone, PartialEq)]
pub struct ContactSync {
    /// A full sync (after pairing, or a snapshot resync) rather than
    /// incremental mutations.
    pub full_sync: bool,
    /// The contacts.
    pub contacts: Vec<AddressBookEntry>,
    /// Told once the contacts are stored, when the network waits for that.
    pub applied: Option<Applied>,
}

/// A one-shot acknowledgement from the session's intake to the network: the
/// event was applied and persisted (`true`) or could not be (`false`).
#[derive(Debug, Clone)]
pub struct Applied(Arc<Mutex<Option<oneshot::Sender<bool>>>>);

impl Applied {
    /// A new acknowledgement and the receiver that hears it.
    pub fn new() -> (Self, oneshot::Receiver<bool>) {
        let (tx, rx) = oneshot::channel();
        (Self(Arc::new(Mutex::new(Some(tx)))), rx)
    }

    /// Reports the outcome; later reports are ignored.
    pub fn done(&self, ok: bool) {
        let sender = self.0.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(tx) = sender {
            let _ = tx.send(ok);
        }
    }
}

impl PartialEq for Applied {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_acknowledgement_is_heard_once_and_clones_share_it() {
        let (applied, rx) = Applied::new();
        let copy = applied.clone();
        assert_eq!(copy, applied);
        copy.done(true);
        applied.done(false);
        assert!(rx.await.unwrap());
    }

    #[tokio::test]
    async fn a_dropped_acknowledgement_is_heard_as_a_closed_channel() {
        let (applied, rx) = Applied::new();
        drop(applied);
        assert!(rx.await.is_err());
    }
}
