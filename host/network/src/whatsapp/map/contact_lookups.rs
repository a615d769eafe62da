//! Contact lookups as the gateway answers them: the crate's usync existence
//! checks ([`IsOnWhatsAppResult`]), user info ([`WaUserInfo`]) and profile
//! pictures turned into [`PhoneCheck`], [`ContactInfo`], [`UserInfo`] and
//! [`ProfilePicture`], and the crate's [`ContactError`] into a
//! [`NetworkError`]. Pure: the tests build the crate's answers from response
//! nodes, as the crate parses them off the wire.

use std::collections::HashMap;

use whatsapp_rust::{
    ContactError, IsOnWhatsAppResult, Jid as WaJid, ProfilePicture as WaPicture,
    UserInfo as WaUserInfo,
};

use super::iq_errors::iq_error;
use super::user_jid;
use crate::NetworkError;
use crate::contacts::{ContactInfo, PhoneCheck, ProfilePicture, UserInfo};
use crate::domain::contact::StoredContact;

/// Maps a failed lookup (`what` names it, e.g. "the profile picture request").
pub fn contact_error(what: &str, e: &ContactError) -> NetworkError {
    match e {
        ContactError::Iq(e) => iq_error(what, e),
        ContactError::InvalidJid(_) => NetworkError::Rejected(format!("{what} was not sent: {e}")),
        other => NetworkError::Failed(format!("{what} failed: {other}")),
    }
}

/// The existence check's answer about `asked`, if the server gave one. The
/// server answers a phone query under the phone JID, or under the LID with
/// the phone beside it, and a LID query under the LID; answers come in no
/// promised order, so they are matched by account, not by position.
pub fn exists_answer<'a>(
    asked: &WaJid,
    results: &'a [IsOnWhatsAppResult],
) -> Option<&'a IsOnWhatsAppResult> {
    let user = asked.user.as_str();
    results.iter().find(|r| {
        if asked.is_lid() {
            (r.jid.is_lid() && r.jid.user == user) || r.lid.as_ref().is_some_and(|l| l.user == user)
        } else {
            (r.jid.is_pn() && r.jid.user == user)
                || r.pn_jid
                    .as_ref()
                    .is_some_and(|p| p.is_pn() && p.user == user)
        }
    })
}

/// Whether the server says `asked` is registered.
pub fn on_network(asked: &WaJid, results: &[IsOnWhatsAppResult]) -> bool {
    exists_answer(asked, results).is_some_and(|r| r.is_registered)
}

/// One check per phone (digits), in the order asked; a phone the server left
/// out of its answer is not registered.
pub fn phone_checks(phones: &[String], results: &[IsOnWhatsAppResult]) -> Vec<PhoneCheck> {
    phones
        .iter()
        .map(|phone| {
            let asked = WaJid::pn(phone.as_str());
            PhoneCheck {
                phone: phone.clone(),
                jid: on_network(&asked, results).then(|| user_jid(&asked)),
            }
        })
        .collect()
}

/// The phone digits of an account found by `asked`: its own for a phone JID,
/// the `pn_jid` the server paired with a LID otherwise.
pub fn phone_of(asked: &WaJid, found: &IsOnWhatsAppResult) -> Option<String> {
    if asked.is_pn() {
        return Some(asked.user.to_string());
    }
    found
        .pn_jid
        .as_ref()
        .filter(|p| p.is_pn())
        .map(|p| p.user.to_string())
}

/// What the network and the address book know about a registered account.
/// `asked` is the JID as the caller gave it, `user_part` its user part (the
/// last fallback for the name), `phone` its digits when known, `saved` the
/// session's directory entry for that phone.
pub fn contact_info(
    asked: &str,
    user_part: &str,
    phone: Option<&str>,
    found: &IsOnWhatsAppResult,
    saved: Option<&StoredContact>,
) -> ContactInfo {
    let filled = |s: &Option<String>| s.clone().filter(|s| !s.trim().is_empty());
    let push_name = saved.and_then(|c| filled(&c.push_name));
    let name = saved
        .and_then(|c| filled(&c.full_name).or_else(|| filled(&c.first_name)))
        .or_else(|| push_name.clone())
        .or_else(|| phone.map(str::to_owned))
        .unwrap_or_else(|| user_part.to_owned());
    let verified_name = found
        .verified_name
        .as_ref()
        .and_then(|v| filled(&v.name))
        .or_else(|| saved.and_then(|c| filled(&c.business_name)));
    ContactInfo {
        jid: asked.to_owned(),
        name,
        notify: push_name.unwrap_or_default(),
        verified_name,
    }
}

/// The user-info answer about `asked`: the server keys it by the JID it was
/// asked about, else it can be told by the LID it carries.
fn info_for<'a>(asked: &WaJid, infos: &'a HashMap<WaJid, WaUserInfo>) -> Option<&'a WaUserInfo> {
    infos.get(&asked.to_non_ad()).or_else(|| {
        infos.values().find(|i| {
            (i.jid.server == asked.server && i.jid.user == asked.user)
                || (asked.is_lid() && i.lid.as_ref().is_some_and(|l| l.user == asked.user))
        })
    })
}

/// Public facts about the asked accounts that are on the network, in the
/// order asked. `asked` pairs each JID as the caller gave it with the crate's
/// JID; `exists` is the existence check that tells who is registered (user
/// info alone does not), `infos` the usync user info.
pub fn user_infos(
    asked: &[(String, WaJid)],
    exists: &[IsOnWhatsAppResult],
    infos: &HashMap<WaJid, WaUserInfo>,
) -> Vec<UserInfo> {
    asked
        .iter()
        .filter_map(|(jid, wa)| {
            let found = exists_answer(wa, exists).filter(|r| r.is_registered)?;
            let info = info_for(wa, infos);
            let named = |v: Option<&whatsapp_rust::VerifiedName>| {
                v.and_then(|v| v.name.clone())
                    .filter(|n| !n.trim().is_empty())
            };
            Some(UserInfo {
                jid: jid.clone(),
                verified_name: named(info.and_then(|i| i.verified_name.as_ref()))
                    .or_else(|| named(found.verified_name.as_ref())),
                picture_id: info
                    .and_then(|i| i.picture_id.clone())
                    .filter(|id| !id.is_empty()),
            })
        })
        .collect()
}

/// A profile picture as the API shows it.
pub fn picture(p: &WaPicture) -> ProfilePicture {
    ProfilePicture {
        url: p.url.clone(),
        id: p.id.clone(),
    }
}

#[cfg(test)]
mod tests {
    use whatsapp_rust::IqError;
    use whatsapp_rust::NodeBuilder;
    use whatsapp_rust::wacore::iq::spec::IqSpec;
    use whatsapp_rust::wacore::iq::usync::{IsOnWhatsAppQueryType, IsOnWhatsAppSpec, UserInfoSpec};
    use whatsapp_rust::wacore_binary::Node;

    use super::*;
    use crate::domain::contact::ContactSource;

    /// A usync answer listing `users`.
    fn usync(users: Vec<Node>) -> Node {
        NodeBuilder::new("iq")
            .attr("type", "result")
            .children([NodeBuilder::new("usync")
                .children([NodeBuilder::new("list").children(users).build()])
                .build()])
            .build()
    }

    /// The crate's existence-check results for `users`, as it parses them.
    fn exists(query: IsOnWhatsAppQueryType, users: Vec<Node>) -> Vec<IsOnWhatsAppResult> {
        IsOnWhatsAppSpec::new(Vec::new(), "sid", query)
            .parse_response(&usync(users).as_node_ref())
            .unwrap()
    }

    /// A phone query's answer about one user.
    fn pn_user(phone: &str, contact: &str, children: Vec<Node>) -> Node {
        let mut all = vec![NodeBuilder::new("contact").attr("type", contact).build()];
        all.extend(children);
        NodeBuilder::new("user")
            .attr("jid", format!("{phone}@s.whatsapp.net"))
            .children(all)
            .build()
    }

    fn business(name: &str) -> Node {
        NodeBuilder::new("business")
            .children([NodeBuilder::new("verified_name").attr("name", name).build()])
            .build()
    }

    fn lid(val: &str) -> Node {
        NodeBuilder::new("lid").attr("val", val).build()
    }

    fn saved(full: Option<&str>, push: Option<&str>, business: Option<&str>) -> StoredContact {
        StoredContact {
            jid: "15550001111@s.whatsapp.net".into(),
            phone: "15550001111".into(),
            lid_jid: None,
            full_name: full.map(str::to_owned),
            first_name: None,
            push_name: push.map(str::to_owned),
            business_name: business.map(str::to_owned),
            source: ContactSource::AppstateSync,
            updated_at: "2024-01-01 00:00:00".into(),
        }
    }

    #[test]
    fn phone_checks_answer_in_the_order_asked_with_the_jid_of_registered_phones_only() {
        let results = exists(
            IsOnWhatsAppQueryType::Pn,
            vec![
                pn_user("15550002222", "out", vec![]),
                pn_user("15550001111", "in", vec![lid("100000001@lid")]),
            ],
        );
        let phones = ["15550001111", "15550002222", "15550003333"].map(String::from);
        assert_eq!(
            phone_checks(&phones, &results),
            [
                PhoneCheck {
                    phone: "15550001111".into(),
                    jid: Some("15550001111@s.whatsapp.net".into()),
                },
                PhoneCheck {
                    phone: "15550002222".into(),
                    jid: None,
                },
                PhoneCheck {
                    phone: "15550003333".into(),
                    jid: None,
                },
            ]
        );
    }

    #[test]
    fn a_phone_answered_under_its_lid_is_found_by_the_phone_beside_it() {
        let results = exists(
            IsOnWhatsAppQueryType::Pn,
            vec![
                NodeBuilder::new("user")
                    .attr("jid", "100000001@lid")
                    .attr("pn_jid", "15550001111@s.whatsapp.net")
                    .children([NodeBuilder::new("contact").attr("type", "in").build()])
                    .build(),
            ],
        );
        let asked = WaJid::pn("15550001111");
        assert!(on_network(&asked, &results));
        let found = exists_answer(&asked, &results).unwrap();
        assert_eq!(phone_of(&asked, found).as_deref(), Some("15550001111"));
    }

    #[test]
    fn a_lid_is_found_by_itself_and_its_phone_comes_from_the_answer() {
        let results = exists(
            IsOnWhatsAppQueryType::Lid,
            vec![
                NodeBuilder::new("user")
                    .attr("jid", "100000001@lid")
                    .attr("pn_jid", "15550001111@s.whatsapp.net")
                    .build(),
            ],
        );
        let asked = WaJid::lid("100000001");
        let found = exists_answer(&asked, &results).unwrap();
        assert!(found.is_registered);
        assert_eq!(phone_of(&asked, found).as_deref(), Some("15550001111"));
        assert!(!on_network(&WaJid::lid("100000002"), &results));
        assert!(!on_network(&WaJid::pn("100000001"), &results));
    }

    #[test]
    fn contact_info_prefers_the_saved_name_then_the_push_name_then_the_phone() {
        let results = exists(
            IsOnWhatsAppQueryType::Pn,
            vec![pn_user("15550001111", "in", vec![business("Acme Ltd")])],
        );
        let found = &results[0];
        let jid = "15550001111@s.whatsapp.net";
        let phone = Some("15550001111");

        let full = saved(Some("Alice Doe"), Some("ali"), None);
        assert_eq!(
            contact_info(jid, "15550001111", phone, found, Some(&full)),
            ContactInfo {
                jid: jid.into(),
                name: "Alice Doe".into(),
                notify: "ali".into(),
                verified_name: Some("Acme Ltd".into()),
            }
        );

        let pushed = saved(None, Some("ali"), None);
        let info = contact_info(jid, "15550001111", phone, found, Some(&pushed));
        assert_eq!((info.name.as_str(), info.notify.as_str()), ("ali", "ali"));

        let info = contact_info(jid, "15550001111", phone, found, None);
        assert_eq!(
            (info.name.as_str(), info.notify.as_str()),
            ("15550001111", "")
        );
    }

    #[test]
    fn contact_info_of_a_lid_without_a_known_phone_is_named_by_its_user_part() {
        let results = exists(
            IsOnWhatsAppQueryType::Lid,
            vec![
                NodeBuilder::new("user")
                    .attr("jid", "100000001@lid")
                    .build(),
            ],
        );
        let info = contact_info("100000001@lid", "100000001", None, &results[0], None);
        assert_eq!(
            info,
            ContactInfo {
                jid: "100000001@lid".into(),
                name: "100000001".into(),
                notify: String::new(),
                verified_name: None,
            }
        );
    }

    #[test]
    fn contact_info_falls_back_to_the_saved_business_name_and_ignores_blank_names() {
        let results = exists(
            IsOnWhatsAppQueryType::Pn,
            vec![pn_user("15550001111", "in", vec![])],
        );
        let blank = saved(Some("  "), Some(""), Some("Acme Ltd"));
        let info = contact_info(
            "15550001111@s.whatsapp.net",
            "15550001111",
            Some("15550001111"),
            &results[0],
            Some(&blank),
        );
        assert_eq!(info.name, "15550001111");
        assert_eq!(info.notify, "");
        assert_eq!(info.verified_name.as_deref(), Some("Acme Ltd"));
    }

    #[test]
    fn user_info_keeps_the_order_asked_and_leaves_out_accounts_not_on_the_network() {
        let results = exists(
            IsOnWhatsAppQueryType::Pn,
            vec![
                pn_user("15550001111", "in", vec![business("Acme Ltd")]),
                pn_user("15550002222", "in", vec![]),
                pn_user("15550003333", "out", vec![]),
            ],
        );
        let asked_jids = [
            WaJid::pn("15550002222"),
            WaJid::pn("15550003333"),
            WaJid::pn("15550001111"),
        ];
        let infos = UserInfoSpec::new(asked_jids.to_vec(), "sid")
            .parse_response(
                &usync(vec![
                    NodeBuilder::new("user")
                        .attr("jid", "15550001111@s.whatsapp.net")
                        .children([
                            NodeBuilder::new("picture").attr("id", "1234567890").build(),
                            NodeBuilder::new("business").build(),
                        ])
                        .build(),
                    NodeBuilder::new("user")
                        .attr("jid", "15550002222@s.whatsapp.net")
                        .children([business("Beta Inc")])
                        .build(),
                ])
                .as_node_ref(),
            )
            .unwrap();
        let asked: Vec<(String, WaJid)> = asked_jids
            .iter()
            .map(|j| (user_jid(j), j.clone()))
            .collect();
        assert_eq!(
            user_infos(&asked, &results, &infos),
            [
                UserInfo {
                    jid: "15550002222@s.whatsapp.net".into(),
                    verified_name: Some("Beta Inc".into()),
                    picture_id: None,
                },
                UserInfo {
                    jid: "15550001111@s.whatsapp.net".into(),
                    // The user info's business entry has no name: the
                    // existence check's is used.
                    verified_name: Some("Acme Ltd".into()),
                    picture_id: Some("1234567890".into()),
                },
            ]
        );
    }

    #[test]
    fn user_info_of_a_registered_account_the_info_left_out_still_lists_it() {
        let results = exists(
            IsOnWhatsAppQueryType::Lid,
            vec![
                NodeBuilder::new("user")
                    .attr("jid", "100000001@lid")
                    .build(),
            ],
        );
        let asked = vec![("100000001@lid".to_owned(), WaJid::lid("100000001"))];
        assert_eq!(
            user_infos(&asked, &results, &HashMap::new()),
            [UserInfo {
                jid: "100000001@lid".into(),
                verified_name: None,
                picture_id: None,
            }]
        );
    }

    #[test]
    fn a_picture_keeps_its_url_and_id() {
        let p = WaPicture {
            id: "1700000000".into(),
            url: "https://pps.whatsapp.net/v/t61/abc.jpg".into(),
            direct_path: Some("/v/t61/abc.jpg".into()),
            hash: None,
        };
        assert_eq!(
            picture(&p),
            ProfilePicture {
                url: "https://pps.whatsapp.net/v/t61/abc.jpg".into(),
                id: "1700000000".into(),
            }
        );
    }

    #[test]
    fn an_unsupported_jid_is_rejected_and_iq_failures_map_as_iq_failures() {
        let e = ContactError::InvalidJid("only PN and LID JIDs".into());
        let NetworkError::Rejected(m) = contact_error("the existence check", &e) else {
            panic!("an unsupported JID is `Rejected`");
        };
        assert_eq!(
            m,
            "the existence check was not sent: unsupported contact JID: only PN and LID JIDs"
        );
        let e = ContactError::Iq(IqError::NotConnected);
        assert!(matches!(
            contact_error("the existence check", &e),
            NetworkError::NotConnected
        ));
    }
}
