//! Who is on the simulated network, as contact lookups see it (registered
//! outside users and the accounts of this gateway's sim sessions), trust
//! contact tokens between accounts, and spam reports.

use sha2::{Digest, Sha256};

use super::account_memory::ReceivedReport;
use super::{Link, World, internal};
use crate::NetworkError;
use crate::account::{IssuedToken, SpamReport, TrustToken};
use crate::contacts::{ContactInfo, PhoneCheck, ProfilePicture, UserInfo};
use crate::domain::jid::{Jid, JidKind};
use crate::domain::session::Account;
use crate::domain::time::{unix_now, unix_now_ms};

/// An account on the simulated network.
struct Person {
    jid: String,
    phone: Option<String>,
    push_name: Option<String>,
    business_name: Option<String>,
    picture_url: Option<String>,
    lid: Option<String>,
    about: Option<String>,
}

/// The id of a profile picture: ten digits derived from its URL, so it changes
/// when the picture does.
pub(super) fn picture_id(url: &str) -> String {
    let digest = Sha256::digest(url.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    format!("{:010}", u64::from_be_bytes(first) % 10_000_000_000)
}

/// The path of a picture on its host, as the real network's `direct_path`
/// is: the URL without its scheme and host; `None` when the URL has no path.
pub(super) fn direct_path(url: &str) -> Option<String> {
    let (_, rest) = url.split_once("://")?;
    rest.find('/').map(|at| rest[at..].to_owned())
}

impl World {
    /// The account of a session that is online.
    pub(super) fn online_account(&self, id: &str) -> Result<Account, NetworkError> {
        self.with(id, |s| match (&s.link, &s.account) {
            (Link::Online, Some(a)) => Ok(a.clone()),
            _ => Err(NetworkError::NotConnected),
        })?
    }

    /// The account with this phone: a registered user, else a sim session's account.
    fn person_by_phone(&self, phone: &str) -> Result<Option<Person>, NetworkError> {
        if let Some(u) = self.store.get_sim_user(phone).map_err(internal)? {
            return Ok(Some(Person {
                jid: u.jid,
                phone: Some(u.phone),
                push_name: u.push_name,
                business_name: u.business_name,
                picture_url: u.picture_url,
                lid: u.lid,
                about: u.about,
            }));
        }
        let Some((id, a)) = self.lock().iter().find_map(|(id, s)| {
            s.account
                .as_ref()
                .filter(|a| a.phone == phone)
                .map(|a| (id.clone(), a.clone()))
        }) else {
            return Ok(None);
        };
        // The sim gives its sessions' accounts no lid or business name; the
        // about text and picture are what the session set.
        let fields = self.profile_fields(&id)?;
        Ok(Some(Person {
            jid: a.jid,
            phone: Some(a.phone),
            push_name: a.push_name,
            business_name: None,
            picture_url: fields.picture_url,
            lid: None,
            about: fields.about,
        }))
    }

    /// The account a user JID or `@lid` names, if it is on the network. Found
    /// by lid, it does not reveal its phone.
    fn person(&self, jid: &Jid) -> Result<Option<Person>, NetworkError> {
        match jid.kind() {
            JidKind::User => self.person_by_phone(jid.user_part()),
            JidKind::Lid => Ok(self.user_by_lid(&jid.to_string())?.map(|u| Person {
                jid: jid.to_string(),
                phone: None,
                push_name: u.push_name,
                business_name: u.business_name,
                picture_url: u.picture_url,
                lid: u.lid,
                about: u.about,
            })),
            _ => Ok(None),
        }
    }

    pub(in crate::sim) fn check_phones(
        &self,
        id: &str,
        phones: &[String],
    ) -> Result<Vec<PhoneCheck>, NetworkError> {
        self.online_account(id)?;
        phones
            .iter()
            .map(|p| {
                Ok(PhoneCheck {
                    phone: p.clone(),
                    jid: self.person_by_phone(p)?.map(|x| x.jid),
                })
            })
            .collect()
    }

    pub(in crate::sim) fn contact_info(
        &self,
        id: &str,
        jid: &Jid,
    ) -> Result<ContactInfo, NetworkError> {
        self.online_account(id)?;
        let p = self.person(jid)?.ok_or_else(|| not_on_network(jid))?;
        self.contact_of(id, jid, p)
    }

    pub(in crate::sim) fn contact_infos(
        &self,
        id: &str,
        jids: &[Jid],
    ) -> Result<Vec<ContactInfo>, NetworkError> {
        self.online_account(id)?;
        let mut out = Vec::new();
        for jid in jids {
            if let Some(p) = self.person(jid)? {
                out.push(self.contact_of(id, jid, p)?);
            }
        }
        Ok(out)
    }

    /// The contact info of `p`, found by `jid`, as session `id` sees it (the
    /// name its address book saved).
    fn contact_of(&self, id: &str, jid: &Jid, p: Person) -> Result<ContactInfo, NetworkError> {
        let saved = match &p.phone {
            Some(phone) => self
                .store
                .sim_address_book(id)
                .map_err(internal)?
                .into_iter()
                .find(|e| &e.phone == phone)
                .and_then(|e| e.full_name),
            None => None,
        };
        let name = saved
            .or_else(|| p.push_name.clone())
            .or_else(|| p.phone.clone())
            .unwrap_or_else(|| jid.user_part().to_owned());
        Ok(ContactInfo {
            jid: jid.to_string(),
            name,
            notify: p.push_name.unwrap_or_default(),
            is_business: p.business_name.is_some(),
            verified_name: p.business_name,
            lid: p.lid,
            is_registered: true,
            status: p.about,
            picture_id: p.picture_url.as_deref().map(picture_id),
        })
    }

    pub(in crate::sim) fn profile_picture(
        &self,
        id: &str,
        jid: &Jid,
    ) -> Result<Option<ProfilePicture>, NetworkError> {
        self.online_account(id)?;
        let p = self.person(jid)?.ok_or_else(|| not_on_network(jid))?;
        Ok(p.picture_url.map(|url| {
            let (id, path) = (picture_id(&url), direct_path(&url));
            ProfilePicture::new(url, id, path)
        }))
    }

    pub(in crate::sim) fn user_info(
        &self,
        id: &str,
        jids: &[Jid],
    ) -> Result<Vec<UserInfo>, NetworkError> {
        self.online_account(id)?;
        let mut out = Vec::new();
        for jid in jids {
            if let Some(p) = self.person(jid)? {
                out.push(UserInfo {
                    jid: jid.to_string(),
                    is_business: p.business_name.is_some(),
                    verified_name: p.business_name,
                    picture_id: p.picture_url.as_deref().map(picture_id),
                    lid: p.lid,
                    status: p.about,
                });
            }
        }
        Ok(out)
    }

    /// Issues the session's token to each JID. When a JID is another sim
    /// session's account, that session's device stores the token it received.
    pub(in crate::sim) fn issue_tokens(
        &self,
        id: &str,
        jids: &[Jid],
    ) -> Result<Vec<IssuedToken>, NetworkError> {
        let me = self.online_account(id)?;
        let now_ms = unix_now_ms();
        let mine: Vec<(String, String)> = jids
            .iter()
            .map(|j| (id.to_owned(), j.to_string()))
            .collect();
        let peers: Vec<(String, String)> = {
            let sessions = self.lock();
            jids.iter()
                .filter_map(Jid::phone)
                .filter_map(|phone| {
                    sessions.iter().find(|(other, s)| {
                        other.as_str() != id && s.account.as_ref().is_some_and(|a| a.phone == phone)
                    })
                })
                .map(|(other, _)| (other.clone(), me.jid.clone()))
                .collect()
        };
        self.store
            .update_sim_tctokens(&mine, |_, r| r.sender_ms = Some(now_ms))
            .map_err(internal)?;
        self.store
            .update_sim_tctokens(&peers, |_, r| r.token_ms = Some(now_ms))
            .map_err(internal)?;
        Ok(mine
            .into_iter()
            .map(|(_, jid)| IssuedToken {
                jid,
                timestamp: now_ms / 1000,
            })
            .collect())
    }

    /// Whether a token whose newest time is `newest_ms` is past its lifetime.
    fn token_expired(&self, newest_ms: i64) -> bool {
        let lifetime = i64::try_from(self.config.tctoken_lifetime.as_millis()).unwrap_or(i64::MAX);
        newest_ms.saturating_add(lifetime) < unix_now_ms()
    }

    pub(in crate::sim) fn trust_token(
        &self,
        id: &str,
        jid: &Jid,
    ) -> Result<Option<TrustToken>, NetworkError> {
        self.with(id, |_| ())?;
        let jid = jid.to_string();
        let rec = self.store.sim_tctoken(id, &jid).map_err(internal)?;
        Ok(rec.map(|r| TrustToken {
            token_timestamp: r.token_ms.map(|ms| ms / 1000),
            sender_timestamp: r.sender_ms.map(|ms| ms / 1000),
            expired: self.token_expired(r.newest_ms()),
            jid,
        }))
    }

    pub(in crate::sim) fn trust_token_jids(&self, id: &str) -> Result<Vec<String>, NetworkError> {
        self.with(id, |_| ())?;
        let all = self.store.sim_tctokens(id).map_err(internal)?;
        Ok(all.into_iter().map(|(jid, _)| jid).collect())
    }

    pub(in crate::sim) fn prune_tokens(&self, id: &str) -> Result<usize, NetworkError> {
        self.with(id, |_| ())?;
        let lifetime = i64::try_from(self.config.tctoken_lifetime.as_millis()).unwrap_or(i64::MAX);
        let cutoff = unix_now_ms().saturating_sub(lifetime);
        self.store.prune_sim_tctokens(id, cutoff).map_err(internal)
    }

    pub(in crate::sim) fn report_spam(
        &self,
        id: &str,
        report: &SpamReport,
    ) -> Result<String, NetworkError> {
        self.online_account(id)?;
        let report_id = uuid::Uuid::new_v4().to_string();
        self.accounts.add_report(
            id,
            ReceivedReport {
                report_id: report_id.clone(),
                received_at: unix_now(),
                report: report.clone(),
            },
        );
        Ok(report_id)
    }

    pub(in crate::sim) fn spam_reports(
        &self,
        id: &str,
    ) -> Result<Vec<ReceivedReport>, NetworkError> {
        self.with(id, |_| ())?;
        Ok(self.accounts.reports(id))
    }
}

fn not_on_network(jid: &Jid) -> NetworkError {
    NetworkError::NotFound(format!("{jid} is not on the network"))
}

#[cfg(test)]
mod tests {
    use super::{direct_path, picture_id};

    #[test]
    fn a_pictures_direct_path_is_its_url_without_scheme_and_host() {
        assert_eq!(
            direct_path("https://pics.example/v/a.jpg?x=1").as_deref(),
            Some("/v/a.jpg?x=1")
        );
        assert_eq!(direct_path("https://pics.example"), None);
        assert_eq!(direct_path("not a url"), None);
    }

    #[test]
    fn a_picture_id_is_ten_digits_stable_per_url() {
        let a = picture_id("https://pics.example/a.jpg");
        assert_eq!(a.len(), 10);
        assert!(a.chars().all(|c| c.is_ascii_digit()));
        assert_eq!(a, picture_id("https://pics.example/a.jpg"));
        assert_ne!(a, picture_id("https://pics.example/b.jpg"));
    }
}
