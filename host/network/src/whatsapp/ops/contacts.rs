//! Contact lookups through the crate's `contacts()` feature: usync existence
//! checks (`is_on_whatsapp`), user info (`get_user_info`: about text,
//! picture id, lid), profile pictures (`get_profile_picture`) and the
//! blocklist (`blocking()`: the list, block, unblock), with the
//! session's contact directory for the names this account saved. The
//! conversions are in `map/contact_lookups.rs`.

use super::super::off_thread::with_store;
use std::slice;

use async_trait::async_trait;
use whatsapp_rust::types::lid_pn::LearningSource;
use whatsapp_rust::{Client, IsOnWhatsAppResult, Jid as WaJid};

use crate::NetworkError;
use crate::contacts::{Blocked, ContactInfo, ContactOps, PhoneCheck, ProfilePicture, UserInfo};
use crate::domain::contact::StoredContact;
use crate::domain::jid::Jid;
use crate::whatsapp::map::contact_lookups::{
    blocking_error, blocklist, contact_error, contact_info, exists_answer, info_for, on_network,
    phone_checks, phone_of, picture, user_infos,
};
use crate::whatsapp::send::wa_jid;
use crate::whatsapp::session::WaSession;

/// The answer for an account the server does not know (the sim's wording).
fn not_on_network(jid: &Jid) -> NetworkError {
    NetworkError::NotFound(format!("{jid} is not on the network"))
}

/// Makes sure the crate knows the LID of phone number `target` (the server
/// keys blocks by LID): asked of the server when the crate has not learned
/// it, and kept with the crate. Nothing for a LID, or an account the server
/// gives no LID for (the crate's own refusal then says why).
async fn learn_lid(client: &Client, target: &WaJid) -> Result<(), NetworkError> {
    if !target.is_pn() || matches!(client.get_lid_pn_entry(target).await, Ok(Some(_))) {
        return Ok(());
    }
    let answers = exists(client, slice::from_ref(target)).await?;
    if let Some(lid) = answers.iter().find_map(|a| a.lid.as_ref()) {
        client
            .add_lid_pn_mapping(&lid.user, &target.user, LearningSource::Usync)
            .await
            .map_err(|e| NetworkError::Failed(format!("could not keep the account's LID: {e}")))?;
    }
    Ok(())
}

/// Asks the server which of `jids` are registered.
async fn exists(client: &Client, jids: &[WaJid]) -> Result<Vec<IsOnWhatsAppResult>, NetworkError> {
    client
        .contacts()
        .is_on_whatsapp(jids)
        .await
        .map_err(|e| contact_error("the existence check", &e))
}

impl WaSession {
    /// The session's directory entry for a phone (digits), if any. The
    /// directory is the gateway's: intake fills it from app-state contacts,
    /// push names and messages, so it holds the names the crate does not keep.
    async fn saved_contact(&self, phone: &str) -> Result<Option<StoredContact>, NetworkError> {
        let Ok(jid) = Jid::user(phone) else {
            return Ok(None);
        };
        let jid = jid.to_string();
        with_store(&self.inner.store, &self.inner.id, move |s, id| {
            s.get_contact(id, &jid)
        })
        .await
        .map_err(|e| NetworkError::Failed(format!("could not read the contact directory: {e}")))
    }
}

#[async_trait]
impl ContactOps for WaSession {
    async fn check_phones(&self, phones: &[String]) -> Result<Vec<PhoneCheck>, NetworkError> {
        let client = self.logged_in().await?;
        let asked: Vec<WaJid> = phones.iter().map(|p| WaJid::pn(p.as_str())).collect();
        let results = exists(&client, &asked).await?;
        Ok(phone_checks(phones, &results))
    }

    async fn contact_info(&self, jid: &Jid) -> Result<ContactInfo, NetworkError> {
        let found = self.contact_infos(slice::from_ref(jid)).await?;
        found.into_iter().next().ok_or_else(|| not_on_network(jid))
    }

    async fn contact_infos(&self, jids: &[Jid]) -> Result<Vec<ContactInfo>, NetworkError> {
        let client = self.logged_in().await?;
        let asked = jids
            .iter()
            .map(|j| Ok((j.to_string(), wa_jid(j)?)))
            .collect::<Result<Vec<(String, WaJid)>, NetworkError>>()?;
        let targets: Vec<WaJid> = asked.iter().map(|(_, j)| j.clone()).collect();
        if targets.is_empty() {
            return Ok(Vec::new());
        }
        let results = exists(&client, &targets).await?;
        let registered: Vec<WaJid> = targets
            .into_iter()
            .filter(|j| on_network(j, &results))
            .collect();
        if registered.is_empty() {
            return Ok(Vec::new());
        }
        // The existence check has no about text or picture: user info does.
        let infos = client
            .contacts()
            .get_user_info(&registered)
            .await
            .map_err(|e| contact_error("the user info request", &e))?;
        let mut out = Vec::with_capacity(registered.len());
        for (shown, wa) in &asked {
            let Some(found) = exists_answer(wa, &results).filter(|r| r.is_registered) else {
                continue;
            };
            // A LID answer may come without its phone; the crate's lid-pn
            // mapping may still know it (a miss or a failed read only costs
            // the saved name).
            let phone = match phone_of(wa, found) {
                Some(p) => Some(p),
                None => client
                    .get_lid_pn_entry(wa)
                    .await
                    .ok()
                    .flatten()
                    .map(|e| e.phone_number.to_string()),
            };
            let saved = match &phone {
                Some(p) => self.saved_contact(p).await?,
                None => None,
            };
            out.push(contact_info(
                shown,
                wa,
                phone.as_deref(),
                found,
                info_for(wa, &infos),
                saved.as_ref(),
            ));
        }
        Ok(out)
    }

    async fn profile_picture(&self, jid: &Jid) -> Result<Option<ProfilePicture>, NetworkError> {
        let client = self.logged_in().await?;
        let target = wa_jid(jid)?;
        let answer = client
            .contacts()
            .get_profile_picture(&target, false)
            .await
            .map_err(|e| contact_error("the profile picture request", &e))?;
        if let Some(p) = answer {
            return Ok(Some(picture(&p)));
        }
        // The server answers "no picture", "not shown to this account" and
        // "no such account" alike (the crate reads its 404 and 401 as no
        // picture); only the existence check tells the last apart.
        let results = exists(&client, slice::from_ref(&target)).await?;
        if on_network(&target, &results) {
            Ok(None)
        } else {
            Err(not_on_network(jid))
        }
    }

    async fn user_info(&self, jids: &[Jid]) -> Result<Vec<UserInfo>, NetworkError> {
        let client = self.logged_in().await?;
        let asked = jids
            .iter()
            .map(|j| Ok((j.to_string(), wa_jid(j)?)))
            .collect::<Result<Vec<(String, WaJid)>, NetworkError>>()?;
        if asked.is_empty() {
            return Ok(Vec::new());
        }
        // User info does not say whether an account is registered, so the
        // existence check decides who is listed.
        let targets: Vec<WaJid> = asked.iter().map(|(_, j)| j.clone()).collect();
        let registered_check = exists(&client, &targets).await?;
        let registered: Vec<WaJid> = targets
            .into_iter()
            .filter(|j| on_network(j, &registered_check))
            .collect();
        if registered.is_empty() {
            return Ok(Vec::new());
        }
        let infos = client
            .contacts()
            .get_user_info(&registered)
            .await
            .map_err(|e| contact_error("the user info request", &e))?;
        Ok(user_infos(&asked, &registered_check, &infos))
    }

    async fn blocklist(&self) -> Result<Vec<Blocked>, NetworkError> {
        let client = self.logged_in().await?;
        let entries = client
            .blocking()
            .get_blocklist()
            .await
            .map_err(|e| blocking_error("the blocklist request", &e))?;
        Ok(blocklist(&entries))
    }

    async fn set_blocked(&self, jid: &Jid, blocked: bool) -> Result<(), NetworkError> {
        let client = self.logged_in().await?;
        let target = wa_jid(jid)?;
        let what = if blocked { "the block" } else { "the unblock" };
        // The server takes a block only with both of the account's addresses.
        learn_lid(&client, &target).await?;
        let blocking = client.blocking();
        let done = if blocked {
            blocking.block(&target).await
        } else {
            blocking.unblock(&target).await
        };
        done.map_err(|e| blocking_error(what, &e))
    }

    async fn is_blocked(&self, jid: &Jid) -> Result<bool, NetworkError> {
        let client = self.logged_in().await?;
        // The server keys blocks by LID; the crate matches the phone and
        // the LID it knows for it, so a phone's LID is learned first.
        let target = wa_jid(jid)?;
        learn_lid(&client, &target).await?;
        client
            .blocking()
            .is_blocked(&target)
            .await
            .map_err(|e| blocking_error("the blocklist request", &e))
    }
}
