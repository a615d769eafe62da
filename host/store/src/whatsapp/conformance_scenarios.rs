//! The scenarios of the storage conformance suite: each writes through the
//! crate's traits and records what the reads answer as text lines (lists
//! sorted where the trait promises no order), in two phases — before and
//! after the database is closed and reopened.

use std::sync::Arc;

use bytes::Bytes;
use whatsapp_rust::wacore::appstate::hash::HashState;
use whatsapp_rust::wacore::appstate::processor::AppStateMutationMAC;
use whatsapp_rust::wacore::store::Device;
use whatsapp_rust::wacore::store::traits::{
    AppStateSyncKey, Backend, DeviceInfo, DeviceListRecord, LidPnMappingEntry, MsgSecretEntry,
    PendingInboundKey, PendingInboundRow, TcTokenEntry,
};

/// What the scenarios write down.
pub(super) type Trace = Vec<String>;

pub(super) fn line(out: &mut Trace, what: &str, value: impl std::fmt::Debug) {
    out.push(format!("{what}: {value:?}"));
}

pub(super) fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v
}

pub(super) fn hash_state(s: &HashState) -> String {
    let map: Vec<_> = sorted(s.index_value_map.iter().collect());
    format!(
        "v{} {:?} {:?} {}",
        s.version,
        &s.hash[..4],
        map,
        s.mac_mismatch_fatal
    )
}

pub(super) fn lid(l: &str, pn: &str, at: i64) -> LidPnMappingEntry {
    LidPnMappingEntry {
        lid: l.into(),
        phone_number: pn.into(),
        created_at: at,
        updated_at: at,
        learning_source: "usync".into(),
    }
}

pub(super) fn fmt_lid(e: &LidPnMappingEntry) -> String {
    format!(
        "{}={} {} {} {}",
        e.lid, e.phone_number, e.created_at, e.updated_at, e.learning_source
    )
}

pub(super) fn fmt_tc(e: &Option<TcTokenEntry>) -> String {
    e.as_ref().map_or("none".into(), |e| {
        format!(
            "{:?} {} {:?}",
            e.token, e.token_timestamp, e.sender_timestamp
        )
    })
}

/// Phase one: writes of every trait family, and the reads right after.
pub(super) async fn phase_one(b: &dyn Backend, out: &mut Trace) {
    let r = |e| format!("{e:?}");
    // Device.
    line(
        out,
        "device exists before create",
        b.exists().await.map_err(r),
    );
    line(out, "create", b.create().await.map_err(r));
    line(
        out,
        "device exists after create",
        b.exists().await.map_err(r),
    );
    let mut device = Device::new();
    device.push_name = "Ada".into();
    device.registration_id = 4242;
    device.next_pre_key_id = 77;
    b.save(&device).await.unwrap();
    let loaded = b.load().await.unwrap().unwrap();
    line(
        out,
        "device round trip",
        serde_json::to_string(&loaded).unwrap() == serde_json::to_string(&device).unwrap(),
    );

    // Identities and sessions.
    b.put_identity("111@s.whatsapp.net", [1; 32]).await.unwrap();
    b.put_identities_batch(&[
        (Arc::from("111:2@s.whatsapp.net"), [2; 32]),
        (Arc::from("222@lid"), [3; 32]),
    ])
    .await
    .unwrap();
    b.delete_identity("222@lid").await.unwrap();
    line(
        out,
        "identity 111:2",
        b.load_identity("111:2@s.whatsapp.net").await.unwrap(),
    );
    line(
        out,
        "identity 222 deleted",
        b.load_identity("222@lid").await.unwrap(),
    );
    b.put_session("111@s.whatsapp.net", b"s1").await.unwrap();
    b.put_sessions_batch(&[
        (Arc::from("333:5@lid"), Bytes::from_static(b"s3")),
        (Arc::from("111@s.whatsapp.net"), Bytes::from_static(b"s1b")),
    ])
    .await
    .unwrap();
    line(
        out,
        "session 111 replaced",
        b.get_session("111@s.whatsapp.net").await.unwrap(),
    );
    line(
        out,
        "has session 333:5",
        b.has_session("333:5@lid").await.unwrap(),
    );
    for user in ["111", "333", "11", "444"] {
        line(
            out,
            &format!("signal state for {user}"),
            b.has_signal_state_for_user(user).await.unwrap(),
        );
    }

    // Pre-keys.
    line(
        out,
        "max prekey of none",
        b.get_max_prekey_id().await.unwrap(),
    );
    b.store_prekey(5, b"pk5", false).await.unwrap();
    b.store_prekeys_batch(
        &[
            (300, Bytes::from_static(b"pk300")),
            (6, Bytes::from_static(b"pk6")),
        ],
        true,
    )
    .await
    .unwrap();
    b.remove_prekey(6).await.unwrap();
    b.mark_prekeys_uploaded(&[5, 6]).await.unwrap();
    line(
        out,
        "prekey 6 stays removed",
        b.load_prekey(6).await.unwrap(),
    );
    line(
        out,
        "prekeys batch",
        b.load_prekeys_batch(&[300, 6, 5]).await.unwrap(),
    );
    line(out, "max prekey", b.get_max_prekey_id().await.unwrap());
    b.store_signed_prekey(2, b"spk2").await.unwrap();
    b.store_signed_prekey(1, b"spk1").await.unwrap();
    b.store_signed_prekey(3, b"spk3").await.unwrap();
    b.remove_signed_prekey(3).await.unwrap();
    line(
        out,
        "signed prekeys",
        sorted(b.load_all_signed_prekeys().await.unwrap()),
    );
    b.put_sender_key("g1::111:2", b"sk").await.unwrap();
    b.put_sender_keys_batch(&[(Arc::from("g1::222"), Bytes::from_static(b"sk2"))])
        .await
        .unwrap();
    b.delete_sender_key("g1::222").await.unwrap();
    line(
        out,
        "sender key",
        b.get_sender_key("g1::111:2").await.unwrap(),
    );

    // App state.
    let key = AppStateSyncKey {
        key_data: vec![9; 4],
        fingerprint: vec![8],
        timestamp: 55,
    };
    b.set_sync_key(b"k1", key.clone()).await.unwrap();
    b.set_sync_key(b"k0", key).await.unwrap();
    line(
        out,
        "latest sync key",
        b.get_latest_sync_key_id().await.unwrap(),
    );
    line(
        out,
        "sync key missing",
        b.get_sync_key(b"kx").await.unwrap().is_none(),
    );
    line(
        out,
        "version of a new collection",
        hash_state(&b.get_version("regular").await.unwrap()),
    );
    let mut state = HashState {
        version: 7,
        ..HashState::default()
    };
    state.hash[0] = 0xab;
    state.index_value_map.insert("idx".into(), vec![1, 2]);
    b.set_version("regular", state).await.unwrap();
    let macs = |i: u8| AppStateMutationMAC {
        index_mac: vec![i; 32],
        value_mac: vec![i + 100],
    };
    b.put_mutation_macs("regular", 7, &[macs(1), macs(2), macs(3)])
        .await
        .unwrap();
    b.put_mutation_macs("critical", 1, &[macs(1)])
        .await
        .unwrap();
    b.delete_mutation_macs("regular", &[vec![2; 32]])
        .await
        .unwrap();
    let batch = b
        .get_mutation_macs("regular", &[[1; 32], [2; 32], [3; 32]])
        .await
        .unwrap();
    line(out, "mutation macs", sorted(batch.into_iter().collect()));

    // Protocol.
    b.set_sender_key_status(
        "g1@g.us",
        &[("111:1@s.whatsapp.net", true), ("222:0@lid", false)],
    )
    .await
    .unwrap();
    b.set_sender_key_status(
        "g2@g.us",
        &[("111:1@s.whatsapp.net", true), ("333:0@lid", true)],
    )
    .await
    .unwrap();
    b.delete_sender_key_device_rows(&["111:1@s.whatsapp.net"])
        .await
        .unwrap();
    line(
        out,
        "skd g1",
        sorted(b.get_sender_key_devices("g1@g.us").await.unwrap()),
    );
    b.put_lid_mapping(&lid("900", "5511", 10)).await.unwrap();
    b.put_lid_mappings(&[lid("901", "5522", 11), lid("900", "5533", 12)])
        .await
        .unwrap();
    line(
        out,
        "pn 5511 after the lid moved",
        b.get_pn_mapping("5511").await.unwrap().map(|e| fmt_lid(&e)),
    );
    b.save_base_key("111:1", "m1", b"base").await.unwrap();
    b.save_base_key("111:1", "m2", b"other").await.unwrap();
    b.delete_base_key("111:1", "m2").await.unwrap();
    line(
        out,
        "same base key",
        b.has_same_base_key("111:1", "m1", b"base").await.unwrap(),
    );
    let rec = |u: &str, ts| DeviceListRecord {
        user: u.into(),
        devices: vec![
            DeviceInfo::new(0, None),
            DeviceInfo::new(3, Some(1)).with_hosting(true),
        ],
        timestamp: ts,
        phash: Some("ph".into()),
        raw_id: Some(5),
    };
    b.update_device_list(rec("111", 1)).await.unwrap();
    b.update_device_lists(vec![rec("222", 2), rec("111", 3)])
        .await
        .unwrap();
    b.delete_devices("222").await.unwrap();
    b.put_group_metadata("g1@g.us", b"meta").await.unwrap();
    b.put_group_metadata("g2@g.us", b"meta2").await.unwrap();
    b.delete_group_metadata("g2@g.us").await.unwrap();
    b.put_tc_token(
        "a@lid",
        &TcTokenEntry {
            token: vec![1],
            token_timestamp: 100,
            sender_timestamp: None,
        },
    )
    .await
    .unwrap();
    b.store_received_tc_token("a@lid", &[2], 90).await.unwrap();
    b.touch_tc_token_sender_timestamp("a@lid", 50)
        .await
        .unwrap();
    b.touch_tc_token_sender_timestamp("a@lid", 40)
        .await
        .unwrap();
    b.touch_tc_token_sender_timestamp("b@lid", 70)
        .await
        .unwrap();
    b.store_received_tc_token("b@lid", &[3], 60).await.unwrap();
    b.put_tc_token(
        "c@lid",
        &TcTokenEntry {
            token: vec![4],
            token_timestamp: 10,
            sender_timestamp: Some(10),
        },
    )
    .await
    .unwrap();
    line(out, "tc a", fmt_tc(&b.get_tc_token("a@lid").await.unwrap()));
    b.store_sent_message("c@s.whatsapp.net", "m1", b"payload")
        .await
        .unwrap();
    b.store_sent_message("c@s.whatsapp.net", "m2", b"payload2")
        .await
        .unwrap();
    line(
        out,
        "take sent m2",
        b.take_sent_message("c@s.whatsapp.net", "m2").await.unwrap(),
    );
    line(
        out,
        "take sent m2 again",
        b.take_sent_message("c@s.whatsapp.net", "m2").await.unwrap(),
    );
    b.store_pending_inbound_batch(&[
        PendingInboundRow {
            chat: "c",
            sender: "s",
            id: "1",
            message: b"one",
        },
        PendingInboundRow {
            chat: "c",
            sender: "s",
            id: "2",
            message: b"two",
        },
    ])
    .await
    .unwrap();
    b.delete_pending_inbound_batch(&[PendingInboundKey {
        chat: "c",
        sender: "s",
        id: "2",
    }])
    .await
    .unwrap();
    let secret = |c: &str, id: &str, s: u8, exp, ts| MsgSecretEntry {
        chat: c.into(),
        sender: "me".into(),
        msg_id: id.into(),
        secret: [s; 32],
        expires_at: exp,
        message_ts: ts,
    };
    let n = b
        .put_msg_secrets(vec![
            secret("c1", "m1", 1, 100, 5),
            secret("c1", "m2", 2, 0, 0),
            secret("c1", "m3", 3, 50, 0),
        ])
        .await
        .unwrap();
    line(out, "secrets stored", n);
    b.put_msg_secrets(vec![secret("c1", "m1", 9, 80, 0)])
        .await
        .unwrap();
    line(
        out,
        "secret m1 merged",
        b.get_msg_secret_with_ts("c1", "me", "m1").await.unwrap(),
    );
}
