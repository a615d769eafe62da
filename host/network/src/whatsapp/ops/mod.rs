//! Group, contact, account, media and chat operations of a whatsapp
//! session, one file per family: `groups` (the crate's `groups()` feature),
//! `contacts` (`contacts()` and usync), `account` (trust tokens, spam
//! reports, app-state resync), `media` (downloads from the CDN), `chats`
//! (read receipts, message actions, presence, typing, chat actions, LID
//! lookups), `profile` (`profile()`: the account's push name, about text
//! and picture). Every operation reaches the crate; none answers
//! `NotSupported`.

mod account;
mod chats;
mod contacts;
mod groups;
mod media;
mod profile;

#[cfg(test)]
pub(crate) use media::download_error;

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::account::{AccountOps, Collection, ResyncMode, SpamFlow, SpamReport};
    use crate::chats::{ChatAction, ChatOps, ChatState, MessageAction, MessageKey};
    use crate::contacts::ContactOps;
    use crate::domain::group::SettingsUpdate;
    use crate::domain::jid::Jid;
    use crate::domain::media::MediaKind;
    use crate::groups::{GroupError, GroupOps, NewGroup};
    use crate::media::MediaOps;
    use crate::profile::ProfileOps;
    use crate::store::Store;
    use crate::whatsapp::WhatsAppConfig;
    use crate::whatsapp::session::WaSession;

    /// What an operation answered, as far as this test cares.
    fn verdict<E: std::fmt::Debug>(
        name: &'static str,
        r: Result<impl Sized, E>,
    ) -> (&'static str, String) {
        match r {
            Ok(_) => (name, "ok".into()),
            Err(e) => (name, format!("{e:?}")),
        }
    }

    fn is_not_supported(answer: &str) -> bool {
        answer.contains("NotSupported")
    }

    #[tokio::test]
    async fn every_operation_reaches_the_crate_and_none_answers_not_supported() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let (sink, _events) = tokio::sync::mpsc::channel(16);
        let s = Arc::new(WaSession::new(
            "wa".into(),
            store,
            crate::whatsapp::test_media_store(dir.path()),
            WhatsAppConfig::default(),
            Default::default(),
            sink,
        ));
        let group = Jid::parse("120363000000000001@g.us").unwrap();
        let user = Jid::parse("15550001111@s.whatsapp.net").unwrap();
        let who = [user.clone()];
        let key = MessageKey {
            chat: user.clone(),
            message_id: "3EB0AA".into(),
            from_me: true,
            sender: None,
        };
        fn g<T>(r: Result<T, GroupError>) -> Result<T, String> {
            r.map_err(|e| format!("{e:?}"))
        }
        let answers = vec![
            verdict("groups", g(s.groups().await)),
            verdict("group_info", g(s.group_info(&group).await)),
            verdict(
                "create_group",
                g(s.create_group(&NewGroup {
                    name: "n".into(),
                    participants: who.to_vec(),
                    settings: Default::default(),
                })
                .await),
            ),
            verdict(
                "set_group_subject",
                g(s.set_group_subject(&group, "s").await),
            ),
            verdict(
                "set_group_description",
                g(s.set_group_description(&group, Some("d"), None).await),
            ),
            verdict(
                "update_group_settings",
                g(s.update_group_settings(&group, &SettingsUpdate::default())
                    .await),
            ),
            verdict("leave_group", g(s.leave_group(&group).await)),
            verdict(
                "add_participants",
                g(s.add_participants(&group, &who).await),
            ),
            verdict(
                "remove_participants",
                g(s.remove_participants(&group, &who).await),
            ),
            verdict(
                "promote_participants",
                g(s.promote_participants(&group, &who).await),
            ),
            verdict(
                "demote_participants",
                g(s.demote_participants(&group, &who).await),
            ),
            verdict("invite_link", g(s.invite_link(&group, false).await)),
            verdict(
                "check_phones",
                s.check_phones(&["15550001111".into()]).await,
            ),
            verdict("contact_info", s.contact_info(&user).await),
            verdict("contact_infos", s.contact_infos(&who).await),
            verdict("profile_picture", s.profile_picture(&user).await),
            verdict("user_info", s.user_info(&who).await),
            verdict("blocklist", s.blocklist().await),
            verdict("set_blocked", s.set_blocked(&user, true).await),
            verdict("issue_trust_tokens", s.issue_trust_tokens(&who).await),
            verdict("trust_token", s.trust_token(&user).await),
            verdict("trust_token_jids", s.trust_token_jids().await),
            verdict("prune_trust_tokens", s.prune_trust_tokens().await),
            verdict(
                "report_spam",
                s.report_spam(&SpamReport {
                    message_id: "m".into(),
                    message_timestamp: 1.0,
                    from_jid: Some(user.to_string()),
                    participant_jid: None,
                    group_jid: None,
                    group_subject: None,
                    spam_flow: SpamFlow::MessageMenu,
                    media_type: None,
                })
                .await,
            ),
            verdict(
                "resync_app_state",
                s.resync_app_state(&[Collection::Regular], ResyncMode::Incremental)
                    .await,
            ),
            verdict(
                "download_media",
                s.download_media(
                    MediaKind::Image,
                    &serde_json::json!({
                        "direct_path": "/v/t62/x",
                        "media_key": "AQ==",
                        "file_sha256": "Ag==",
                        "file_enc_sha256": "Aw==",
                    }),
                )
                .await,
            ),
            verdict("mark_read", s.mark_read(&user, None, &["m".into()]).await),
            verdict(
                "act",
                s.act(
                    "3EB0CC",
                    &MessageAction::Revoke {
                        target: key.clone(),
                    },
                )
                .await,
            ),
            verdict("star", s.star(&key, true).await),
            verdict("set_presence", s.set_presence(true).await),
            verdict("subscribe_presence", s.subscribe_presence(&user).await),
            verdict(
                "send_chat_state",
                s.send_chat_state(&user, ChatState::Composing).await,
            ),
            verdict(
                "chat_action",
                s.chat_action(&user, ChatAction::Archive(true)).await,
            ),
            verdict("look_up_lid", s.look_up_lid(&user).await),
            verdict("own_profile", s.own_profile().await),
            verdict("set_push_name", s.set_push_name("n").await),
            verdict("set_about", s.set_about("a").await),
            verdict("set_picture", s.set_picture(vec![1, 2, 3]).await),
            verdict("remove_picture", s.remove_picture().await),
        ];
        assert_eq!(
            answers.len(),
            39,
            "every operation of the six traits is asked"
        );
        for (name, answer) in &answers {
            assert!(!is_not_supported(answer), "{name} answered {answer}");
        }
    }
}
