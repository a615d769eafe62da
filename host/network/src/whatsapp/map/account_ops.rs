//! Account operations' pure rules: a [`SpamReport`] as the crate's
//! [`SpamReportRequest`], the keys the crate stores trust tokens under and
//! the JIDs those keys stand for, a stored token as a [`TrustToken`], and the
//! token timing the server tunes through its props.

use whatsapp_rust::wacore::iq::abprops::web;
use whatsapp_rust::wacore::iq::tctoken::{TcTokenConfig, is_tc_token_expired_with_at};
use whatsapp_rust::wacore::store::ab_props::AbPropsCache;
use whatsapp_rust::wacore::store::traits::TcTokenEntry;
use whatsapp_rust::{CompactString, Jid as WaJid, SpamReportRequest, SpamReportResult};

use crate::NetworkError;
use crate::account::{SpamFlow, SpamReport, TrustToken};

/// Our spam flow as the crate's.
pub fn spam_flow(f: SpamFlow) -> whatsapp_rust::SpamFlow {
    use whatsapp_rust::SpamFlow as Wa;
    match f {
        SpamFlow::MessageMenu => Wa::MessageMenu,
        SpamFlow::GroupSpamBannerReport => Wa::GroupSpamBannerReport,
        SpamFlow::GroupInfoReport => Wa::GroupInfoReport,
        SpamFlow::ContactInfo => Wa::ContactInfo,
        SpamFlow::StatusReport => Wa::StatusReport,
    }
}

/// A JID field of the report as the crate's JID.
fn report_jid(field: &str, v: &Option<String>) -> Result<Option<WaJid>, NetworkError> {
    v.as_deref()
        .map(|s| {
            s.parse::<WaJid>().map_err(|e| {
                NetworkError::Rejected(format!(
                    "`{field}` `{s}` is not a JID WhatsApp accepts: {e}"
                ))
            })
        })
        .transpose()
}

/// The crate's request for a validated report. The message timestamp goes as
/// whole seconds (the wire's `t`). `raw` is the reported message as the
/// session kept it (its encoded `wa::Message`), attached as WhatsApp Web
/// attaches it so the server sees what was reported; the crate sends
/// `media_type` only beside it.
pub fn spam_request(
    r: &SpamReport,
    raw: Option<Vec<u8>>,
) -> Result<SpamReportRequest, NetworkError> {
    Ok(SpamReportRequest {
        message_id: r.message_id.clone(),
        // Validated as zero or more; `as` saturates anything out of range.
        message_timestamp: r.message_timestamp.trunc() as u64,
        from_jid: report_jid("from_jid", &r.from_jid)?,
        participant_jid: report_jid("participant_jid", &r.participant_jid)?,
        group_jid: report_jid("group_jid", &r.group_jid)?,
        group_subject: r.group_subject.clone(),
        spam_flow: spam_flow(r.spam_flow),
        raw_message: raw,
        media_type: r.media_type.clone(),
        local_message_type: None,
    })
}

/// The report id the server gave. It is optional on the wire: a report the
/// server accepted without one answers an empty id rather than an error, so
/// the caller does not send it again.
pub fn report_id(r: &SpamReportResult) -> String {
    r.report_id.clone().unwrap_or_default()
}

/// The store keys a contact's token may be under, most likely first. The
/// crate keys tokens by bare user: the contact's LID user when it knows one
/// (`lid`, resolved through its lid-pn mapping for a phone JID), else the
/// phone digits it was addressed by.
pub fn token_keys(asked: &WaJid, lid: Option<&str>) -> Vec<String> {
    let user = asked.user.to_string();
    match lid {
        Some(lid) if !asked.is_lid() && lid != user => vec![lid.to_owned(), user],
        _ => vec![user],
    }
}

/// What the lid-pn mapping says a token key is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKey {
    /// A LID user the mapping knows.
    Lid,
    /// Phone digits the mapping knows.
    Phone,
    /// Neither side of any mapping.
    Unknown,
}

/// The JID a token key stands for. A key the mapping does not know is read
/// as a LID: the crate stores a contact's token under the LID it arrives
/// with, and under phone digits only while it knows no LID for the phone.
pub fn token_jid(key: &str, kind: TokenKey) -> String {
    if key.contains('@') {
        return key.to_owned();
    }
    match kind {
        TokenKey::Phone => WaJid::pn(key).to_string(),
        TokenKey::Lid | TokenKey::Unknown => WaJid::lid(key).to_string(),
    }
}

/// A stored token as the API shows it, for the JID it was asked by. A
/// byte-less entry (only our own issue recorded) holds no token of the
/// contact's, so it has no token time and counts as expired.
pub fn trust_token(jid: String, e: &TcTokenEntry, config: &TcTokenConfig, now: i64) -> TrustToken {
    let has_token = !e.token.is_empty();
    TrustToken {
        jid,
        token_timestamp: has_token.then_some(e.token_timestamp),
        sender_timestamp: e.sender_timestamp,
        expired: !has_token || is_tc_token_expired_with_at(e.token_timestamp, config, now),
    }
}

/// The token timing a props answer sets, the way the crate derives it from
/// its AB-props cache (`Client::tc_token_config`, crate-private): the
/// server's values where it sent them, the props' registry defaults where
/// not, clamped to safe ranges.
pub async fn tc_token_config(props: Vec<(u32, CompactString)>) -> TcTokenConfig {
    let cache = AbPropsCache::new();
    cache.apply_props(false, props.into_iter()).await;
    TcTokenConfig {
        bucket_duration: cache.get_int(web::TCTOKEN_DURATION).await,
        num_buckets: cache.get_int(web::TCTOKEN_NUM_BUCKETS).await,
        sender_bucket_duration: cache.get_int(web::TCTOKEN_DURATION_SENDER).await,
        sender_num_buckets: cache.get_int(web::TCTOKEN_NUM_BUCKETS_SENDER).await,
    }
    .clamped()
}

#[cfg(test)]
mod tests {
    use whatsapp_rust::NodeBuilder;
    use whatsapp_rust::spam_report::build_spam_list_node;
    use whatsapp_rust::wacore::iq::spam_report::SpamReportSpec;
    use whatsapp_rust::wacore::iq::spec::IqSpec;

    use super::*;

    fn report() -> SpamReport {
        SpamReport {
            message_id: "3EB0ABCDEF".into(),
            message_timestamp: 1_700_000_000.9,
            from_jid: Some("15550001111@s.whatsapp.net".into()),
            participant_jid: Some("100000001@lid".into()),
            group_jid: Some("120363025918861132@g.us".into()),
            group_subject: Some("Neighbours".into()),
            spam_flow: SpamFlow::GroupInfoReport,
            media_type: Some("image".into()),
        }
    }

    #[test]
    fn a_spam_report_becomes_the_crates_request_field_by_field() {
        let req = spam_request(&report(), None).unwrap();
        assert_eq!(req.message_id, "3EB0ABCDEF");
        assert_eq!(req.message_timestamp, 1_700_000_000);
        assert_eq!(
            req.from_jid.map(|j| j.to_string()).as_deref(),
            Some("15550001111@s.whatsapp.net")
        );
        assert_eq!(
            req.participant_jid.map(|j| j.to_string()).as_deref(),
            Some("100000001@lid")
        );
        assert_eq!(
            req.group_jid.as_ref().map(|j| j.to_string()).as_deref(),
            Some("120363025918861132@g.us")
        );
        assert_eq!(req.group_subject.as_deref(), Some("Neighbours"));
        assert_eq!(req.spam_flow, whatsapp_rust::SpamFlow::GroupInfoReport);
        assert!(req.raw_message.is_none());
        assert_eq!(req.media_type.as_deref(), Some("image"));
        assert!(req.local_message_type.is_none());
    }

    #[test]
    fn a_spam_report_goes_on_the_wire_as_the_servers_spam_list() {
        let node = build_spam_list_node(&spam_request(&report(), None).unwrap());
        assert_eq!(node.tag, "spam_list");
        assert!(
            node.attrs
                .get("spam_flow")
                .is_some_and(|v| v == "GroupInfoReport")
        );
        assert!(node.attrs.get("subject").is_some_and(|v| v == "Neighbours"));
        let message = node.get_optional_child_by_tag(&["message"]).unwrap();
        assert!(message.attrs.get("t").is_some_and(|v| v == "1700000000"));
        assert!(
            message
                .attrs
                .get("from")
                .is_some_and(|v| v == "15550001111@s.whatsapp.net")
        );
    }

    #[test]
    fn a_kept_message_goes_with_its_report_as_the_raw_message_with_its_media_type() {
        let raw = vec![0x0A, 0x02, b'h', b'i'];
        let req = spam_request(&report(), Some(raw.clone())).unwrap();
        assert_eq!(req.raw_message.as_deref(), Some(&raw[..]));
        let node = build_spam_list_node(&req);
        let message = node.get_optional_child_by_tag(&["message"]).unwrap();
        let attached = message
            .get_optional_child_by_tag(&["raw"])
            .expect("the raw message");
        assert!(attached.attrs.get("v").is_some_and(|v| v == "3"));
        assert!(
            attached
                .attrs
                .get("mediatype")
                .is_some_and(|v| v == "image")
        );
        assert!(matches!(
            &attached.content,
            Some(whatsapp_rust::wacore_binary::node::NodeContent::Bytes(b)) if b == &raw
        ));
    }

    #[test]
    fn a_minimal_report_has_no_optional_fields() {
        let minimal = SpamReport {
            message_id: "ID".into(),
            message_timestamp: 0.0,
            from_jid: None,
            participant_jid: None,
            group_jid: None,
            group_subject: None,
            spam_flow: SpamFlow::MessageMenu,
            media_type: None,
        };
        let req = spam_request(&minimal, None).unwrap();
        assert_eq!(req.message_timestamp, 0);
        assert!(req.from_jid.is_none() && req.participant_jid.is_none());
        assert!(req.group_jid.is_none() && req.group_subject.is_none());
        assert_eq!(req.spam_flow, whatsapp_rust::SpamFlow::MessageMenu);
    }

    #[test]
    fn every_spam_flow_has_the_crates_wire_name() {
        let wire: Vec<&str> = SpamFlow::ALL
            .iter()
            .map(|f| spam_flow(*f).as_str())
            .collect();
        assert_eq!(
            wire,
            [
                "MessageMenu",
                "GroupSpamBannerReport",
                "GroupInfoReport",
                "ContactInfo",
                "StatusReport"
            ]
        );
    }

    #[test]
    fn a_jid_the_crate_cannot_read_is_rejected() {
        let mut r = report();
        r.from_jid = Some("nobody".into());
        assert!(matches!(
            spam_request(&r, None),
            Err(NetworkError::Rejected(_))
        ));
    }

    #[test]
    fn the_report_id_is_the_servers_or_empty_when_it_gave_none() {
        let spec = SpamReportSpec::new(spam_request(&report(), None).unwrap());
        let answered = NodeBuilder::new("iq")
            .attr("type", "result")
            .children([NodeBuilder::new("report_id")
                .string_content("REPORT_123")
                .build()])
            .build();
        let result = spec.parse_response(&answered.as_node_ref()).unwrap();
        assert_eq!(report_id(&result), "REPORT_123");
        assert_eq!(report_id(&SpamReportResult { report_id: None }), "");
    }

    #[test]
    fn a_phone_is_looked_up_under_its_lid_first_then_under_its_digits() {
        let phone = WaJid::pn("15550001111");
        assert_eq!(
            token_keys(&phone, Some("100000001")),
            ["100000001", "15550001111"]
        );
        assert_eq!(token_keys(&phone, None), ["15550001111"]);
        let lid = WaJid::lid("100000001");
        assert_eq!(token_keys(&lid, None), ["100000001"]);
        assert_eq!(token_keys(&lid, Some("100000001")), ["100000001"]);
    }

    #[test]
    fn a_token_key_reads_as_the_jid_its_mapping_says() {
        assert_eq!(token_jid("100000001", TokenKey::Lid), "100000001@lid");
        assert_eq!(
            token_jid("15550001111", TokenKey::Phone),
            "15550001111@s.whatsapp.net"
        );
        assert_eq!(token_jid("100000002", TokenKey::Unknown), "100000002@lid");
        assert_eq!(
            token_jid("15550001111@s.whatsapp.net", TokenKey::Unknown),
            "15550001111@s.whatsapp.net"
        );
    }

    #[test]
    fn a_stored_token_shows_its_times_and_expires_after_the_configured_buckets() {
        let config = TcTokenConfig {
            bucket_duration: 100,
            num_buckets: 2,
            sender_bucket_duration: 100,
            sender_num_buckets: 2,
        };
        let entry = TcTokenEntry {
            token: vec![1, 2, 3],
            token_timestamp: 1_000,
            sender_timestamp: Some(1_050),
        };
        assert_eq!(
            trust_token("100000001@lid".into(), &entry, &config, 1_050),
            TrustToken {
                jid: "100000001@lid".into(),
                token_timestamp: Some(1_000),
                sender_timestamp: Some(1_050),
                expired: false,
            }
        );
        assert!(trust_token("j".into(), &entry, &config, 10_000).expired);
    }

    #[test]
    fn a_byteless_entry_has_no_token_time_and_counts_as_expired() {
        let entry = TcTokenEntry {
            token: Vec::new(),
            token_timestamp: 0,
            sender_timestamp: Some(1_050),
        };
        let t = trust_token("j".into(), &entry, &TcTokenConfig::default(), 1_050);
        assert_eq!(t.token_timestamp, None);
        assert_eq!(t.sender_timestamp, Some(1_050));
        assert!(t.expired);
    }

    #[tokio::test]
    async fn the_token_timing_is_the_servers_where_it_sent_it_and_the_registry_default_elsewhere() {
        let config = tc_token_config(vec![
            (web::TCTOKEN_DURATION.code, "86400".into()),
            (web::TCTOKEN_NUM_BUCKETS.code, "26".into()),
            (web::TCTOKEN_NUM_BUCKETS_SENDER.code, "not a number".into()),
        ])
        .await;
        assert_eq!(config.bucket_duration, 86_400);
        assert_eq!(config.num_buckets, 26);
        assert_eq!(config.sender_bucket_duration, 604_800);
        assert_eq!(config.sender_num_buckets, 4);
    }

    #[tokio::test]
    async fn a_server_value_out_of_range_is_clamped() {
        let config = tc_token_config(vec![(web::TCTOKEN_NUM_BUCKETS.code, "0".into())]).await;
        assert_eq!(config.num_buckets, 1);
    }
}
