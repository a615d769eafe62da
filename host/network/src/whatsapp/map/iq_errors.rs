//! The crate's IQ failures as [`NetworkError`]s, so every request-response
//! operation (contact lookups, spam reports, token issue) answers the same
//! HTTP codes for the same server answer: a lost connection is
//! `NotConnected`, a refusal is `Rejected` (or `NotFound` for 404), and what a
//! later attempt can fix (timeouts, rate limits, server faults) is `Failed`.

use whatsapp_rust::IqError;

use crate::NetworkError;

/// Maps the failure of the request described by `what` (a noun phrase such as
/// "the spam report").
pub fn iq_error(what: &str, e: &IqError) -> NetworkError {
    match e {
        // Each of these means the socket is gone or going: nothing reached
        // the server, and the caller's answer is to reconnect first.
        IqError::NotConnected
        | IqError::Disconnected(_)
        | IqError::InternalChannelClosed
        | IqError::Socket(_)
        | IqError::ClientState(_) => NetworkError::NotConnected,
        IqError::Timeout => {
            NetworkError::Failed(format!("{what} timed out: WhatsApp did not answer in time"))
        }
        IqError::ServerError {
            code,
            text,
            backoff,
            ..
        } => server_error(what, *code, text, *backoff),
        other => NetworkError::Failed(format!("{what} failed: {other}")),
    }
}

/// Maps an error answer of the server by its code.
fn server_error(what: &str, code: u16, text: &str, backoff: Option<u32>) -> NetworkError {
    let detail = if text.is_empty() {
        format!("{code}")
    } else {
        format!("{code} {text}")
    };
    match code {
        400 | 406 => NetworkError::Rejected(format!(
            "{what} was refused by WhatsApp as a bad request ({detail})"
        )),
        401 | 403 => NetworkError::Rejected(format!(
            "{what} was refused by WhatsApp: this account is not allowed to do that ({detail})"
        )),
        404 => NetworkError::NotFound(format!(
            "{what} failed: WhatsApp does not know what it names ({detail})"
        )),
        // Rate limits pass: the same request succeeds later.
        429 => NetworkError::Failed(match backoff {
            Some(s) => format!("{what} was rate limited by WhatsApp ({detail}); retry in {s} s"),
            None => format!("{what} was rate limited by WhatsApp ({detail}); retry later"),
        }),
        _ => NetworkError::Failed(format!("{what} failed: WhatsApp answered {detail}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(code: u16, text: &str, backoff: Option<u32>) -> IqError {
        IqError::ServerError {
            code,
            text: text.into(),
            error_type: None,
            backoff,
        }
    }

    #[test]
    fn a_lost_connection_is_not_connected() {
        for e in [IqError::NotConnected, IqError::InternalChannelClosed] {
            assert!(matches!(
                iq_error("the lookup", &e),
                NetworkError::NotConnected
            ));
        }
    }

    #[test]
    fn a_timeout_is_a_failure_a_retry_can_fix() {
        let NetworkError::Failed(m) = iq_error("the lookup", &IqError::Timeout) else {
            panic!("a timeout is `Failed`");
        };
        assert_eq!(m, "the lookup timed out: WhatsApp did not answer in time");
    }

    #[test]
    fn bad_requests_and_forbidden_requests_are_rejected() {
        for code in [400, 401, 403, 406] {
            let e = iq_error("the report", &server(code, "bad-request", None));
            let NetworkError::Rejected(m) = e else {
                panic!("{code} is `Rejected`");
            };
            assert!(m.contains(&format!("({code} bad-request)")), "{m}");
        }
    }

    #[test]
    fn item_not_found_is_not_found() {
        let e = iq_error("the lookup", &server(404, "item-not-found", None));
        let NetworkError::NotFound(m) = e else {
            panic!("404 is `NotFound`");
        };
        assert_eq!(
            m,
            "the lookup failed: WhatsApp does not know what it names (404 item-not-found)"
        );
    }

    #[test]
    fn a_rate_limit_is_a_failure_that_says_when_to_retry() {
        let NetworkError::Failed(m) = iq_error("the report", &server(429, "", Some(30))) else {
            panic!("429 is `Failed`");
        };
        assert_eq!(
            m,
            "the report was rate limited by WhatsApp (429); retry in 30 s"
        );
        let NetworkError::Failed(m) = iq_error("the report", &server(429, "", None)) else {
            panic!("429 is `Failed`");
        };
        assert!(m.ends_with("retry later"), "{m}");
    }

    #[test]
    fn server_faults_and_unreadable_answers_are_failures() {
        assert!(matches!(
            iq_error("the lookup", &server(500, "internal-server-error", None)),
            NetworkError::Failed(_)
        ));
        let unexpected = IqError::UnexpectedResponseType { got: None };
        assert!(matches!(
            iq_error("the lookup", &unexpected),
            NetworkError::Failed(_)
        ));
    }
}
