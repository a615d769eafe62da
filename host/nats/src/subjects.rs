//! The subjects the gateway publishes and consumes, built from the
//! configured prefix:
//!
//! - `<prefix>.events.<session>.<event>`: every event envelope;
//! - `<prefix>.send.<session>`: send commands, consumed from a work queue;
//! - `<prefix>.results.<session>`: one result per send command.
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
}
