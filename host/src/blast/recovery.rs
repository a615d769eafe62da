//! Resolving a send a crash interrupted: a recipient left in `sending` has a
//! message id chosen before its attempt, so the network can be asked whether
//! it has that message instead of sending blindly.
//!
//! The guarantee: a recipient is delivered at most once when the backend can
//! tell what it has (the sim can), and otherwise resent under the same id,
//! which the network treats as the same message (a repeated id is
//! acknowledged, not delivered again).

/// What to do with a recipient found in `sending`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recovery {
    /// The network has the message: record it as sent without sending.
    MarkSent,
    /// Return it to pending; it is sent again under the same message id.
    Resend,
}

/// The decision for the network's answer to "do you have this id?": `None`
/// when the backend cannot tell.
pub fn decide(has_sent: Option<bool>) -> Recovery {
    match has_sent {
        Some(true) => Recovery::MarkSent,
        Some(false) | None => Recovery::Resend,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_the_network_has_is_marked_sent_and_never_resent() {
        assert_eq!(decide(Some(true)), Recovery::MarkSent);
    }

    #[test]
    fn a_message_the_network_lacks_or_cannot_vouch_for_is_resent_under_its_id() {
        assert_eq!(decide(Some(false)), Recovery::Resend);
        assert_eq!(decide(None), Recovery::Resend);
    }
}
