//! Inbound media shapes mapped field by field into `NetworkMedia`, the
//! download handle and the crate's `DownloadParams` it turns back into,
//! and the outbound message built from a stored upload.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::json;
use whatsapp_rust::download::MediaType;
use whatsapp_rust::waproto::buffa::MessageField;
use whatsapp_rust::waproto::whatsapp as wa;

use super::media::download_params;
use super::message_content::fill;
use crate::InboundMessage;
use crate::NetworkError;
use crate::domain::media::{MediaKind, NetworkMedia};

const KEY: [u8; 32] = [7; 32];
const SHA: [u8; 32] = [0xab; 32];
const ENC: [u8; 32] = [0xcd; 32];

fn mapped(message: wa::Message) -> (String, NetworkMedia) {
    let mut m = InboundMessage::default();
    fill(&mut m, &message);
    (m.message_type, m.media.expect("the media"))
}

fn expected_handle(kind: &str, path: &str, len: u64) -> serde_json::Value {
    json!({
        "direct_path": path,
        "media_key": STANDARD.encode(KEY),
        "file_sha256": STANDARD.encode(SHA),
        "file_enc_sha256": STANDARD.encode(ENC),
        "file_length": len,
        "media_type": kind,
    })
}

#[test]
fn an_image_maps_every_media_field_and_a_handle_without_the_message() {
    let (kind, media) = mapped(wa::Message {
        image_message: MessageField::some(wa::message::ImageMessage {
            url: Some("https://mmg.whatsapp.net/enc".into()),
            direct_path: Some("/v/t62/img".into()),
            mimetype: Some("image/jpeg".into()),
            file_sha256: Some(SHA.to_vec()),
            file_enc_sha256: Some(ENC.to_vec()),
            media_key: Some(KEY.to_vec()),
            file_length: Some(4_096),
            width: Some(1280),
            height: Some(720),
            view_once: Some(true),
            ..Default::default()
        }),
        ..Default::default()
    });
    assert_eq!(kind, "image");
    assert_eq!(media.mimetype.as_deref(), Some("image/jpeg"));
    assert_eq!(media.file_length, Some(4_096));
    assert_eq!(media.sha256.as_deref(), Some("ab".repeat(32).as_str()));
    assert_eq!(
        (media.width, media.height, media.seconds),
        (Some(1280), Some(720), None)
    );
    assert_eq!((media.ptt, media.filename.as_deref()), (None, None));
    assert!(media.view_once);
    assert_eq!(media.handle, expected_handle("image", "/v/t62/img", 4_096));
}

#[test]
fn a_video_carries_its_size_in_pixels_and_its_duration() {
    let (kind, media) = mapped(wa::Message {
        video_message: MessageField::some(wa::message::VideoMessage {
            direct_path: Some("/v/vid".into()),
            mimetype: Some("video/mp4".into()),
            file_sha256: Some(SHA.to_vec()),
            file_enc_sha256: Some(ENC.to_vec()),
            media_key: Some(KEY.to_vec()),
            file_length: Some(9_000_000),
            width: Some(640),
            height: Some(360),
            seconds: Some(42),
            ..Default::default()
        }),
        ..Default::default()
    });
    assert_eq!(kind, "video");
    assert_eq!(
        (media.width, media.height, media.seconds),
        (Some(640), Some(360), Some(42))
    );
    assert!(!media.view_once);
    assert_eq!(media.handle, expected_handle("video", "/v/vid", 9_000_000));
}

#[test]
fn a_voice_note_is_audio_with_ptt_and_seconds() {
    let (kind, media) = mapped(wa::Message {
        audio_message: MessageField::some(wa::message::AudioMessage {
            direct_path: Some("/v/ptt".into()),
            mimetype: Some("audio/ogg; codecs=opus".into()),
            file_sha256: Some(SHA.to_vec()),
            file_enc_sha256: Some(ENC.to_vec()),
            media_key: Some(KEY.to_vec()),
            file_length: Some(12_000),
            seconds: Some(7),
            ptt: Some(true),
            ..Default::default()
        }),
        ..Default::default()
    });
    assert_eq!(kind, "audio");
    assert_eq!(media.mimetype.as_deref(), Some("audio/ogg; codecs=opus"));
    assert_eq!((media.ptt, media.seconds), (Some(true), Some(7)));
    assert_eq!((media.width, media.height), (None, None));
    assert_eq!(media.handle, expected_handle("audio", "/v/ptt", 12_000));
}

#[test]
fn a_document_keeps_its_file_name() {
    let (kind, media) = mapped(wa::Message {
        document_message: MessageField::some(wa::message::DocumentMessage {
            direct_path: Some("/v/doc".into()),
            mimetype: Some("application/pdf".into()),
            file_name: Some("invoice.pdf".into()),
            file_sha256: Some(SHA.to_vec()),
            file_enc_sha256: Some(ENC.to_vec()),
            media_key: Some(KEY.to_vec()),
            file_length: Some(55_555),
            caption: Some("March".into()),
            ..Default::default()
        }),
        ..Default::default()
    });
    assert_eq!(kind, "document");
    assert_eq!(media.filename.as_deref(), Some("invoice.pdf"));
    assert_eq!(media.file_length, Some(55_555));
    assert_eq!(media.handle, expected_handle("document", "/v/doc", 55_555));
}

#[test]
fn a_sticker_has_its_size_in_pixels() {
    let (kind, media) = mapped(wa::Message {
        sticker_message: MessageField::some(wa::message::StickerMessage {
            direct_path: Some("/v/stk".into()),
            mimetype: Some("image/webp".into()),
            file_sha256: Some(SHA.to_vec()),
            file_enc_sha256: Some(ENC.to_vec()),
            media_key: Some(KEY.to_vec()),
            file_length: Some(20_000),
            width: Some(512),
            height: Some(512),
            ..Default::default()
        }),
        ..Default::default()
    });
    assert_eq!(kind, "sticker");
    assert_eq!((media.width, media.height), (Some(512), Some(512)));
    assert_eq!(media.handle, expected_handle("sticker", "/v/stk", 20_000));
}

#[test]
fn a_stored_handle_turns_back_into_the_crates_download_params() {
    let params = download_params(
        MediaKind::Audio,
        &expected_handle("audio", "/v/ptt", 12_000),
    )
    .unwrap();
    assert_eq!(params.direct_path, "/v/ptt");
    assert_eq!(params.media_key.as_deref(), Some(KEY.as_slice()));
    assert_eq!(params.file_sha256, SHA.to_vec());
    assert_eq!(params.file_enc_sha256.as_deref(), Some(ENC.as_slice()));
    assert_eq!(params.file_length, 12_000);
    assert!(matches!(params.media_type, MediaType::Audio));
    let sticker =
        download_params(MediaKind::Sticker, &expected_handle("sticker", "/v/s", 1)).unwrap();
    assert!(matches!(sticker.media_type, MediaType::Sticker));
}

#[test]
fn the_handles_own_media_type_wins_over_the_kind_asked_for() {
    // The keys are derived for the type the sender encrypted with; a record
    // whose kind was lost must still decrypt.
    let params =
        download_params(MediaKind::Document, &expected_handle("video", "/v/v", 1)).unwrap();
    assert!(matches!(params.media_type, MediaType::Video));
    let mut untyped = expected_handle("video", "/v/v", 1);
    untyped.as_object_mut().unwrap().remove("media_type");
    let params = download_params(MediaKind::Image, &untyped).unwrap();
    assert!(matches!(params.media_type, MediaType::Image));
}

#[test]
fn media_without_a_path_or_key_is_still_described_but_cannot_be_downloaded() {
    let (kind, media) = mapped(wa::Message {
        image_message: MessageField::some(wa::message::ImageMessage {
            mimetype: Some("image/png".into()),
            file_length: Some(10),
            ..Default::default()
        }),
        ..Default::default()
    });
    assert_eq!(kind, "image");
    assert_eq!(media.mimetype.as_deref(), Some("image/png"));
    assert_eq!(media.file_length, Some(10));
    assert_eq!(media.sha256, None);
    assert_eq!(
        media.handle,
        json!({"file_length": 10, "media_type": "image"})
    );
    match download_params(MediaKind::Image, &media.handle) {
        Err(NetworkError::Rejected(m)) => assert!(m.contains("direct_path"), "{m}"),
        Err(other) => panic!("{other:?}"),
        Ok(_) => panic!("a handle without a path was taken"),
    }
}

#[test]
fn a_video_note_is_a_video() {
    let (kind, media) = mapped(wa::Message {
        ptv_message: MessageField::some(wa::message::VideoMessage {
            direct_path: Some("/v/ptv".into()),
            mimetype: Some("video/mp4".into()),
            file_sha256: Some(SHA.to_vec()),
            file_enc_sha256: Some(ENC.to_vec()),
            media_key: Some(KEY.to_vec()),
            file_length: Some(300_000),
            seconds: Some(9),
            ..Default::default()
        }),
        ..Default::default()
    });
    assert_eq!(kind, "video");
    assert_eq!(media.seconds, Some(9));
    assert_eq!(media.handle, expected_handle("video", "/v/ptv", 300_000));
}

#[test]
fn a_handle_missing_what_a_download_needs_is_rejected_naming_it() {
    let mut no_key = expected_handle("image", "/v/x", 1);
    no_key.as_object_mut().unwrap().remove("media_key");
    let mut no_enc = expected_handle("image", "/v/x", 1);
    no_enc.as_object_mut().unwrap().remove("file_enc_sha256");
    let mut bad = expected_handle("image", "/v/x", 1);
    bad["file_sha256"] = json!("not base64!");
    let mut gif = expected_handle("image", "/v/x", 1);
    gif["media_type"] = json!("gif");
    for (handle, says) in [
        (json!("a string"), "not an object"),
        (json!({}), "direct_path"),
        (gif, "media_type"),
        (no_key, "media key"),
        (no_enc, "file_enc_sha256"),
        (bad, "file_sha256"),
    ] {
        match download_params(MediaKind::Image, &handle) {
            Err(NetworkError::Rejected(m)) => assert!(m.contains(says), "{m}"),
            Err(other) => panic!("{handle}: {other:?}"),
            Ok(_) => panic!("{handle} was taken"),
        }
    }
}

#[test]
fn cdn_answers_that_mean_gone_are_rejected_and_the_rest_may_be_retried() {
    use crate::whatsapp::ops::download_error;
    for gone in [401, 403, 404, 410] {
        let e = download_error(Some(gone), "Download media not found/expired");
        assert!(matches!(e, NetworkError::Rejected(_)), "{gone}: {e:?}");
    }
    for (status, what) in [
        (None, "connection reset"),
        (None, "invalid MAC"),
        (Some(503), "status 503"),
    ] {
        assert!(
            matches!(download_error(status, what), NetworkError::Failed(_)),
            "{what}"
        );
    }
}
