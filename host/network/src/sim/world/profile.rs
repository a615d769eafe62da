//! A sim session's own profile: its push name (on the account, as the
//! network shows it to others), its about text and its picture (kept in
//! the store, so they outlive a restart). Contact lookups of the account
//! by other sessions see them, and every other online session that has
//! the account in its address book hears each change as the real network
//! tells contacts: `push_name_update`, `user_about_update`,
//! `picture_update`.

use serde_json::json;
use sha2::{Digest, Sha256};

use super::people::{direct_path, picture_id};
use super::{Link, World, emit, internal};
use crate::NetworkError;
use crate::NetworkEvent;
use crate::contacts::ProfilePicture;
use crate::domain::event::EventName;
use crate::domain::time::unix_now;
use crate::profile::OwnProfile;

/// The profile field of the about text.
const ABOUT: &str = "about";

/// The profile field of the picture (its content hash).
const PICTURE: &str = "picture";

/// Where the sim's profile pictures are said to be (the sim serves no
/// picture bytes; the URL names the picture by its content).
const PICTURE_HOST: &str = "https://pps.sim.switchboard.invalid";

/// The URL of a sim profile picture with content hash `hash`.
fn picture_url(hash: &str) -> String {
    format!("{PICTURE_HOST}/v/{hash}.jpg")
}

/// What a sim account shows beside its push name.
#[derive(Debug, Default, Clone)]
pub(in crate::sim) struct ProfileFields {
    /// The about text.
    pub about: Option<String>,
    /// The picture's URL.
    pub picture_url: Option<String>,
}

impl World {
    /// The about text and picture sim session `id` set (local: any state).
    pub(in crate::sim) fn profile_fields(&self, id: &str) -> Result<ProfileFields, NetworkError> {
        let mut out = ProfileFields::default();
        for (field, value) in self.store.sim_profile(id).map_err(internal)? {
            match field.as_str() {
                ABOUT => out.about = Some(value),
                PICTURE => out.picture_url = Some(picture_url(&value)),
                _ => {}
            }
        }
        Ok(out)
    }

    pub(in crate::sim) fn own_profile(&self, id: &str) -> Result<OwnProfile, NetworkError> {
        let account = self.online_account(id)?;
        let fields = self.profile_fields(id)?;
        Ok(OwnProfile {
            jid: account.jid,
            push_name: account.push_name,
            about: fields.about,
            picture: fields.picture_url.map(|url| {
                let (pid, path) = (picture_id(&url), direct_path(&url));
                ProfilePicture::new(url, pid, path)
            }),
        })
    }

    pub(in crate::sim) async fn set_push_name(
        &self,
        id: &str,
        name: &str,
    ) -> Result<(), NetworkError> {
        let account = self.online_account(id)?;
        let old = self.with(id, |s| {
            s.account
                .as_mut()
                .and_then(|a| a.push_name.replace(name.to_owned()))
        })?;
        self.tell_contacts(
            id,
            &account.phone,
            EventName::PushNameUpdate,
            json!({
                "jid": account.jid,
                "push_name": name,
                "old_push_name": old,
            }),
        )
        .await
    }

    pub(in crate::sim) async fn set_about(
        &self,
        id: &str,
        about: &str,
    ) -> Result<(), NetworkError> {
        let account = self.online_account(id)?;
        let value = Some(about).filter(|a| !a.is_empty());
        self.store
            .set_sim_profile_field(id, ABOUT, value)
            .map_err(internal)?;
        self.tell_contacts(
            id,
            &account.phone,
            EventName::UserAboutUpdate,
            json!({ "jid": account.jid, "about": about, "timestamp": unix_now() }),
        )
        .await
    }

    /// Sets (`Some` image bytes) or removes the picture; the new picture's
    /// id.
    pub(in crate::sim) async fn set_picture(
        &self,
        id: &str,
        image: Option<&[u8]>,
    ) -> Result<Option<String>, NetworkError> {
        let account = self.online_account(id)?;
        let hash = image.map(|bytes| hex::encode(Sha256::digest(bytes)));
        self.store
            .set_sim_profile_field(id, PICTURE, hash.as_deref())
            .map_err(internal)?;
        let pid = hash.as_deref().map(|h| picture_id(&picture_url(h)));
        self.tell_contacts(
            id,
            &account.phone,
            EventName::PictureUpdate,
            json!({
                "jid": account.jid,
                "action": if pid.is_some() { "set" } else { "remove" },
                "author": account.jid,
                "picture_id": pid,
                "timestamp": unix_now(),
            }),
        )
        .await?;
        Ok(pid)
    }

    /// Tells every other online session whose address book holds `phone`.
    async fn tell_contacts(
        &self,
        id: &str,
        phone: &str,
        event: EventName,
        data: serde_json::Value,
    ) -> Result<(), NetworkError> {
        let others: Vec<(String, crate::EventSink)> = self
            .lock()
            .iter()
            .filter(|(other, s)| {
                other.as_str() != id && s.link == Link::Online && s.account.is_some()
            })
            .map(|(other, s)| (other.clone(), s.events.clone()))
            .collect();
        for (other, events) in others {
            let knows = self
                .store
                .sim_address_book(&other)
                .map_err(internal)?
                .iter()
                .any(|e| e.phone == phone);
            if knows {
                emit(
                    &events,
                    NetworkEvent::Other {
                        event,
                        data: data.clone(),
                    },
                )
                .await;
            }
        }
        Ok(())
    }
}
