//! Receipts, presence and typing between the gateway's real `whatsapp`
//! backend and a customer's real client, through the wire server.

use std::time::Duration;

use serde_json::json;
use switchboard_tests::wire::{GATEWAY_PHONE, Wired, jid};
use switchboard_wire::customer::Customer;
use whatsapp_rust::types::events::Event;
use whatsapp_rust::types::presence::{ChatPresence, ReceiptType};

const CUSTOMER: &str = "15550000301";

async fn pair() -> (Wired, Customer) {
    let w = Wired::start().await;
    w.linked("wa").await;
    let customer = w.customer(CUSTOMER, "Erin").await;
    (w, customer)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_customers_delivery_and_read_receipts_reach_the_gateway_as_receipt_events() {
    let (w, customer) = pair().await;
    let mut stream = w.server.open_stream("session=wa&events=receipt").await;
    let sent = w
        .server
        .post(
            "/api/v1/sessions/wa/messages/text",
            json!({ "to": format!("+{CUSTOMER}"), "text": "did you get this?" }),
        )
        .await
        .expect(200);
    let id = sent["message_id"].as_str().unwrap().to_owned();
    let delivered = stream
        .find(|e| e["data"]["type"] == "delivered" && e["data"]["message_ids"][0] == id.as_str())
        .await;
    assert_eq!(
        delivered["data"]["chat"],
        format!("{CUSTOMER}@s.whatsapp.net")
    );
    customer
        .wait_text(GATEWAY_PHONE, |t| t == "did you get this?")
        .await
        .unwrap();
    customer
        .client
        .mark_as_read(&jid(GATEWAY_PHONE), None, &[id.as_str()])
        .await
        .unwrap();
    let read = stream
        .find(|e| e["data"]["type"] == "read" && e["data"]["message_ids"][0] == id.as_str())
        .await;
    assert_eq!(
        read["data"]["sender"],
        format!("{CUSTOMER}@s.whatsapp.net"),
        "{read}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gateway_marking_a_message_read_reaches_the_customer_as_a_read_receipt() {
    let (w, customer) = pair().await;
    let id = customer.send_text(GATEWAY_PHONE, "read me").await.unwrap();
    w.inbound("wa", |m| m["message_id"] == id.as_str()).await;
    // The gateway's delivery receipt came first.
    customer
        .events()
        .wait(Duration::from_secs(30), |e| match e {
            Event::Receipt(r) if r.message_ids.contains(&id) => Some(()),
            _ => None,
        })
        .await
        .unwrap();
    w.server
        .post(
            "/api/v1/sessions/wa/messages/read",
            json!({ "chat": format!("{CUSTOMER}@s.whatsapp.net"), "message_ids": [id] }),
        )
        .await
        .expect(200);
    customer
        .events()
        .wait(Duration::from_secs(30), |e| match e {
            Event::Receipt(r) if r.r#type == ReceiptType::Read && r.message_ids.contains(&id) => {
                Some(())
            }
            _ => None,
        })
        .await
        .expect("a read receipt");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn presence_and_typing_travel_both_ways() {
    let (w, customer) = pair().await;
    let mut stream = w
        .server
        .open_stream("session=wa&events=presence,chat_presence")
        .await;
    w.server
        .post(
            "/api/v1/sessions/wa/presence/subscribe",
            json!({ "jid": format!("{CUSTOMER}@s.whatsapp.net") }),
        )
        .await
        .expect(200);
    customer.client.presence().set_available().await.unwrap();
    let online = stream
        .find(|e| e["event"] == "presence" && e["data"]["available"] == true)
        .await;
    assert_eq!(
        online["data"]["jid"],
        format!("{CUSTOMER}@s.whatsapp.net"),
        "{online}"
    );

    customer
        .client
        .chatstate()
        .send_composing(&jid(GATEWAY_PHONE))
        .await
        .unwrap();
    let typing = stream.find(|e| e["event"] == "chat_presence").await;
    assert_eq!(typing["data"]["state"], "composing", "{typing}");
    assert_eq!(
        typing["data"]["chat"],
        format!("{CUSTOMER}@s.whatsapp.net"),
        "{typing}"
    );

    customer
        .client
        .presence()
        .subscribe(jid(GATEWAY_PHONE))
        .await
        .unwrap();
    w.server
        .post(
            "/api/v1/sessions/wa/presence/set",
            json!({ "status": "available" }),
        )
        .await
        .expect(200);
    customer
        .events()
        .wait(Duration::from_secs(30), |e| match e {
            Event::Presence(p) if p.from.user == GATEWAY_PHONE && !p.unavailable => Some(()),
            _ => None,
        })
        .await
        .expect("the gateway's presence");
    w.server
        .post(
            "/api/v1/sessions/wa/chatstate/send",
            json!({ "to": format!("{CUSTOMER}@s.whatsapp.net"), "state": "composing" }),
        )
        .await
        .expect(200);
    customer
        .events()
        .wait(Duration::from_secs(30), |e| match e {
            Event::ChatPresence(c) if c.state == ChatPresence::Composing => Some(()),
            _ => None,
        })
        .await
        .expect("the gateway typing");
}
