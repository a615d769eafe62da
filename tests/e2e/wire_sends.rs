//! Sends the wire server refuses, or answers slowly: the gateway's answer
//! waits for WhatsApp's acknowledgement, so a refusal (463, 479…) is the
//! send's error, never a message read as sent; and a 463 under a reach-out
//! timelock (which the gateway asks the server about) holds the sends to
//! people the account has no chat with until it ends.

use std::time::Duration;

use serde_json::json;
use switchboard_tests::wire::{GATEWAY_PHONE, Wired};

const CUSTOMER: &str = "15550000701";
const NEW_A: &str = "15550000702";
const NEW_B: &str = "15550000703";

async fn text(w: &Wired, body: &str) -> switchboard_tests::Resp {
    text_to(w, CUSTOMER, body).await
}

async fn text_to(w: &Wired, to: &str, body: &str) -> switchboard_tests::Resp {
    w.server
        .post(
            "/api/v1/sessions/wa/messages/text",
            json!({ "to": format!("+{to}"), "text": body }),
        )
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_463_without_a_timelock_fails_for_the_trust_token_and_the_next_send_goes_through() {
    let w = Wired::start().await;
    w.linked("wa").await;
    let customer = w.customer(CUSTOMER, "Kim").await;
    w.wire.refuse_send(GATEWAY_PHONE, 463);
    let msg = text(&w, "refused")
        .await
        .expect_error(422, "network_rejected");
    assert!(
        msg.contains("463") && msg.contains("trust token") && msg.contains("no reach-out timelock"),
        "{msg}"
    );
    text(&w, "accepted").await.expect(200);
    customer
        .wait_text(GATEWAY_PHONE, |t| t == "accepted")
        .await
        .unwrap();
    // The refused one never reached the customer: the accepted one, sent
    // after it, has.
    assert_eq!(
        customer.events().count(|e| matches!(e,
            whatsapp_rust::types::events::Event::Messages(b)
                if b.messages.iter().any(|m| switchboard_wire::customer::text_of(&m.message).as_deref() == Some("refused")))),
        0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_refusal_is_waited_for_and_still_fails_the_send() {
    let w = Wired::start_with(|c| c.whatsapp.send_ack_wait = Duration::from_secs(10)).await;
    w.linked("wa").await;
    let _customer = w.customer(CUSTOMER, "Lee").await;
    w.wire.delay_acks(GATEWAY_PHONE, Duration::from_millis(500));
    w.wire.refuse_send(GATEWAY_PHONE, 479);
    let msg = text(&w, "slowly refused")
        .await
        .expect_error(422, "network_rejected");
    assert!(msg.contains("479"), "{msg}");
    let sent = text(&w, "slowly accepted").await.expect(200);
    assert!(sent["timestamp"].as_i64().unwrap() > 0, "{sent}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_contact_under_a_timelock_fails_with_its_end_then_later_ones_are_held_while_a_chat_goes_on()
 {
    let w = Wired::start().await;
    w.linked("wa").await;
    let friend = w.customer(CUSTOMER, "Kim").await;
    let _a = w.customer(NEW_A, "Ola").await;
    let _b = w.customer(NEW_B, "Ada").await;
    // The friend wrote first: the account has a chat with them.
    friend
        .send_text(GATEWAY_PHONE, "hello first")
        .await
        .unwrap();
    w.inbound("wa", |m| m["body"]["text"] == "hello first")
        .await;
    let until = switchboard_wire::now() + 900;
    w.wire.reach_out_timelock(GATEWAY_PHONE, Some(until), true);

    let refused = text_to(&w, NEW_A, "hi, we have not met").await;
    assert_eq!(refused.status.as_u16(), 429, "{}", refused.body);
    assert_eq!(refused.body["error"]["code"], "reach_out_timelock");
    let retry = refused.body["error"]["retry_after"].as_u64().unwrap();
    assert!((880..=900).contains(&retry), "{}", refused.body);
    let status = w.server.get("/api/v1/sessions/wa").await.expect(200);
    assert_eq!(
        status["reach_out_timelock"]["until"],
        switchboard::domain::time::iso8601(until as i64),
        "the end WhatsApp stated: {status}"
    );

    let held = text_to(&w, NEW_B, "held for later").await.expect(202);
    assert_eq!(held["held"], "reach_out_timelock", "{held}");
    text(&w, "still talking").await.expect(200);
    friend
        .wait_text(GATEWAY_PHONE, |t| t == "still talking")
        .await
        .unwrap();
    // One refusal reached WhatsApp; the held send never went.
    let refusals = w.wire.count(|s| {
        matches!(
            s,
            switchboard_wire::Seen::Sent {
                error: Some(463),
                ..
            }
        )
    });
    assert_eq!(refusals, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trust_token_reads_ask_the_server_for_its_props_once_per_connection() {
    use switchboard_wire::Seen;
    let w = Wired::start().await;
    w.linked("wa").await;
    let _customer = w.customer(CUSTOMER, "Kim").await;
    let asked = || {
        w.wire
            .count(|s| matches!(s, Seen::PropsAsked { phone } if phone == GATEWAY_PHONE))
    };
    let jid = format!("{CUSTOMER}@s.whatsapp.net");
    let issued = w
        .server
        .post(
            "/api/v1/sessions/wa/tctoken/issue",
            json!({ "jids": [jid] }),
        )
        .await
        .expect(200);
    assert_eq!(
        issued["tokens"].as_array().map(Vec::len),
        Some(1),
        "{issued}"
    );
    let before = asked();
    let path = format!("/api/v1/sessions/wa/tctoken/{jid}");
    for _ in 0..3 {
        let token = w.server.get(&path).await.expect(200);
        assert_eq!(token["found"], true, "{token}");
        assert_eq!(token["expired"], false, "{token}");
    }
    assert_eq!(
        asked() - before,
        1,
        "the first read asks; the connection's timing is kept for the others"
    );
}
