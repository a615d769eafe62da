//! The subjects the gateway publishes and consumes, built from the
//! configured prefix:
//!
//! - `<prefix>.events.<session>.<event>`: every event envelope;
//! - `<prefix>.send.<session>`: send commands, consumed from a work queue;
//! - `<prefix>.results.<session>`: one result per send command;
//! - `<prefix>.replies.<session>[.…]`: where a command may ask for its
//!   result to be published as well (`Switchboard-Reply-To`); no stream
//!   captures these, and no other subject is answered on.
//!
//! A session id may contain `.`, which separates subject tokens, so it is
//! written with `~` in its place (`~` is never part of a session id, so the
//! mapping goes both ways).

/// The subject token of a session id.
pub fn session_token(session_id: &str) -> String {
    session_id.replace('.', "~")
}

/// The session id a subject token names.
pub fn session_of_token(token: &str) -> String {
    token.replace('~', ".")
}

/// Longest subject a command may ask its result to be published to.
pub const MAX_REPLY_SUBJECT: usize = 256;

/// The subjects of one prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subjects {
    prefix: String,
}

impl Subjects {
    /// The subjects under `prefix`.
    pub fn new(prefix: &str) -> Self {
        Self {
            prefix: prefix.trim_matches('.').to_owned(),
        }
    }

    /// Where an event of `session_id` named `event` is published.
    pub fn event(&self, session_id: &str, event: &str) -> String {
        format!(
            "{}.events.{}.{event}",
            self.prefix,
            session_token(session_id)
        )
    }

    /// Every event subject (the events stream captures these).
    pub fn all_events(&self) -> String {
        format!("{}.events.>", self.prefix)
    }

    /// Where send commands for `session_id` are published.
    pub fn send(&self, session_id: &str) -> String {
        format!("{}.send.{}", self.prefix, session_token(session_id))
    }

    /// Every send-command subject (the send stream captures these).
    pub fn all_sends(&self) -> String {
        format!("{}.send.>", self.prefix)
    }

    /// Where the results of `session_id`'s send commands are published.
    pub fn result(&self, session_id: &str) -> String {
        format!("{}.results.{}", self.prefix, session_token(session_id))
    }

    /// Every result subject (the events stream captures these too).
    pub fn all_results(&self) -> String {
        format!("{}.results.>", self.prefix)
    }

    /// The subject under which the results of `session_id`'s commands may
    /// be asked for (`Switchboard-Reply-To`): it, or a subject beneath it.
    pub fn replies(&self, session_id: &str) -> String {
        format!("{}.replies.{}", self.prefix, session_token(session_id))
    }

    /// Whether `subject` is one a command of `session_id` may have its
    /// result published to: that session's replies subject or one beneath
    /// it, a literal subject (no wildcard, no empty token, no white space)
    /// of at most [`MAX_REPLY_SUBJECT`] bytes. Never another session's, and
    /// never a subject outside the gateway's own.
    pub fn is_reply_of(&self, subject: &str, session_id: &str) -> bool {
        let base = self.replies(session_id);
        let Some(rest) = subject.strip_prefix(&base) else {
            return false;
        };
        let literal = subject.split('.').all(|token| {
            !token.is_empty()
                && !token.contains(['*', '>'])
                && !token.chars().any(|c| c.is_whitespace() || c.is_control())
        });
        subject.len() <= MAX_REPLY_SUBJECT && literal && (rest.is_empty() || rest.starts_with('.'))
    }

    /// The session a send-command subject names; `None` when the subject is
    /// not one (a token too many or too few).
    pub fn session_of_send(&self, subject: &str) -> Option<String> {
        let rest = subject.strip_prefix(&self.prefix)?.strip_prefix(".send.")?;
        (!rest.is_empty() && !rest.contains('.')).then(|| session_of_token(rest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dotted_session_id_is_one_subject_token_and_comes_back_unchanged() {
        let s = Subjects::new("switchboard");
        assert_eq!(
            s.event("team.one", "message"),
            "switchboard.events.team~one.message"
        );
        assert_eq!(s.send("team.one"), "switchboard.send.team~one");
        assert_eq!(
            s.session_of_send("switchboard.send.team~one").as_deref(),
            Some("team.one")
        );
        assert_eq!(s.result("a"), "switchboard.results.a");
    }

    #[test]
    fn a_subject_that_is_not_a_send_command_names_no_session() {
        let s = Subjects::new("sb");
        assert_eq!(s.session_of_send("sb.send."), None);
        assert_eq!(s.session_of_send("sb.send.a.b"), None);
        assert_eq!(s.session_of_send("other.send.a"), None);
        assert_eq!(s.all_events(), "sb.events.>");
        assert_eq!(s.all_sends(), "sb.send.>");
        assert_eq!(s.all_results(), "sb.results.>");
    }

    #[test]
    fn a_command_may_ask_for_its_result_only_under_its_own_sessions_replies() {
        let s = Subjects::new("sb");
        assert_eq!(s.replies("team.one"), "sb.replies.team~one");
        assert!(s.is_reply_of("sb.replies.a", "a"));
        assert!(s.is_reply_of("sb.replies.a.r2", "a"));
        assert!(s.is_reply_of("sb.replies.a.client-7.r2", "a"));
        assert!(s.is_reply_of("sb.replies.team~one.x", "team.one"));
        // Another session's, the results and events subjects, anything else.
        assert!(!s.is_reply_of("sb.replies.b.r2", "a"));
        assert!(!s.is_reply_of("sb.replies.ab", "a"));
        assert!(!s.is_reply_of("sb.results.a", "a"));
        assert!(!s.is_reply_of("sb.events.a.message", "a"));
        assert!(!s.is_reply_of("answers.r3", "a"));
        assert!(!s.is_reply_of("$JS.API.STREAM.DELETE.X", "a"));
        // Not a literal subject.
        assert!(!s.is_reply_of("sb.replies.a.*", "a"));
        assert!(!s.is_reply_of("sb.replies.a.>", "a"));
        assert!(!s.is_reply_of("sb.replies.a..x", "a"));
        assert!(!s.is_reply_of("sb.replies.a.", "a"));
        assert!(!s.is_reply_of("sb.replies.a.x y", "a"));
        let long = format!("sb.replies.a.{}", "x".repeat(MAX_REPLY_SUBJECT));
        assert!(!s.is_reply_of(&long, "a"));
    }
}
