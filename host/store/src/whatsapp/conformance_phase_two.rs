//! Phase two of the storage conformance suite (`conformance_scenarios.rs`
//! holds phase one and the shared helpers): after the database is closed and
//! reopened, everything phase one wrote must read back the same, and the
//! pruning and clearing calls must work on it.

use whatsapp_rust::wacore::store::traits::Backend;

use super::conformance_scenarios::{Trace, fmt_lid, fmt_tc, hash_state, line, sorted};

/// Phase two, after the reopen: everything phase one left must still be
/// there, and the pruning and clearing calls must work on it.
pub(super) async fn phase_two(b: &dyn Backend, out: &mut Trace) {
    line(out, "device exists", b.exists().await.unwrap());
    let d = b.load().await.unwrap().unwrap();
    line(
        out,
        "device",
        (d.push_name.clone(), d.registration_id, d.next_pre_key_id),
    );
    line(
        out,
        "create again keeps the device",
        b.create().await.map(|_| ()).is_ok(),
    );
    line(
        out,
        "device after create",
        b.load().await.unwrap().map(|d| d.push_name),
    );
    line(
        out,
        "identity 111",
        b.load_identity("111@s.whatsapp.net").await.unwrap(),
    );
    line(
        out,
        "session 111",
        b.get_session("111@s.whatsapp.net").await.unwrap(),
    );
    b.delete_session("111@s.whatsapp.net").await.unwrap();
    line(
        out,
        "session 111 deleted",
        b.has_session("111@s.whatsapp.net").await.unwrap(),
    );
    line(
        out,
        "prekeys",
        b.load_prekeys_batch(&[5, 6, 300]).await.unwrap(),
    );
    line(out, "prekey 5", b.load_prekey(5).await.unwrap());
    line(out, "max prekey", b.get_max_prekey_id().await.unwrap());
    line(
        out,
        "signed prekey 2",
        b.load_signed_prekey(2).await.unwrap(),
    );
    line(
        out,
        "sender key",
        b.get_sender_key("g1::111:2").await.unwrap(),
    );
    line(
        out,
        "sender key deleted",
        b.get_sender_key("g1::222").await.unwrap(),
    );
    line(
        out,
        "sync key k1",
        b.get_sync_key(b"k1")
            .await
            .unwrap()
            .map(|k| (k.key_data, k.fingerprint, k.timestamp)),
    );
    line(
        out,
        "latest sync key",
        b.get_latest_sync_key_id().await.unwrap(),
    );
    line(
        out,
        "version",
        hash_state(&b.get_version("regular").await.unwrap()),
    );
    line(
        out,
        "mac 3",
        b.get_mutation_mac("regular", &[3; 32]).await.unwrap(),
    );
    b.clear_mutation_macs("regular").await.unwrap();
    line(
        out,
        "mac 1 cleared",
        b.get_mutation_mac("regular", &[1; 32]).await.unwrap(),
    );
    line(
        out,
        "critical mac 1 kept",
        b.get_mutation_mac("critical", &[1; 32]).await.unwrap(),
    );
    line(
        out,
        "skd g2",
        sorted(b.get_sender_key_devices("g2@g.us").await.unwrap()),
    );
    b.clear_sender_key_devices("g2@g.us").await.unwrap();
    line(
        out,
        "skd g2 cleared",
        b.get_sender_key_devices("g2@g.us").await.unwrap(),
    );
    line(
        out,
        "skd g1 kept",
        sorted(b.get_sender_key_devices("g1@g.us").await.unwrap()),
    );
    b.clear_all_sender_key_devices().await.unwrap();
    line(
        out,
        "skd g1 cleared",
        b.get_sender_key_devices("g1@g.us").await.unwrap(),
    );
    line(
        out,
        "lid 900",
        b.get_lid_mapping("900").await.unwrap().map(|e| fmt_lid(&e)),
    );
    line(
        out,
        "pn 5533",
        b.get_pn_mapping("5533").await.unwrap().map(|e| fmt_lid(&e)),
    );
    line(
        out,
        "pn 5511",
        b.get_pn_mapping("5511").await.unwrap().map(|e| fmt_lid(&e)),
    );
    let all: Vec<String> = b
        .get_all_lid_mappings()
        .await
        .unwrap()
        .iter()
        .map(fmt_lid)
        .collect();
    line(out, "all lids", sorted(all));
    line(
        out,
        "base key m1",
        b.has_same_base_key("111:1", "m1", b"base").await.unwrap(),
    );
    line(
        out,
        "base key m1 differs",
        b.has_same_base_key("111:1", "m1", b"nope").await.unwrap(),
    );
    line(
        out,
        "base key m2 gone",
        b.has_same_base_key("111:1", "m2", b"other").await.unwrap(),
    );
    let devices = b
        .get_devices("111")
        .await
        .unwrap()
        .map(|r| serde_json::to_string(&r).unwrap());
    line(out, "devices 111", devices);
    line(
        out,
        "devices 222 deleted",
        b.get_devices("222").await.unwrap().is_none(),
    );
    line(
        out,
        "group metadata",
        (
            b.get_group_metadata("g1@g.us").await.unwrap(),
            b.get_group_metadata("g2@g.us").await.unwrap(),
        ),
    );
    for jid in ["a@lid", "b@lid", "c@lid"] {
        line(
            out,
            &format!("tc {jid}"),
            fmt_tc(&b.get_tc_token(jid).await.unwrap()),
        );
    }
    line(
        out,
        "tc jids",
        sorted(b.get_all_tc_token_jids().await.unwrap()),
    );
    line(
        out,
        "tc pruned",
        b.delete_expired_tc_tokens(55, 45).await.unwrap(),
    );
    line(
        out,
        "tc jids after prune",
        sorted(b.get_all_tc_token_jids().await.unwrap()),
    );
    b.delete_tc_token("a@lid").await.unwrap();
    line(
        out,
        "tc a deleted",
        fmt_tc(&b.get_tc_token("a@lid").await.unwrap()),
    );
    line(
        out,
        "sent pruned with an old cutoff",
        b.delete_expired_sent_messages(0).await.unwrap(),
    );
    line(
        out,
        "sent pruned with a future cutoff",
        b.delete_expired_sent_messages(i64::MAX).await.unwrap(),
    );
    line(
        out,
        "take sent m1 after prune",
        b.take_sent_message("c@s.whatsapp.net", "m1").await.unwrap(),
    );
    line(
        out,
        "pending 1",
        b.get_pending_inbound("c", "s", "1").await.unwrap(),
    );
    line(
        out,
        "pending 2",
        b.get_pending_inbound("c", "s", "2").await.unwrap(),
    );
    b.store_pending_inbound("c", "s", "3", b"three")
        .await
        .unwrap();
    b.delete_pending_inbound("c", "s", "1").await.unwrap();
    line(
        out,
        "pending pruned",
        b.delete_expired_pending_inbound(i64::MAX).await.unwrap(),
    );
    line(
        out,
        "pending 3 pruned",
        b.get_pending_inbound("c", "s", "3").await.unwrap(),
    );
    line(
        out,
        "secret m2",
        b.get_msg_secret("c1", "me", "m2").await.unwrap(),
    );
    line(
        out,
        "secrets pruned at 80",
        b.delete_expired_msg_secrets(80).await.unwrap(),
    );
    for id in ["m1", "m2", "m3"] {
        line(
            out,
            &format!("secret {id} after prune"),
            b.get_msg_secret_with_ts("c1", "me", id).await.unwrap(),
        );
    }
}
