//! What a failed send of the crate means to the gateway, decided once for
//! every send path: a session that is not logged in or lost its socket is
//! `NotConnected` (the scheduler and blasts wait for it instead of spending
//! attempts), a request the crate calls invalid is refused for good, and
//! the server's own refusals keep their meaning (a group it does not know
//! is not found, one the account may not send to is refused). Everything
//! else is a failure a later attempt may get past.

use whatsapp_rust::socket::error::EncryptSendErrorKind;
use whatsapp_rust::{ClientError, IqError, SendError};

use crate::NetworkError;

/// The gateway's error for a send the crate failed.
pub fn send_error(e: SendError) -> NetworkError {
    let text = e.to_string();
    match e {
        SendError::NotLoggedIn => NetworkError::NotConnected,
        SendError::Client(c) => client_error(c, text),
        SendError::Iq(iq) => iq_error(iq, text),
        SendError::InvalidRequest(why) => {
            NetworkError::Rejected(format!("WhatsApp cannot send this: {why}"))
        }
        _ => NetworkError::Failed(format!("the message was not sent: {text}")),
    }
}

fn client_error(e: ClientError, text: String) -> NetworkError {
    match e {
        ClientError::NotConnected | ClientError::NotLoggedIn | ClientError::Socket(_) => {
            NetworkError::NotConnected
        }
        ClientError::EncryptSend(s) if lost_socket(&s.kind) => NetworkError::NotConnected,
        ClientError::Iq(iq) => iq_error(iq, text),
        _ => NetworkError::Failed(format!("the message was not sent: {text}")),
    }
}

fn iq_error(e: IqError, text: String) -> NetworkError {
    match e {
        IqError::NotConnected | IqError::Disconnected(_) | IqError::Socket(_) => {
            NetworkError::NotConnected
        }
        IqError::EncryptSend(s) if lost_socket(&s.kind) => NetworkError::NotConnected,
        IqError::ClientState(c) => client_error(*c, text),
        IqError::ServerError { code: 404, .. } => {
            NetworkError::NotFound(format!("WhatsApp does not know the recipient: {text}"))
        }
        IqError::ServerError {
            code: 401 | 403 | 406,
            ..
        } => NetworkError::Rejected(format!("WhatsApp refused the message: {text}")),
        _ => NetworkError::Failed(format!("the message was not sent: {text}")),
    }
}

/// Whether a frame failed because the connection is gone (rather than
/// because of what it carried).
fn lost_socket(kind: &EncryptSendErrorKind) -> bool {
    matches!(
        kind,
        EncryptSendErrorKind::Transport
            | EncryptSendErrorKind::ChannelClosed
            | EncryptSendErrorKind::Poisoned
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_without_login_or_socket_is_not_connected_so_sends_wait_for_it() {
        for e in [
            SendError::NotLoggedIn,
            SendError::Client(ClientError::NotConnected),
            SendError::Client(ClientError::NotLoggedIn),
            SendError::Iq(IqError::NotConnected),
            SendError::Client(ClientError::Iq(IqError::NotConnected)),
        ] {
            let what = e.to_string();
            assert!(
                matches!(send_error(e), NetworkError::NotConnected),
                "{what}"
            );
        }
    }

    #[test]
    fn an_invalid_request_is_refused_for_good_and_an_internal_failure_may_pass_later() {
        let invalid = send_error(SendError::InvalidRequest("empty status recipients".into()));
        assert!(
            matches!(&invalid, NetworkError::Rejected(m) if m.contains("empty status recipients")),
            "{invalid:?}"
        );
        let internal = send_error(SendError::Internal(anyhow::anyhow!("signal session broke")));
        assert!(matches!(internal, NetworkError::Failed(_)), "{internal:?}");
        let timeout = send_error(SendError::Iq(IqError::Timeout));
        assert!(matches!(timeout, NetworkError::Failed(_)), "{timeout:?}");
    }

    #[test]
    fn the_servers_refusals_keep_their_meaning() {
        let server = |code| {
            send_error(SendError::Iq(IqError::ServerError {
                code,
                text: "x".into(),
                error_type: None,
                backoff: None,
            }))
        };
        assert!(matches!(server(404), NetworkError::NotFound(_)));
        assert!(matches!(server(403), NetworkError::Rejected(_)));
        assert!(matches!(server(500), NetworkError::Failed(_)));
    }
}
