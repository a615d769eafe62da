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
mod tests;
