//! Messages between the gateway's real `whatsapp` backend and a customer's
//! real client, through the wire server: text, media (encrypted, uploaded
//! to and downloaded from the wire's media host), reactions, edits,
//! revokes, polls and votes, in both directions.

use serde_json::{Value, json};
use switchboard_tests::wire::{GATEWAY_PHONE, Wired, jid};
use switchboard_wire::customer::{Customer, text_of};
use whatsapp_rust::download::MediaType;
use whatsapp_rust::types::events::Event;
use whatsapp_rust::upload::UploadOptions;
use whatsapp_rust::waproto::whatsapp as wa;

/// The customer's number.
const CUSTOMER: &str = "15550000201";

/// A gateway session `wa` and a customer, both linked.
async fn pair() -> (Wired, Customer) {
    let w = Wired::start().await;
    w.linked("wa").await;
    let customer = w.customer(CUSTOMER, "Dana").await;
    (w, customer)
}

/// The gateway sends a text to the customer; its id once the customer
/// has it.
async fn gateway_text(w: &Wired, customer: &Customer, text: &str) -> String {
    let sent = w
        .server
        .post(
            "/api/v1/sessions/wa/messages/text",
            json!({ "to": format!("+{CUSTOMER}"), "text": text }),
        )
        .await
        .expect(200);
    let id = sent["message_id"].as_str().unwrap().to_owned();
    customer
        .wait_text(GATEWAY_PHONE, |t| t == text)
        .await
        .unwrap();
    id
}

/// The customer sends a text; the gateway's stored copy.
async fn customer_text(w: &Wired, customer: &Customer, text: &str) -> Value {
    customer.send_text(GATEWAY_PHONE, text).await.unwrap();
    w.inbound("wa", |m| m["body"]["text"] == text).await
}

/// Waits for a message from the gateway that `f` picks out of the
/// customer's events.
async fn at_customer<T>(customer: &Customer, f: impl Fn(&wa::Message) -> Option<T>) -> T {
    customer
        .events()
        .wait(std::time::Duration::from_secs(30), |e| {
            let Event::Messages(batch) = e else {
                return None;
            };
            batch
                .messages
                .iter()
                .filter(|m| m.info.source.sender.user == GATEWAY_PHONE)
                .find_map(|m| f(&m.message))
        })
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_from_the_gateway_is_uploaded_and_the_customer_decrypts_the_same_bytes_and_sees_its_size_and_preview()
 {
    let (w, customer) = pair().await;
    let picture = image::RgbImage::from_fn(300, 150, |x, y| {
        image::Rgb([(x % 256) as u8, (y % 256) as u8, 120])
    });
    let mut bytes = Vec::new();
    picture
        .write_to(
            &mut std::io::Cursor::new(&mut bytes),
            image::ImageFormat::Png,
        )
        .unwrap();
    let up = w
        .server
        .http()
        .post(format!(
            "{}/api/v1/sessions/wa/media?filename=p.png",
            w.server.base()
        ))
        .bearer_auth(switchboard_tests::TOKEN)
        .header("content-type", "image/png")
        .body(bytes.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(up.status(), 201);
    let up: Value = up.json().await.unwrap();
    w.server
        .post(
            "/api/v1/sessions/wa/messages/image",
            json!({ "to": format!("+{CUSTOMER}"), "media_id": up["id"], "caption": "a picture" }),
        )
        .await
        .expect(200);
    let image = at_customer(&customer, |m| m.image_message.as_option().cloned()).await;
    assert_eq!(image.caption.as_deref(), Some("a picture"));
    assert_eq!((image.width, image.height), (Some(300), Some(150)));
    let preview = image::load_from_memory(image.jpeg_thumbnail.as_deref().unwrap()).unwrap();
    assert_eq!(
        (preview.width(), preview.height()),
        (72, 36),
        "a small preview of its shape"
    );
    let got = customer.client.download(&image).await.unwrap();
    assert_eq!(got, bytes, "the customer decrypts what the gateway sent");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_from_the_customer_is_downloaded_decrypted_and_served_by_the_gateway() {
    let (w, customer) = pair().await;
    let bytes: Vec<u8> = (0..30_000u32).map(|i| (i * 13 % 241) as u8).collect();
    let up = customer
        .client
        .upload(bytes.clone(), MediaType::Image, UploadOptions::default())
        .await
        .unwrap();
    let message = wa::Message {
        image_message: wa::message::ImageMessage {
            url: Some(up.url),
            direct_path: Some(up.direct_path),
            media_key: Some(up.media_key.to_vec()),
            file_sha256: Some(up.file_sha256.to_vec()),
            file_enc_sha256: Some(up.file_enc_sha256.to_vec()),
            file_length: Some(up.file_length),
            mimetype: Some("image/png".into()),
            caption: Some("from the customer".into()),
            ..Default::default()
        }
        .into(),
        ..Default::default()
    };
    customer
        .client
        .send_message(jid(GATEWAY_PHONE), message)
        .await
        .unwrap();
    let got = w
        .inbound("wa", |m| m["body"]["caption"] == "from the customer")
        .await;
    assert_eq!(got["body"]["message_type"], "image", "{got}");
    let url = got["body"]["media"]["url"]
        .as_str()
        .expect("a media url")
        .to_owned();
    let served = switchboard_tests::media::media_bytes(&w.server, &url).await;
    assert_eq!(served, bytes, "the gateway serves what the customer sent");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reactions_reach_the_other_side_both_ways() {
    let (w, customer) = pair().await;
    let mine = gateway_text(&w, &customer, "react to me").await;
    w.server
        .post(
            "/api/v1/sessions/wa/messages/reaction",
            json!({ "to": format!("+{CUSTOMER}"), "message_id": mine, "emoji": "👍" }),
        )
        .await
        .expect(200);
    let reaction = at_customer(&customer, |m| m.reaction_message.as_option().cloned()).await;
    assert_eq!(reaction.text.as_deref(), Some("👍"));
    assert_eq!(
        reaction.key.as_option().and_then(|k| k.id.clone()),
        Some(mine)
    );

    let theirs = customer_text(&w, &customer, "and to me").await;
    let key = wa::MessageKey {
        remote_jid: Some(format!("{GATEWAY_PHONE}@s.whatsapp.net")),
        from_me: Some(true),
        id: theirs["message_id"].as_str().map(str::to_owned),
        ..Default::default()
    };
    customer
        .client
        .send_reaction(jid(GATEWAY_PHONE), key, "❤️")
        .await
        .unwrap();
    let got = w
        .inbound("wa", |m| m["body"]["message_type"] == "reaction")
        .await;
    assert_eq!(got["body"]["text"], "❤️", "{got}");
    assert_eq!(
        got["body"]["quoted_message_id"], theirs["message_id"],
        "{got}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_reach_the_other_side_both_ways() {
    let (w, customer) = pair().await;
    let mine = gateway_text(&w, &customer, "teh typo").await;
    w.server
        .post(
            "/api/v1/sessions/wa/messages/edit",
            json!({ "to": format!("+{CUSTOMER}"), "message_id": mine, "text": "the typo" }),
        )
        .await
        .expect(200);
    at_customer(&customer, |m| {
        let edited = m.protocol_message.as_option()?.edited_message.as_option()?;
        (text_of(edited).as_deref() == Some("the typo")).then_some(())
    })
    .await;

    let theirs = customer_text(&w, &customer, "see you at 4").await;
    let id = theirs["message_id"].as_str().unwrap().to_owned();
    use whatsapp_rust::wacore::proto_helpers::MessageBuilderExt;
    customer
        .client
        .edit_message(
            jid(GATEWAY_PHONE),
            id.clone(),
            wa::Message::text("see you at 5"),
        )
        .await
        .unwrap();
    let got = w
        .inbound("wa", |m| m["body"]["message_type"] == "edit")
        .await;
    assert_eq!(got["body"]["text"], "see you at 5", "{got}");
    assert_eq!(got["body"]["quoted_message_id"], id.as_str(), "{got}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revokes_reach_the_other_side_both_ways() {
    let (w, customer) = pair().await;
    let mine = gateway_text(&w, &customer, "oops").await;
    w.server
        .post(
            "/api/v1/sessions/wa/messages/revoke",
            json!({ "to": format!("+{CUSTOMER}"), "message_id": mine }),
        )
        .await
        .expect(200);
    at_customer(&customer, |m| {
        let p = m.protocol_message.as_option()?;
        (p.key.as_option()?.id.as_deref() == Some(mine.as_str())).then_some(())
    })
    .await;

    let theirs = customer_text(&w, &customer, "mistake").await;
    let id = theirs["message_id"].as_str().unwrap().to_owned();
    customer
        .client
        .revoke_message(
            jid(GATEWAY_PHONE),
            id.clone(),
            whatsapp_rust::send::RevokeType::Sender,
        )
        .await
        .unwrap();
    let got = w
        .inbound("wa", |m| m["body"]["message_type"] == "revoke")
        .await;
    assert_eq!(got["body"]["quoted_message_id"], id.as_str(), "{got}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_poll_from_the_gateway_gets_the_customers_vote_and_a_poll_from_the_customer_arrives() {
    let (w, customer) = pair().await;
    let mut stream = w.server.open_stream("session=wa&events=poll_vote").await;
    let sent = w
        .server
        .post(
            "/api/v1/sessions/wa/messages/poll",
            json!({ "to": format!("+{CUSTOMER}"), "question": "Lunch?", "options": ["Pizza", "Salad"] }),
        )
        .await
        .expect(200);
    let poll_id = sent["message_id"].as_str().unwrap().to_owned();
    let secret = customer
        .events()
        .wait(std::time::Duration::from_secs(30), |e| {
            let Event::Messages(batch) = e else {
                return None;
            };
            batch.messages.iter().find_map(|m| {
                m.message
                    .poll_creation_message_v3
                    .as_option()
                    .or(m.message.poll_creation_message.as_option())?;
                m.message
                    .message_context_info
                    .as_option()?
                    .message_secret
                    .clone()
            })
        })
        .await
        .unwrap();
    customer
        .client
        .polls()
        .vote(
            jid(GATEWAY_PHONE),
            &poll_id,
            &jid(GATEWAY_PHONE),
            &secret,
            &["Salad".to_owned()],
        )
        .await
        .unwrap();
    let vote = stream.find(|e| e["event"] == "poll_vote").await;
    assert_eq!(vote["data"]["poll_message_id"], poll_id.as_str(), "{vote}");
    assert_eq!(vote["data"]["selected_options"], json!(["Salad"]), "{vote}");

    customer
        .client
        .polls()
        .create(
            jid(GATEWAY_PHONE),
            "Dinner?",
            &["Soup".into(), "Stew".into()],
            1,
        )
        .await
        .unwrap();
    let got = w
        .inbound("wa", |m| m["body"]["message_type"] == "poll")
        .await;
    assert_eq!(got["body"]["text"], "Dinner?", "{got}");
}

/// The native-flow buttons of an interactive message: name and parameters.
fn native_flow(m: &wa::Message) -> Option<(String, Vec<(String, Value)>)> {
    use wa::message::interactive_message::InteractiveMessage as Payload;
    let im = m.interactive_message.as_option()?;
    let Some(Payload::NativeFlowMessage(nf)) = &im.interactive_message else {
        return None;
    };
    let buttons = nf
        .buttons
        .iter()
        .map(|b| {
            let params = b.button_params_json.as_deref().unwrap_or("{}");
            (
                b.name.clone().unwrap_or_default(),
                serde_json::from_str(params).unwrap(),
            )
        })
        .collect();
    Some((im.body.as_option()?.text.clone()?, buttons))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn buttons_lists_and_url_buttons_reach_the_customer_as_native_flows_and_a_press_comes_back() {
    let (w, customer) = pair().await;
    let to = format!("+{CUSTOMER}");
    let sent = w
        .server
        .post(
            "/api/v1/sessions/wa/messages/buttons",
            json!({ "to": to, "text": "Pick one", "footer": "Thanks",
                    "buttons": [{ "id": "yes", "text": "Yes" }, { "id": "no", "text": "No" }] }),
        )
        .await
        .expect(200);
    let buttons_id = sent["message_id"].as_str().unwrap().to_owned();
    let (text, buttons) = at_customer(&customer, |m| {
        native_flow(m).filter(|(t, _)| t == "Pick one")
    })
    .await;
    assert_eq!(text, "Pick one");
    assert_eq!(
        buttons,
        vec![
            (
                "quick_reply".into(),
                json!({ "display_text": "Yes", "id": "yes" })
            ),
            (
                "quick_reply".into(),
                json!({ "display_text": "No", "id": "no" })
            ),
        ]
    );
    w.server
        .post(
            "/api/v1/sessions/wa/messages/list",
            json!({ "to": to, "text": "Menu", "button_text": "View",
                    "sections": [{ "title": "Food", "rows": [{ "id": "f1", "title": "Pizza" }] }] }),
        )
        .await
        .expect(200);
    let (_, list) = at_customer(&customer, |m| native_flow(m).filter(|(t, _)| t == "Menu")).await;
    assert_eq!(list[0].0, "single_select");
    assert_eq!(list[0].1["sections"][0]["rows"][0]["id"], "f1");
    w.server
        .post(
            "/api/v1/sessions/wa/messages/cta-url",
            json!({ "to": to, "text": "Track it", "button_text": "Open", "url": "https://example.com/t/1" }),
        )
        .await
        .expect(200);
    let (_, open) = at_customer(&customer, |m| {
        native_flow(m).filter(|(t, _)| t == "Track it")
    })
    .await;
    assert_eq!(open[0].0, "cta_url");
    assert_eq!(open[0].1["url"], "https://example.com/t/1");
    // Each went out announced as WhatsApp's clients announce one (a `<biz>`
    // naming the flow, with the `<bot>` a message to a user needs).
    let announced = w.wire.count(|s| {
        matches!(s, switchboard_wire::Seen::Sent { phone, biz: Some(flow), .. }
            if phone == GATEWAY_PHONE && flow == "mixed")
    });
    assert_eq!(announced, 3, "{:?}", w.wire.seen());

    // The customer presses "No": the gateway gets the press, quoting the buttons.
    use wa::message::interactive_response_message::{Body, NativeFlowResponseMessage};
    let press = wa::Message {
        interactive_response_message: whatsapp_rust::waproto::buffa::MessageField::some(
            wa::message::InteractiveResponseMessage {
                body: whatsapp_rust::waproto::buffa::MessageField::some(Body {
                    text: Some("No".into()),
                    ..Default::default()
                }),
                interactive_response_message: Some(
                    wa::__buffa::oneof::message::interactive_response_message::InteractiveResponseMessage::NativeFlowResponseMessage(
                        Box::new(NativeFlowResponseMessage {
                            name: Some("quick_reply".into()),
                            params_json: Some(r#"{"id":"no"}"#.into()),
                            ..Default::default()
                        }),
                    ),
                ),
                context_info: whatsapp_rust::waproto::buffa::MessageField::some(wa::ContextInfo {
                    stanza_id: Some(buttons_id.clone()),
                    participant: Some(format!("{GATEWAY_PHONE}@s.whatsapp.net")),
                    ..Default::default()
                }),
            },
        ),
        ..Default::default()
    };
    customer.send_message(GATEWAY_PHONE, press).await.unwrap();
    let got = w
        .inbound("wa", |m| {
            m["body"]["message_type"] == "interactive_response"
        })
        .await;
    assert_eq!(got["body"]["selected_id"], "no", "{got}");
    assert_eq!(
        got["body"]["quoted_message_id"],
        buttons_id.as_str(),
        "{got}"
    );
}

/// The text of a message from the gateway and the disappearing-messages
/// timer it carries.
fn text_and_timer(m: &wa::Message) -> Option<(String, Option<u32>)> {
    use whatsapp_rust::wacore::proto_helpers::MessageExt;
    let base = m.get_base_message();
    Some((text_of(base)?, base.get_ephemeral_expiration()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_into_a_disappearing_chat_carries_the_chats_timer_until_it_is_turned_off() {
    use whatsapp_rust::waproto::buffa::MessageField;
    let (w, customer) = pair().await;
    let mut stream = w
        .server
        .open_stream("session=wa&events=ephemeral_setting")
        .await;
    // The customer's chat disappears after a day: its messages say so.
    let vanishing = wa::Message {
        extended_text_message: MessageField::some(wa::message::ExtendedTextMessage {
            text: Some("vanishing".into()),
            context_info: MessageField::some(wa::ContextInfo {
                expiration: Some(86_400),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    customer
        .send_message(GATEWAY_PHONE, vanishing)
        .await
        .unwrap();
    w.inbound("wa", |m| m["body"]["text"] == "vanishing").await;
    gateway_text(&w, &customer, "goes too").await;
    let timer = at_customer(&customer, |m| {
        text_and_timer(m).and_then(|(t, timer)| (t == "goes too").then_some(timer))
    })
    .await;
    assert_eq!(timer, Some(86_400), "the reply disappears with the chat");

    // The customer turns the timer off.
    let off = wa::Message {
        protocol_message: MessageField::some(wa::message::ProtocolMessage {
            r#type: Some(wa::message::protocol_message::Type::EPHEMERAL_SETTING),
            ephemeral_expiration: Some(0),
            ..Default::default()
        }),
        ..Default::default()
    };
    customer.send_message(GATEWAY_PHONE, off).await.unwrap();
    let setting = stream.find(|e| e["event"] == "ephemeral_setting").await;
    assert_eq!(setting["data"]["expiration_seconds"], 0, "{setting}");
    gateway_text(&w, &customer, "stays").await;
    let timer = at_customer(&customer, |m| {
        text_and_timer(m).and_then(|(t, timer)| (t == "stays").then_some(timer))
    })
    .await;
    assert_eq!(timer, None, "the chat no longer disappears");
}
