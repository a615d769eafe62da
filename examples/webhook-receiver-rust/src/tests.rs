//! Unit tests of signature verification and the recent-id set.
use super::*;

const SECRET: &[u8] = b"s3cret";
const NOW: i64 = 1_795_313_840;
const BODY: &[u8] = br#"{"session_id":"s1","event":"message","timestamp":1795313840,"data":{"text":"hi"},"offline":false}"#;

/// Headers as Switchboard sends them for a webhook with a secret.
fn v2(ts: i64, secret: &[u8], body: &[u8]) -> Vec<(String, String)> {
    vec![
        ("Content-Type".into(), "application/json".into()),
        ("X-Webhook-Event".into(), "message".into()),
        ("X-Webhook-Delivery-Id".into(), "d-1".into()),
        ("X-Webhook-Timestamp".into(), ts.to_string()),
        ("X-Webhook-Signature".into(), sign_v2(secret, ts, body)),
        ("X-Webhook-Signature-Version".into(), "v2".into()),
    ]
}

/// Headers as Switchboard sent them before v0.9.8.
fn legacy(secret: &[u8], body: &[u8]) -> Vec<(String, String)> {
    vec![
        ("X-Webhook-Event".into(), "message".into()),
        ("X-Webhook-Delivery-Id".into(), "d-legacy".into()),
        ("X-Webhook-Signature".into(), sign_legacy(secret, body)),
    ]
}

fn set(h: &mut Vec<(String, String)>, name: &str, value: Option<&str>) {
    h.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
    if let Some(v) = value {
        h.push((name.into(), v.into()));
    }
}

fn check(h: &[(String, String)], body: &[u8], allow_legacy: bool) -> Result<(), VerifyError> {
    let pairs: Vec<(&str, &str)> = h.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    verify(
        SECRET,
        pairs.as_slice(),
        body,
        NOW,
        DEFAULT_TOLERANCE_SECS,
        allow_legacy,
    )
}

#[test]
fn valid_v2() {
    assert_eq!(check(&v2(NOW, SECRET, BODY), BODY, false), Ok(()));
}

#[test]
fn known_vectors_computed_with_openssl() {
    // printf '1795313840.{}' | openssl dgst -sha256 -hmac s3cret
    let v2_sig = "sha256=e7d337c056388d15bb548cec9cc28170e740c2b2182e60f177f393da99134140";
    let legacy_sig = "sha256=adbde1ce40c89c14215687d5d762a47df6dfaefcfad61e2e86718ffc8498571b";
    assert_eq!(sign_v2(SECRET, NOW, b"{}"), v2_sig);
    assert_eq!(sign_legacy(SECRET, b"{}"), legacy_sig);
    // The vector in Switchboard's own signer tests (host/src/webhooks/signing.rs).
    let host = "sha256=49f24e537407743fa4a0242bb63b94b9a47ee99cbbe071ccd8a22550ae411686";
    assert_eq!(sign_v2(b"secret", 1_700_000_000, br#"{"a":1}"#), host);
    let h = [
        ("x-webhook-timestamp", "1700000000"),
        ("x-webhook-signature", host),
        ("x-webhook-signature-version", "v2"),
    ];
    let ok = verify(
        b"secret",
        h.as_slice(),
        br#"{"a":1}"#,
        1_700_000_100,
        300,
        false,
    );
    assert_eq!(ok, Ok(()));
}

#[test]
fn works_with_an_http_header_map() {
    let mut map = HeaderMap::new();
    for (k, v) in v2(NOW, SECRET, BODY) {
        let name = axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap();
        map.insert(name, v.parse().unwrap());
    }
    assert_eq!(verify(SECRET, &map, BODY, NOW, 300, false), Ok(()));
}

#[test]
fn uppercase_hex_is_accepted() {
    let mut h = v2(NOW, SECRET, BODY);
    let sig = format!("sha256={}", sign_v2(SECRET, NOW, BODY)[7..].to_uppercase());
    set(&mut h, "X-Webhook-Signature", Some(&sig));
    assert_eq!(check(&h, BODY, false), Ok(()));
}

#[test]
fn tampered_body() {
    let tampered = String::from_utf8(BODY.to_vec())
        .unwrap()
        .replace("hi", "ho");
    assert_eq!(
        check(&v2(NOW, SECRET, BODY), tampered.as_bytes(), false),
        Err(VerifyError::SignatureMismatch)
    );
}

#[test]
fn reserialized_body_fails() {
    let value: serde_json::Value = serde_json::from_slice(BODY).unwrap();
    let pretty = serde_json::to_vec_pretty(&value).unwrap();
    assert!(check(&v2(NOW, SECRET, BODY), &pretty, false).is_err());
}

#[test]
fn wrong_secret() {
    assert_eq!(
        check(&v2(NOW, b"not-the-secret", BODY), BODY, false),
        Err(VerifyError::SignatureMismatch)
    );
}

#[test]
fn timestamp_swapped_after_signing() {
    let mut h = v2(NOW, SECRET, BODY);
    set(&mut h, "X-Webhook-Timestamp", Some(&(NOW + 1).to_string()));
    assert_eq!(check(&h, BODY, false), Err(VerifyError::SignatureMismatch));
}

#[test]
fn stale_timestamp_in_the_past() {
    assert_eq!(
        check(&v2(NOW - 301, SECRET, BODY), BODY, false),
        Err(VerifyError::StaleTimestamp {
            skew_secs: 301,
            tolerance_secs: 300
        })
    );
}

#[test]
fn stale_timestamp_in_the_future() {
    assert_eq!(
        check(&v2(NOW + 301, SECRET, BODY), BODY, false),
        Err(VerifyError::StaleTimestamp {
            skew_secs: -301,
            tolerance_secs: 300
        })
    );
}

#[test]
fn tolerance_edges_and_custom_tolerance() {
    assert_eq!(check(&v2(NOW - 300, SECRET, BODY), BODY, false), Ok(()));
    assert_eq!(check(&v2(NOW + 300, SECRET, BODY), BODY, false), Ok(()));
    let h = v2(NOW - 11, SECRET, BODY);
    let pairs: Vec<(&str, &str)> = h.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    assert!(matches!(
        verify(SECRET, pairs.as_slice(), BODY, NOW, 10, false),
        Err(VerifyError::StaleTimestamp { .. })
    ));
}

#[test]
fn stale_is_reported_before_the_signature_is_checked() {
    assert!(matches!(
        check(&v2(NOW - 1000, b"wrong", BODY), BODY, false),
        Err(VerifyError::StaleTimestamp { .. })
    ));
}

#[test]
fn missing_signature() {
    let mut h = v2(NOW, SECRET, BODY);
    set(&mut h, "X-Webhook-Signature", None);
    assert_eq!(check(&h, BODY, false), Err(VerifyError::MissingSignature));
    set(&mut h, "X-Webhook-Signature-Version", None);
    assert_eq!(check(&h, BODY, false), Err(VerifyError::MissingSignature));
    assert_eq!(check(&[], BODY, true), Err(VerifyError::MissingSignature));
}

#[test]
fn missing_timestamp() {
    let mut h = v2(NOW, SECRET, BODY);
    set(&mut h, "X-Webhook-Timestamp", None);
    assert_eq!(check(&h, BODY, false), Err(VerifyError::MissingTimestamp));
}

#[test]
fn invalid_timestamp() {
    for bad in [
        "",
        "abc",
        "-5",
        "+5",
        "1.5",
        "12 34",
        "1e9",
        "9999999999999999999",
    ] {
        let mut h = v2(NOW, SECRET, BODY);
        set(&mut h, "X-Webhook-Timestamp", Some(bad));
        assert_eq!(
            check(&h, BODY, false),
            Err(VerifyError::InvalidTimestamp(bad.into())),
            "{bad:?}"
        );
    }
}

#[test]
fn malformed_signature() {
    let good = sign_v2(SECRET, NOW, BODY);
    let zz = format!("sha256={}", "zz".repeat(32));
    let sha1 = format!("sha1={}", &good[7..]);
    let long = format!("{good}00");
    for bad in ["", &good[7..], &sha1, &good[..good.len() - 2], &long, &zz] {
        let mut h = v2(NOW, SECRET, BODY);
        set(&mut h, "X-Webhook-Signature", Some(bad));
        assert_eq!(
            check(&h, BODY, false),
            Err(VerifyError::MalformedSignature),
            "{bad:?}"
        );
    }
}

#[test]
fn unknown_version() {
    let mut h = v2(NOW, SECRET, BODY);
    set(&mut h, "X-Webhook-Signature-Version", Some("v3"));
    assert_eq!(
        check(&h, BODY, false),
        Err(VerifyError::UnsupportedVersion("v3".into()))
    );
}

#[test]
fn legacy_refused_by_default() {
    assert_eq!(
        check(&legacy(SECRET, BODY), BODY, false),
        Err(VerifyError::LegacyRefused)
    );
}

#[test]
fn legacy_accepted_with_allow_legacy() {
    assert_eq!(check(&legacy(SECRET, BODY), BODY, true), Ok(()));
    assert_eq!(
        check(&legacy(b"wrong", BODY), BODY, true),
        Err(VerifyError::SignatureMismatch)
    );
}

#[test]
fn v2_signature_is_not_accepted_as_legacy() {
    let mut h = v2(NOW, SECRET, BODY);
    set(&mut h, "X-Webhook-Signature-Version", None); // downgrade attempt
    assert_eq!(check(&h, BODY, true), Err(VerifyError::SignatureMismatch));
}

#[test]
fn statuses() {
    assert_eq!(VerifyError::SignatureMismatch.status(), 401);
    assert_eq!(VerifyError::LegacyRefused.status(), 401);
    assert_eq!(VerifyError::MissingTimestamp.status(), 400);
    let stale = VerifyError::StaleTimestamp {
        skew_secs: 1,
        tolerance_secs: 0,
    };
    assert_eq!(stale.status(), 400);
}

#[test]
fn recent_ids_are_bounded() {
    let mut recent = RecentIds::new(3);
    for id in ["0", "1", "2", "3"] {
        assert!(recent.insert(id));
    }
    assert_eq!(recent.len(), 3);
    assert!(!recent.insert("3"));
    assert!(recent.insert("0")); // the oldest was forgotten
    recent.remove("0");
    assert!(recent.insert("0"));
}
