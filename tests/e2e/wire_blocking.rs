//! The blocklist on the real network, through the wire server: a block by
//! phone number goes out as WhatsApp takes it (the account's LID, with its
//! number beside it, learned from the server first), the server keeps the
//! blocked customer's messages away, and an unblock lets them in again.

use serde_json::json;
use switchboard_tests::wire::{GATEWAY_PHONE, Wired};

const CUSTOMER: &str = "15550000951";

/// Blocks or unblocks the customer, by phone number.
async fn change(w: &Wired, action: &str) {
    w.server
        .post(
            &format!("/api/v1/sessions/wa/blocking/{action}"),
            json!({ "jid": format!("+{CUSTOMER}") }),
        )
        .await
        .expect(200);
}

/// The session's blocklist.
async fn blocklist(w: &Wired) -> serde_json::Value {
    w.server
        .get("/api/v1/sessions/wa/blocking/list")
        .await
        .expect(200)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_block_by_phone_goes_by_lid_keeps_the_customers_messages_away_and_an_unblock_lets_them_in()
 {
    let w = Wired::start().await;
    w.linked("wa").await;
    let customer = w.customer(CUSTOMER, "Kim").await;
    let none = blocklist(&w).await;
    assert_eq!(none["count"], 0, "{none}");

    change(&w, "block").await;
    let list = blocklist(&w).await;
    assert_eq!(list["count"], 1, "{list}");
    let blocked = list["blocked"][0].as_str().unwrap();
    assert!(
        blocked.ends_with("@lid"),
        "WhatsApp keys a block by LID: {list}"
    );
    let check = w
        .server
        .get(&format!("/api/v1/sessions/wa/blocking/check/{CUSTOMER}"))
        .await
        .expect(200);
    assert_eq!(
        check["is_blocked"], true,
        "the phone finds its LID: {check}"
    );

    let sent = customer
        .send_text(GATEWAY_PHONE, "while blocked")
        .await
        .unwrap();
    // The server has routed it (to nobody) before the unblock goes out.
    switchboard_tests::eventually("the server to take the message", || async {
        let taken = w.wire.count(|s| {
            matches!(s, switchboard_wire::Seen::Sent { phone, id, .. }
                if phone == CUSTOMER && *id == sent)
        });
        (taken == 1).then_some(())
    })
    .await;
    change(&w, "unblock").await;
    let list = blocklist(&w).await;
    assert_eq!(list["count"], 0, "{list}");
    customer.send_text(GATEWAY_PHONE, "after").await.unwrap();
    w.inbound("wa", |m| m["body"]["text"] == "after").await;
    let texts: Vec<String> = w
        .server
        .inbound_messages("wa")
        .await
        .iter()
        .filter_map(|m| m["body"]["text"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(texts, ["after"], "what came while blocked never arrived");
}
