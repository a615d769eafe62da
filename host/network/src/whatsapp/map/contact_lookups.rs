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

/// The error of a blocklist operation (`what`), as the API answers it: a
/// target the crate will not block (no phone–LID pair known) is the
/// caller's, an IQ failure the network's.
pub fn blocking_error(what: &str, e: &whatsapp_rust::features::BlockingError) -> NetworkError {
    use whatsapp_rust::features::BlockingError as B;
    match e {
        B::Iq(e) => iq_error(what, e),
        B::InvalidJid(_) => NetworkError::Rejected(format!("{what} was not sent: {e}")),
        other => NetworkError::Failed(format!("{what} failed: {other}")),
    }
}

/// The blocklist as the server keeps it: each entry's JID (without a
/// device) and, when given, when it was blocked.
pub fn blocklist(
    entries: &[whatsapp_rust::features::BlocklistEntry],
) -> Vec<crate::contacts::Blocked> {
    entries
        .iter()
        .map(|e| crate::contacts::Blocked {
            jid: e.jid.to_non_ad_string(),
            blocked_at: e.timestamp.and_then(|t| i64::try_from(t).ok()),
        })
        .collect()
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

/// The account's `<id>@lid`: the asked JID itself when that is a LID, else
/// the one user info or the existence check carries (a phone answered under
/// its LID carries it as the answer's JID).
fn lid_of(asked: &WaJid, found: &IsOnWhatsAppResult, info: Option<&WaUserInfo>) -> Option<String> {
    if asked.is_lid() {
        return Some(user_jid(asked));
    }
    info.and_then(|i| i.lid.as_ref())
        .filter(|l| l.is_lid())
        .or(found.lid.as_ref().filter(|l| l.is_lid()))
        .or(Some(&found.jid).filter(|j| j.is_lid()))
        .map(user_jid)
}

/// A text the server gave, unless it is blank.
fn filled(s: Option<&String>) -> Option<String> {
    s.filter(|s| !s.trim().is_empty()).cloned()
}

/// What the network and the address book know about a registered account.
/// `asked` is the JID as the caller gave it and `wa` the crate's form of it
/// (its user part is the last fallback for the name), `phone` its digits
/// when known, `found` the existence check's answer, `info` the usync user
/// info (about text, picture, lid) when the server gave one, `saved` the
/// session's directory entry for that phone.
pub fn contact_info(
    asked: &str,
    wa: &WaJid,
    phone: Option<&str>,
    found: &IsOnWhatsAppResult,
    info: Option<&WaUserInfo>,
    saved: Option<&StoredContact>,
) -> ContactInfo {
    let push_name = saved.and_then(|c| filled(c.push_name.as_ref()));
    let name = saved
        .and_then(|c| filled(c.full_name.as_ref()).or_else(|| filled(c.first_name.as_ref())))
        .or_else(|| push_name.clone())
        .or_else(|| phone.map(str::to_owned))
        .unwrap_or_else(|| wa.user.to_string());
    let verified_name = found
        .verified_name
        .as_ref()
        .and_then(|v| filled(v.name.as_ref()))
        .or_else(|| saved.and_then(|c| filled(c.business_name.as_ref())));
    ContactInfo {
        jid: asked.to_owned(),
        name,
        notify: push_name.unwrap_or_default(),
        verified_name,
        lid: lid_of(wa, found, info),
        is_registered: found.is_registered,
        is_business: found.is_business || info.is_some_and(|i| i.is_business),
        status: filled(info.and_then(|i| i.status.as_ref())),
        picture_id: filled(info.and_then(|i| i.picture_id.as_ref())),
    }
}

/// The user-info answer about `asked`: the server keys it by the JID it was
/// asked about, else it can be told by the LID it carries.
pub fn info_for<'a>(
    asked: &WaJid,
    infos: &'a HashMap<WaJid, WaUserInfo>,
) -> Option<&'a WaUserInfo> {
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
            let named =
                |v: Option<&whatsapp_rust::VerifiedName>| filled(v.and_then(|v| v.name.as_ref()));
            Some(UserInfo {
                jid: jid.clone(),
                verified_name: named(info.and_then(|i| i.verified_name.as_ref()))
                    .or_else(|| named(found.verified_name.as_ref())),
                picture_id: filled(info.and_then(|i| i.picture_id.as_ref())),
                lid: lid_of(wa, found, info),
                is_business: found.is_business || info.is_some_and(|i| i.is_business),
                status: filled(info.and_then(|i| i.status.as_ref())),
            })
        })
        .collect()
}

/// A profile picture as the API shows it.
pub fn picture(p: &WaPicture) -> ProfilePicture {
    ProfilePicture::new(p.url.clone(), p.id.clone(), filled(p.direct_path.as_ref()))
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
        let wa = WaJid::pn("15550001111");
        let phone = Some("15550001111");

        let full = saved(Some("Alice Doe"), Some("ali"), None);
        assert_eq!(
            contact_info(jid, &wa, phone, found, None, Some(&full)),
            ContactInfo {
                jid: jid.into(),
                name: "Alice Doe".into(),
                notify: "ali".into(),
                verified_name: Some("Acme Ltd".into()),
                lid: None,
                is_registered: true,
                is_business: true,
                status: None,
                picture_id: None,
            }
        );

        let pushed = saved(None, Some("ali"), None);
        let info = contact_info(jid, &wa, phone, found, None, Some(&pushed));
        assert_eq!((info.name.as_str(), info.notify.as_str()), ("ali", "ali"));

        let info = contact_info(jid, &wa, phone, found, None, None);
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
        let wa = WaJid::lid("100000001");
        let info = contact_info("100000001@lid", &wa, None, &results[0], None, None);
        assert_eq!(
            info,
            ContactInfo {
                jid: "100000001@lid".into(),
                name: "100000001".into(),
                notify: String::new(),
                verified_name: None,
                lid: Some("100000001@lid".into()),
                is_registered: true,
                is_business: false,
                status: None,
                picture_id: None,
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
            &WaJid::pn("15550001111"),
            Some("15550001111"),
            &results[0],
            None,
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
                    lid: None,
                    is_business: true,
                    status: None,
                },
                UserInfo {
                    jid: "15550001111@s.whatsapp.net".into(),
                    // The user info's business entry has no name: the
                    // existence check's is used.
                    verified_name: Some("Acme Ltd".into()),
                    picture_id: Some("1234567890".into()),
                    lid: None,
                    is_business: true,
                    status: None,
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
                lid: Some("100000001@lid".into()),
                is_business: false,
                status: None,
            }]
        );
    }

    #[test]
    fn a_picture_keeps_its_url_id_and_direct_path() {
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
                picture_id: "1700000000".into(),
                direct_path: Some("/v/t61/abc.jpg".into()),
            }
        );
        let without = WaPicture {
            direct_path: None,
            ..p
        };
        assert_eq!(picture(&without).direct_path, None);
    }

    /// The crate's user info for `users`, asked about `asked`, as it parses it.
    fn user_info(asked: &[WaJid], users: Vec<Node>) -> HashMap<WaJid, WaUserInfo> {
        UserInfoSpec::new(asked.to_vec(), "sid")
            .parse_response(&usync(users).as_node_ref())
            .unwrap()
    }

    #[test]
    fn contact_info_takes_the_about_text_picture_and_lid_from_user_info() {
        let wa = WaJid::pn("15550001111");
        let results = exists(
            IsOnWhatsAppQueryType::Pn,
            vec![pn_user("15550001111", "in", vec![lid("100000001@lid")])],
        );
        let infos = user_info(
            std::slice::from_ref(&wa),
            vec![
                NodeBuilder::new("user")
                    .attr("jid", "15550001111@s.whatsapp.net")
                    .children([
                        NodeBuilder::new("status")
                            .attr("t", "1700000000")
                            .string_content("At the gym")
                            .build(),
                        NodeBuilder::new("picture").attr("id", "1234567890").build(),
                        NodeBuilder::new("business").build(),
                    ])
                    .build(),
            ],
        );
        let info = contact_info(
            "15550001111@s.whatsapp.net",
            &wa,
            Some("15550001111"),
            &results[0],
            info_for(&wa, &infos),
            None,
        );
        assert_eq!(info.lid.as_deref(), Some("100000001@lid"));
        assert_eq!(info.status.as_deref(), Some("At the gym"));
        assert_eq!(info.picture_id.as_deref(), Some("1234567890"));
        assert!(info.is_registered);
        assert!(
            info.is_business,
            "user info's business entry marks a business"
        );
    }

    #[test]
    fn an_about_text_hidden_from_this_account_reads_as_none() {
        let wa = WaJid::pn("15550001111");
        let results = exists(
            IsOnWhatsAppQueryType::Pn,
            vec![pn_user("15550001111", "in", vec![])],
        );
        let infos = user_info(
            std::slice::from_ref(&wa),
            vec![
                NodeBuilder::new("user")
                    .attr("jid", "15550001111@s.whatsapp.net")
                    .children([NodeBuilder::new("status").attr("code", "401").build()])
                    .build(),
            ],
        );
        let info = contact_info(
            "15550001111@s.whatsapp.net",
            &wa,
            Some("15550001111"),
            &results[0],
            info_for(&wa, &infos),
            None,
        );
        assert_eq!(info.status, None);
        assert_eq!(info.lid, None, "no lid given, none shown");
        assert!(!info.is_business);
        let asked = vec![("15550001111@s.whatsapp.net".to_owned(), wa)];
        let users = user_infos(&asked, &results, &infos);
        assert_eq!(users[0].status, None);
    }

    #[test]
    fn a_phone_answered_under_its_lid_shows_that_lid() {
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
        let wa = WaJid::pn("15550001111");
        let found = exists_answer(&wa, &results).unwrap();
        let info = contact_info(
            "15550001111@s.whatsapp.net",
            &wa,
            Some("15550001111"),
            found,
            None,
            None,
        );
        assert_eq!(info.lid.as_deref(), Some("100000001@lid"));
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
