//! Delivery signatures, in one of two schemes a webhook chooses:
//! - the gateway's own (v2): `X-Webhook-Signature: sha256=<hex>` where the
//!   HMAC-SHA256 covers `<timestamp>.<raw body>`, with `X-Webhook-Timestamp`
//!   and `X-Webhook-Signature-Version: v2`;
//! - Standard Webhooks: `webhook-id` (the delivery id), `webhook-timestamp`
//!   and `webhook-signature: v1,<base64>` where the HMAC-SHA256, keyed by
//!   the base64 key after `whsec_`, covers `<id>.<timestamp>.<raw body>`.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::domain::webhook::SignatureScheme;

/// The timestamp header.
pub const TIMESTAMP_HEADER: &str = "x-webhook-timestamp";
/// The signature header.
pub const SIGNATURE_HEADER: &str = "x-webhook-signature";
/// The signature-version header.
pub const VERSION_HEADER: &str = "x-webhook-signature-version";
/// The event-name header.
pub const EVENT_HEADER: &str = "x-webhook-event";
/// The delivery-id header: the same on every retry and replay of one event.
pub const DELIVERY_ID_HEADER: &str = "x-webhook-delivery-id";

/// `sha256=<lowercase hex>` of HMAC-SHA256(secret, "<timestamp>.<body>").
pub fn sign_v2(secret: &[u8], timestamp: i64, body: &[u8]) -> String {
    // HMAC accepts keys of any length, so construction cannot fail.
    let mut mac = Hmac::<Sha256>::new_from_slice(secret)
        .unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// The Standard Webhooks id header.
pub const STANDARD_ID_HEADER: &str = "webhook-id";
/// The Standard Webhooks timestamp header.
pub const STANDARD_TIMESTAMP_HEADER: &str = "webhook-timestamp";
/// The Standard Webhooks signature header.
pub const STANDARD_SIGNATURE_HEADER: &str = "webhook-signature";
/// The prefix of a Standard Webhooks secret.
pub const STANDARD_SECRET_PREFIX: &str = "whsec_";

/// The key a Standard Webhooks secret stands for: the base64 after
/// `whsec_` (the prefix is optional, as in the reference libraries).
pub fn standard_key(secret: &str) -> Result<Vec<u8>, String> {
    let b64 = secret
        .strip_prefix(STANDARD_SECRET_PREFIX)
        .unwrap_or(secret);
    match BASE64.decode(b64) {
        Ok(key) if !key.is_empty() => Ok(key),
        _ => Err(format!(
            "must be `{STANDARD_SECRET_PREFIX}` followed by a base64 key for the `standard` signature scheme"
        )),
    }
}

/// The fewest key bytes a Standard Webhooks secret may stand for (the
/// specification: "at least 24 bytes").
pub const STANDARD_KEY_MIN_BYTES: usize = 24;
/// The most key bytes a Standard Webhooks secret may stand for (the
/// specification's maximum, 512 bits).
pub const STANDARD_KEY_MAX_BYTES: usize = 64;

/// A fresh Standard Webhooks secret: `whsec_` and the base64 of 24 random
/// bytes from the thread's CSPRNG (the form the reference libraries and
/// their users expect, e.g. `whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw`).
pub fn new_standard_secret() -> String {
    use rand::RngCore;
    let mut key = [0u8; STANDARD_KEY_MIN_BYTES];
    rand::rng().fill_bytes(&mut key);
    format!("{STANDARD_SECRET_PREFIX}{}", BASE64.encode(key))
}

/// The secret a `standard` webhook is registered with: the one given, when
/// it is a Standard Webhooks secret (`whsec_` and the base64 of a 24 to 64
/// byte key), or a new one ([`new_standard_secret`]) when none is given.
/// The error is a sentence about the `secret` field.
pub fn standard_secret(secret: Option<String>) -> Result<String, String> {
    let Some(secret) = secret else {
        return Ok(new_standard_secret());
    };
    let key = standard_key(&secret)?;
    if !(STANDARD_KEY_MIN_BYTES..=STANDARD_KEY_MAX_BYTES).contains(&key.len()) {
        return Err(format!(
            "must stand for a key of {STANDARD_KEY_MIN_BYTES} to {STANDARD_KEY_MAX_BYTES} bytes \
             for the `standard` signature scheme (this one is {} bytes); leave it out to have \
             one generated",
            key.len()
        ));
    }
    Ok(secret)
}

/// `v1,<base64>` of HMAC-SHA256(key, "<id>.<timestamp>.<body>").
pub fn sign_standard(key: &[u8], id: &str, timestamp: i64, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(key)
        .unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!("v1,{}", BASE64.encode(mac.finalize().into_bytes()))
}

/// The headers that sign one delivery attempt.
pub fn signature_headers(
    scheme: SignatureScheme,
    secret: &str,
    delivery_id: &str,
    timestamp: i64,
    body: &[u8],
) -> Vec<(&'static str, String)> {
    match scheme {
        SignatureScheme::Switchboard => vec![
            (TIMESTAMP_HEADER, timestamp.to_string()),
            (
                SIGNATURE_HEADER,
                sign_v2(secret.as_bytes(), timestamp, body),
            ),
            (VERSION_HEADER, "v2".to_owned()),
        ],
        SignatureScheme::Standard => {
            // Registration refuses a secret that is no key; one stored
            // before the check signs with its bytes as they are.
            let key = standard_key(secret).unwrap_or_else(|_| secret.as_bytes().to_vec());
            vec![
                (STANDARD_ID_HEADER, delivery_id.to_owned()),
                (STANDARD_TIMESTAMP_HEADER, timestamp.to_string()),
                (
                    STANDARD_SIGNATURE_HEADER,
                    sign_standard(&key, delivery_id, timestamp, body),
                ),
            ]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_an_hmac_of_timestamp_dot_body() {
        // Reference computed with OpenSSL:
        // printf '1700000000.{"a":1}' | openssl dgst -sha256 -hmac secret
        assert_eq!(
            sign_v2(b"secret", 1_700_000_000, br#"{"a":1}"#),
            "sha256=49f24e537407743fa4a0242bb63b94b9a47ee99cbbe071ccd8a22550ae411686"
        );
    }

    #[test]
    fn a_changed_body_or_timestamp_changes_the_signature() {
        let base = sign_v2(b"k", 1, b"body");
        assert_ne!(base, sign_v2(b"k", 2, b"body"));
        assert_ne!(base, sign_v2(b"k", 1, b"body!"));
        assert_ne!(base, sign_v2(b"k2", 1, b"body"));
    }

    /// The vector of the reference `standardwebhooks` libraries' tests
    /// (Python `test_sign_function`), checked again with Python's own
    /// `hmac` and with the `standardwebhooks` 1.1.0 package's `sign`.
    const VECTOR_SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const VECTOR_ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    const VECTOR_TS: i64 = 1_614_265_330;
    const VECTOR_BODY: &[u8] = br#"{"test": 2432232314}"#;
    const VECTOR_SIGNATURE: &str = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";

    #[test]
    fn the_standard_signature_matches_the_reference_libraries_vector() {
        let key = standard_key(VECTOR_SECRET).expect("a whsec_ secret");
        assert_eq!(
            sign_standard(&key, VECTOR_ID, VECTOR_TS, VECTOR_BODY),
            VECTOR_SIGNATURE
        );
    }

    #[test]
    fn a_standard_key_is_the_base64_after_whsec_with_or_without_the_prefix() {
        let with = standard_key(VECTOR_SECRET).expect("with the prefix");
        let without = standard_key("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").expect("without it");
        assert_eq!(with, without);
        assert_eq!(with.len(), 24);
    }

    #[test]
    fn the_standard_headers_are_id_timestamp_and_the_v1_signature() {
        let headers = signature_headers(
            SignatureScheme::Standard,
            VECTOR_SECRET,
            VECTOR_ID,
            VECTOR_TS,
            VECTOR_BODY,
        );
        assert_eq!(
            headers,
            vec![
                (STANDARD_ID_HEADER, VECTOR_ID.to_owned()),
                (STANDARD_TIMESTAMP_HEADER, VECTOR_TS.to_string()),
                (STANDARD_SIGNATURE_HEADER, VECTOR_SIGNATURE.to_owned()),
            ]
        );
    }

    #[test]
    fn the_switchboard_headers_are_the_v2_scheme_unchanged() {
        let headers = signature_headers(
            SignatureScheme::Switchboard,
            "secret",
            "some-delivery-id",
            1_700_000_000,
            br#"{"a":1}"#,
        );
        assert_eq!(
            headers,
            vec![
                (TIMESTAMP_HEADER, "1700000000".to_owned()),
                (
                    SIGNATURE_HEADER,
                    "sha256=49f24e537407743fa4a0242bb63b94b9a47ee99cbbe071ccd8a22550ae411686"
                        .to_owned()
                ),
                (VERSION_HEADER, "v2".to_owned()),
            ]
        );
    }

    #[test]
    fn a_changed_body_id_timestamp_or_key_changes_the_standard_signature() {
        let key = standard_key(VECTOR_SECRET).expect("a whsec_ secret");
        let base = sign_standard(&key, VECTOR_ID, VECTOR_TS, VECTOR_BODY);
        assert_ne!(
            base,
            sign_standard(&key, VECTOR_ID, VECTOR_TS, br#"{"test": 2432232315}"#)
        );
        assert_ne!(
            base,
            sign_standard(&key, "msg_other", VECTOR_TS, VECTOR_BODY)
        );
        assert_ne!(
            base,
            sign_standard(&key, VECTOR_ID, VECTOR_TS + 1, VECTOR_BODY)
        );
        assert_ne!(
            base,
            sign_standard(VECTOR_SECRET.as_bytes(), VECTOR_ID, VECTOR_TS, VECTOR_BODY),
            "the key is the decoded base64, not the secret's text"
        );
    }

    #[test]
    fn standard_key_refuses_secrets_that_are_no_base64_key() {
        for bad in [
            "",
            "whsec_",
            "whsec_not base64!",
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaS", // a character short
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw=", // stray padding
            "whsec_ MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", // whitespace
            "top-secret",
        ] {
            let err = standard_key(bad).expect_err(bad);
            assert!(err.contains("whsec_"), "{bad:?}: {err}");
        }
    }

    #[test]
    fn a_new_standard_secret_is_whsec_and_the_base64_of_24_random_bytes() {
        let a = new_standard_secret();
        let b = new_standard_secret();
        assert_ne!(a, b);
        for secret in [&a, &b] {
            assert!(secret.starts_with("whsec_"), "{secret}");
            assert_eq!(secret.len(), "whsec_".len() + 32, "{secret}");
            assert_eq!(standard_key(secret).expect(secret).len(), 24);
        }
    }

    #[test]
    fn standard_secret_keeps_a_good_secret_and_makes_one_when_none_is_given() {
        assert_eq!(
            standard_secret(Some(VECTOR_SECRET.to_owned())),
            Ok(VECTOR_SECRET.to_owned())
        );
        let made = standard_secret(None).expect("a new secret");
        assert_eq!(standard_key(&made).expect("a key").len(), 24);
        let longest = format!("whsec_{}", BASE64.encode([7u8; 64]));
        assert_eq!(standard_secret(Some(longest.clone())), Ok(longest));
    }

    #[test]
    fn standard_secret_refuses_bad_short_and_long_keys() {
        assert!(standard_secret(Some("top-secret".into())).is_err());
        assert!(standard_secret(Some(String::new())).is_err());
        let short = format!("whsec_{}", BASE64.encode([7u8; 23]));
        let err = standard_secret(Some(short)).expect_err("23 bytes");
        assert!(err.contains("24 to 64 bytes"), "{err}");
        let long = format!("whsec_{}", BASE64.encode([7u8; 65]));
        assert!(standard_secret(Some(long)).is_err());
    }
}
