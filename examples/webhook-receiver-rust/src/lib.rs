//! Example receiver for Switchboard webhooks.
//!
//! Switchboard POSTs each event as JSON with `X-Webhook-Event` and
//! `X-Webhook-Delivery-Id` headers and, when the webhook has a secret:
//!
//! * `X-Webhook-Timestamp: <unix seconds>`
//! * `X-Webhook-Signature: sha256=<lowercase hex HMAC-SHA256>`
//! * `X-Webhook-Signature-Version: v2`
//!
//! In v2 the signed message is `<timestamp>.<raw body>`. A receiver refuses a
//! timestamp more than `tolerance_secs` from its own clock *before* checking
//! the signature: that is what stops an old, validly signed delivery from
//! being replayed. Senders before v0.9.8 omitted the version header and
//! signed the raw body alone ("legacy"); [`verify`] accepts that only when
//! asked to, since nothing binds such a signature to a time.
//!
//! [`verify`] is pure (no I/O, no clock) so it is easy to test and to reuse;
//! [`server`] wraps it in a small axum service that also deduplicates on the
//! delivery id with [`RecentIds`].

use std::collections::{HashSet, VecDeque};

use axum::http::{HeaderMap, StatusCode};
use hmac::{Hmac, Mac};
use sha2::Sha256;

pub mod server;

/// The largest clock difference accepted by default, in seconds.
pub const DEFAULT_TOLERANCE_SECS: i64 = 300;

/// How many delivery ids the receiver remembers by default.
pub const DEFAULT_RECENT_IDS: usize = 10_000;

/// Header names, lower case as HTTP/2 and `http::HeaderMap` spell them.
pub mod headers {
    /// The event name, e.g. `message`.
    pub const EVENT: &str = "x-webhook-event";
    /// A UUID stable across every retry and replay of one event.
    pub const DELIVERY_ID: &str = "x-webhook-delivery-id";
    /// Unix seconds when the delivery was signed (v2 only).
    pub const TIMESTAMP: &str = "x-webhook-timestamp";
    /// `sha256=<hex HMAC-SHA256>`.
    pub const SIGNATURE: &str = "x-webhook-signature";
    /// `v2`; absent on legacy deliveries.
    pub const SIGNATURE_VERSION: &str = "x-webhook-signature-version";
}

type HmacSha256 = Hmac<Sha256>;

/// Why a delivery was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// No `X-Webhook-Signature` header.
    #[error("missing signature")]
    MissingSignature,
    /// The signature is not `sha256=` followed by 64 hex digits.
    #[error("malformed signature (want sha256=<64 hex digits>)")]
    MalformedSignature,
    /// The HMAC does not match: wrong secret, or the body or timestamp changed.
    #[error("signature mismatch")]
    SignatureMismatch,
    /// A legacy (unversioned, body-only) signature while legacy is not allowed.
    #[error("legacy (unversioned) signature refused; start with --allow-legacy")]
    LegacyRefused,
    /// A v2 delivery without `X-Webhook-Timestamp`.
    #[error("missing timestamp")]
    MissingTimestamp,
    /// `X-Webhook-Timestamp` is not a plain non-negative integer.
    #[error("invalid timestamp {0:?}")]
    InvalidTimestamp(String),
    /// The timestamp is too far from our clock, either way.
    #[error("stale timestamp: {skew_secs} s from our clock (tolerance {tolerance_secs} s)")]
    StaleTimestamp {
        /// Our clock minus the delivery's timestamp (negative: from the future).
        skew_secs: i64,
        /// The tolerance that was exceeded.
        tolerance_secs: i64,
    },
    /// An `X-Webhook-Signature-Version` other than `v2`.
    #[error("unsupported signature version {0:?}")]
    UnsupportedVersion(String),
}

impl VerifyError {
    /// The HTTP status to answer with: 401 for signature problems, 400 for a
    /// stale timestamp or a malformed request.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::MissingSignature
            | Self::MalformedSignature
            | Self::SignatureMismatch
            | Self::LegacyRefused => StatusCode::UNAUTHORIZED,
            Self::MissingTimestamp
            | Self::InvalidTimestamp(_)
            | Self::StaleTimestamp { .. }
            | Self::UnsupportedVersion(_) => StatusCode::BAD_REQUEST,
        }
    }
}

/// Read access to request headers, so [`verify`] works with any HTTP stack.
pub trait HeaderLookup {
    /// The value of the header `name` (given in lower case), if present and
    /// valid text. Names must match case-insensitively.
    fn header(&self, name: &str) -> Option<&str>;
}

impl HeaderLookup for HeaderMap {
    fn header(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(|v| v.to_str().ok())
    }
}

impl HeaderLookup for [(&str, &str)] {
    fn header(&self, name: &str) -> Option<&str> {
        self.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| *v)
    }
}

/// Verify one delivery's signature.
///
/// `body` must be the raw request bytes exactly as received (not re-encoded
/// JSON); `now` is our clock in unix seconds. v2 deliveries have their
/// timestamp checked against `now ± tolerance_secs` first, then the HMAC of
/// `<timestamp>.<body>`; legacy deliveries (no version header) are refused
/// unless `allow_legacy`, and then checked over the body alone. MACs are
/// compared in constant time.
pub fn verify<H: HeaderLookup + ?Sized>(
    secret: &[u8],
    headers: &H,
    body: &[u8],
    now: i64,
    tolerance_secs: i64,
    allow_legacy: bool,
) -> Result<(), VerifyError> {
    let mut mac = HmacSha256::new_from_slice(secret).expect("HMAC takes keys of any length");

    match headers.header(headers::SIGNATURE_VERSION).map(str::trim) {
        None => {
            // Legacy: nothing binds the signature to a time, so a captured
            // delivery can be replayed forever. Refuse unless told otherwise.
            if headers.header(headers::SIGNATURE).is_none() {
                return Err(VerifyError::MissingSignature);
            }
            if !allow_legacy {
                return Err(VerifyError::LegacyRefused);
            }
        }
        Some("v2") => {
            // The replay check comes BEFORE the signature check.
            let ts_text = headers
                .header(headers::TIMESTAMP)
                .map(str::trim)
                .ok_or(VerifyError::MissingTimestamp)?;
            let ts = parse_timestamp(ts_text)
                .ok_or_else(|| VerifyError::InvalidTimestamp(ts_text.to_owned()))?;
            let skew_secs = now.saturating_sub(ts);
            if skew_secs.saturating_abs() > tolerance_secs {
                return Err(VerifyError::StaleTimestamp {
                    skew_secs,
                    tolerance_secs,
                });
            }
            // Sign the timestamp text exactly as received.
            mac.update(ts_text.as_bytes());
            mac.update(b".");
        }
        Some(other) => return Err(VerifyError::UnsupportedVersion(other.to_owned())),
    }

    let given = headers
        .header(headers::SIGNATURE)
        .ok_or(VerifyError::MissingSignature)?;
    let given = parse_signature(given.trim()).ok_or(VerifyError::MalformedSignature)?;
    mac.update(body);
    // `verify_slice` compares in constant time; never compare MACs with `==`.
    mac.verify_slice(&given)
        .map_err(|_| VerifyError::SignatureMismatch)
}

/// A plain decimal timestamp: ASCII digits only, no sign, at most 18 of them.
fn parse_timestamp(text: &str) -> Option<i64> {
    let plain = !text.is_empty() && text.len() <= 18 && text.bytes().all(|b| b.is_ascii_digit());
    plain.then(|| text.parse().ok()).flatten()
}

/// `sha256=<64 hex digits>` to the 32 MAC bytes.
fn parse_signature(value: &str) -> Option<[u8; 32]> {
    let hex_part = value.strip_prefix("sha256=")?;
    let mut out = [0u8; 32];
    hex::decode_to_slice(hex_part, &mut out).ok()?;
    Some(out)
}

/// The `X-Webhook-Signature` value for a v2 delivery: HMAC-SHA256 of
/// `<timestamp>.<body>`. For tests and for replaying deliveries by hand.
pub fn sign_v2(secret: &[u8], timestamp: i64, body: &[u8]) -> String {
    let mut mac = HmacSha256::new_from_slice(secret).expect("HMAC takes keys of any length");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// The `X-Webhook-Signature` value for a legacy delivery: HMAC-SHA256 of the
/// body alone.
pub fn sign_legacy(secret: &[u8], body: &[u8]) -> String {
    let mut mac = HmacSha256::new_from_slice(secret).expect("HMAC takes keys of any length");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// Our clock in unix seconds.
pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// A bounded set of the most recent delivery ids: once full, remembering a
/// new id forgets the oldest.
#[derive(Debug)]
pub struct RecentIds {
    capacity: usize,
    order: VecDeque<String>,
    ids: HashSet<String>,
}

impl RecentIds {
    /// An empty set remembering at most `capacity` ids (at least one).
    pub fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        Self {
            capacity,
            order: VecDeque::with_capacity(capacity),
            ids: HashSet::with_capacity(capacity),
        }
    }

    /// Remember `id`; false when it was already there (a duplicate).
    pub fn insert(&mut self, id: &str) -> bool {
        if self.ids.contains(id) {
            return false;
        }
        if self.order.len() == self.capacity
            && let Some(oldest) = self.order.pop_front()
        {
            self.ids.remove(&oldest);
        }
        self.order.push_back(id.to_owned());
        self.ids.insert(id.to_owned());
        true
    }

    /// Forget `id`, e.g. when processing it failed and a retry should pass.
    pub fn remove(&mut self, id: &str) {
        if self.ids.remove(id) {
            self.order.retain(|x| x != id);
        }
    }

    /// How many ids are remembered.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// True when no id is remembered.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

impl Default for RecentIds {
    fn default() -> Self {
        Self::new(DEFAULT_RECENT_IDS)
    }
}

#[cfg(test)]
mod tests {
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
}
