//! JIDs: the `<user>@<server>` addresses of users, groups, broadcast lists and
//! LID (linked identity) accounts on a WhatsApp-style network.
//!
//! [`Jid::parse`] is strict and needs a known server; [`Jid::parse_recipient`]
//! also takes a bare phone number such as `+1 (555) 123-4567`, which becomes
//! the user JID `15551234567@s.whatsapp.net`.
//!
//! Accepted servers, matched without regard to ASCII case:
//!
//! | kind | canonical server | also accepted | user part |
//! | --- | --- | --- | --- |
//! | [`JidKind::User`] | `s.whatsapp.net` | `s.service.net`, `c.us` | 5 to 15 digits (E.164) |
//! | [`JidKind::Group`] | `g.us` | | digits, or legacy `<digits>-<digits>`; 1 to 40 chars |
//! | [`JidKind::Broadcast`] | `broadcast` | | `status`, or 1 to 40 digits |
//! | [`JidKind::Lid`] | `lid` | | 1 to 20 digits |
//!
//! A device suffix on a user JID (`12345:7@s.whatsapp.net`, or with an agent,
//! `12345.0:7@s.whatsapp.net`) and on a LID (`123:7@lid`) is accepted and
//! dropped: a [`Jid`] always names the account, never one of its devices.
//! A [`Jid`] always prints in canonical form, so aliases never reach storage.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Fewest digits in a phone number or user JID.
pub const MIN_PHONE_DIGITS: usize = 5;
/// Most digits in a phone number or user JID (the E.164 maximum).
pub const MAX_PHONE_DIGITS: usize = 15;
/// A regular expression (ECMA-262, as JSON Schema uses) that only phone
/// numbers [`Jid::user`] accepts match: an optional `+`, then 5 to 15 digits
/// with single separators between them. It describes the accepted form for
/// API documents and fuzzers; [`Jid::user`] stays the rule.
pub const PHONE_PATTERN: &str = r"^\+?[0-9](?:[ ().-]?[0-9]){4,14}$";

/// A regular expression that only a person's address matches: a phone
/// number as in [`PHONE_PATTERN`], a user JID, or a LID.
pub const USER_PATTERN: &str =
    r"^(?:\+?[0-9](?:[ ().-]?[0-9]){4,14}|[0-9]{5,15}@(?:s\.whatsapp\.net|c\.us)|[0-9]{1,20}@lid)$";

/// A regular expression that only a person with a phone number matches: a
/// phone number as in [`PHONE_PATTERN`] or a user JID, never a LID (for
/// lookups and participant lists, which need the phone).
pub const PHONE_OR_USER_JID_PATTERN: &str =
    r"^(?:\+?[0-9](?:[ ().-]?[0-9]){4,14}|[0-9]{5,15}@(?:s\.whatsapp\.net|c\.us))$";

/// A regular expression that only a chat's address matches: a person's
/// address as in [`USER_PATTERN`], or a group JID.
pub const CHAT_PATTERN: &str = r"^(?:\+?[0-9](?:[ ().-]?[0-9]){4,14}|[0-9]{5,15}@(?:s\.whatsapp\.net|c\.us)|[0-9]{1,20}@lid|[0-9]{1,40}@g\.us)$";

/// A regular expression that only group addresses match: a group JID or
/// its bare id.
pub const GROUP_PATTERN: &str = r"^[0-9]{1,40}(?:@g\.us)?$";

/// Longest input echoed back in a [`JidError`]; longer input is cut with `…`.
const MAX_ECHO_CHARS: usize = 64;

/// What a [`Jid`] addresses; decided by its server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum JidKind {
    /// A person's account, by phone number (`s.whatsapp.net`).
    User,
    /// A group chat (`g.us`).
    Group,
    /// A broadcast list, or `status@broadcast` for status updates.
    Broadcast,
    /// An account by its linked identity number instead of its phone (`lid`).
    Lid,
}

impl JidKind {
    /// The canonical server of this kind, as printed after the `@`.
    pub fn server(self) -> &'static str {
        match self {
            JidKind::User => "s.whatsapp.net",
            JidKind::Group => "g.us",
            JidKind::Broadcast => "broadcast",
            JidKind::Lid => "lid",
        }
    }

    fn from_server(server: &str) -> Option<JidKind> {
        match server.to_ascii_lowercase().as_str() {
            "s.whatsapp.net" | "s.service.net" | "c.us" => Some(JidKind::User),
            "g.us" => Some(JidKind::Group),
            "broadcast" => Some(JidKind::Broadcast),
            "lid" => Some(JidKind::Lid),
            _ => None,
        }
    }
}

/// A validated, normalised JID. Equal addresses compare equal whatever alias
/// or device suffix they were written with.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Jid {
    kind: JidKind,
    user: String,
}

/// Why a string is not a JID or phone number.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{input}` is not a valid JID or phone number: {reason}")]
pub struct JidError {
    /// The rejected input, trimmed, and cut to 64 characters plus `…`.
    pub input: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl JidError {
    fn new(input: &str, reason: &'static str) -> JidError {
        let input = match input.char_indices().nth(MAX_ECHO_CHARS) {
            Some((cut, _)) => format!("{}…", input.get(..cut).unwrap_or_default()),
            None => input.to_owned(),
        };
        JidError { input, reason }
    }
}

impl Jid {
    /// Parses a full JID `<user>@<server>`; the server must be known (see the
    /// module docs). Surrounding whitespace is ignored.
    pub fn parse(s: &str) -> Result<Jid, JidError> {
        let s = s.trim();
        let err = |reason| JidError::new(s, reason);
        if s.is_empty() {
            return Err(err("it is empty"));
        }
        let (user, server) = s
            .split_once('@')
            .ok_or_else(|| err("a JID needs `@` and a server"))?;
        if server.contains('@') {
            return Err(err("it has more than one `@`"));
        }
        if user.is_empty() {
            return Err(err("the part before `@` is empty"));
        }
        if server.is_empty() {
            return Err(err("the server after `@` is empty"));
        }
        let kind = JidKind::from_server(server).ok_or_else(|| {
            err("unknown server; expected s.whatsapp.net (or s.service.net, c.us), g.us, broadcast or lid")
        })?;
        let user = match kind {
            JidKind::User => phone_user(user),
            JidKind::Group => group_id(user),
            JidKind::Broadcast => broadcast_id(user),
            JidKind::Lid => lid_user(user),
        }
        .map_err(err)?;
        Ok(Jid {
            kind,
            user: user.to_owned(),
        })
    }

    /// Parses a message recipient: a full JID as in [`Jid::parse`] when the
    /// input contains `@`, otherwise a bare phone number as in [`Jid::user`].
    pub fn parse_recipient(s: &str) -> Result<Jid, JidError> {
        if s.contains('@') {
            Jid::parse(s)
        } else {
            Jid::user(s)
        }
    }

    /// Makes a user JID from a phone number: an optional leading `+`, then
    /// digits with any spaces, `-`, `.`, `(` and `)` between them, which are
    /// dropped; 5 to 15 digits must remain. Digits are kept as given: a
    /// leading `00` international prefix is not rewritten.
    pub fn user(phone_digits: &str) -> Result<Jid, JidError> {
        let s = phone_digits.trim();
        let err = |reason| JidError::new(s, reason);
        if s.is_empty() {
            return Err(err("it is empty"));
        }
        let mut digits = String::with_capacity(MAX_PHONE_DIGITS);
        for c in s.strip_prefix('+').unwrap_or(s).chars() {
            match c {
                '0'..='9' if digits.len() < MAX_PHONE_DIGITS => digits.push(c),
                '0'..='9' => return Err(err("a phone number has at most 15 digits")),
                ' ' | '-' | '.' | '(' | ')' => {}
                _ => {
                    return Err(err(
                        "a phone number may only hold digits, a leading `+`, spaces, `-`, `.`, `(` and `)`",
                    ));
                }
            }
        }
        if digits.len() < MIN_PHONE_DIGITS {
            return Err(err("a phone number has at least 5 digits"));
        }
        Ok(Jid {
            kind: JidKind::User,
            user: digits,
        })
    }

    /// What this JID addresses.
    pub fn kind(&self) -> JidKind {
        self.kind
    }

    /// The part before the `@`, without any device suffix.
    pub fn user_part(&self) -> &str {
        &self.user
    }

    /// The phone number's digits (no `+`) of a user JID; `None` for other kinds.
    pub fn phone(&self) -> Option<&str> {
        (self.kind == JidKind::User).then_some(self.user.as_str())
    }

    /// Whether this JID is a group chat.
    pub fn is_group(&self) -> bool {
        self.kind == JidKind::Group
    }
}

fn all_digits(s: &str, min: usize, max: usize) -> bool {
    (min..=max).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit())
}

/// Splits off a `:<device>` suffix, checking it is 1 to 5 digits.
fn strip_device(user: &str) -> Result<&str, &'static str> {
    match user.split_once(':') {
        Some((rest, device)) if all_digits(device, 1, 5) => Ok(rest),
        Some(_) => Err("the device after `:` must be 1 to 5 digits"),
        None => Ok(user),
    }
}

fn phone_user(user: &str) -> Result<&str, &'static str> {
    let user = strip_device(user)?;
    let user = match user.split_once('.') {
        Some((rest, agent)) if all_digits(agent, 1, 3) => rest,
        Some(_) => return Err("the agent after `.` must be 1 to 3 digits"),
        None => user,
    };
    if !user.bytes().all(|b| b.is_ascii_digit()) {
        Err("a user JID's user part must be digits only")
    } else if !(MIN_PHONE_DIGITS..=MAX_PHONE_DIGITS).contains(&user.len()) {
        Err("a user JID's user part must be 5 to 15 digits")
    } else {
        Ok(user)
    }
}

fn group_id(user: &str) -> Result<&str, &'static str> {
    let ok = user.len() <= 40
        && match user.split_once('-') {
            Some((creator, stamp)) => all_digits(creator, 1, 40) && all_digits(stamp, 1, 40),
            None => all_digits(user, 1, 40),
        };
    if ok {
        Ok(user)
    } else {
        Err("a group id must be digits or `<digits>-<digits>`, at most 40 characters")
    }
}

fn broadcast_id(user: &str) -> Result<&str, &'static str> {
    if user == "status" || all_digits(user, 1, 40) {
        Ok(user)
    } else {
        Err("a broadcast id must be `status` or 1 to 40 digits")
    }
}

fn lid_user(user: &str) -> Result<&str, &'static str> {
    let user = strip_device(user)?;
    if all_digits(user, 1, 20) {
        Ok(user)
    } else {
        Err("a LID must be 1 to 20 digits")
    }
}

impl fmt::Display for Jid {
    /// Prints the canonical `<user>@<server>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.user, self.kind.server())
    }
}

impl FromStr for Jid {
    type Err = JidError;

    /// Same as [`Jid::parse_recipient`].
    fn from_str(s: &str) -> Result<Jid, JidError> {
        Jid::parse_recipient(s)
    }
}

impl Serialize for Jid {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Jid {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Jid, D::Error> {
        let s = String::deserialize(deserializer)?;
        Jid::parse_recipient(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A strategy for the strings a documented pattern matches (proptest's
    /// generator takes the pattern without its anchors).
    fn unanchored(pattern: &'static str) -> impl Strategy<Value = String> {
        let body = pattern.trim_start_matches('^').trim_end_matches('$');
        proptest::string::string_regex(body).expect("a pattern proptest can generate from")
    }

    fn ok(s: &str) -> Jid {
        Jid::parse_recipient(s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
    }

    #[test]
    fn bare_phone_with_plus_and_dashes_normalises_to_user_jid() {
        let jid = ok("+1 (555) 123-4567");
        assert_eq!(jid.to_string(), "15551234567@s.whatsapp.net");
        assert_eq!(jid.phone(), Some("15551234567"));
        assert_eq!(jid.kind(), JidKind::User);
        let kept = ok("0044 20.7946.0000");
        assert_eq!(kept.user_part(), "00442079460000", "00 is not rewritten");
    }

    #[test]
    fn aliases_mixed_case_and_device_suffixes_name_the_bare_account() {
        for s in [
            "12345@c.us",
            "12345@s.service.net",
            " 12345@S.WhatsApp.NET ",
            "12345:7@s.whatsapp.net",
            "12345.0:7@s.whatsapp.net",
        ] {
            assert_eq!(Jid::parse(s).unwrap().to_string(), "12345@s.whatsapp.net");
        }
        assert_eq!(ok("999:3@lid").to_string(), "999@lid");
        assert!(Jid::parse("12345:x@s.whatsapp.net").is_err());
        assert!(Jid::parse("12345.a:1@s.whatsapp.net").is_err());
    }

    #[test]
    fn groups_broadcasts_and_lids_parse_with_their_kind() {
        let group = ok("120363025246125888@g.us");
        assert!(group.is_group());
        assert_eq!(group.phone(), None);
        assert_eq!(ok("15551234567-1609459200@g.us").kind(), JidKind::Group);
        assert_eq!(ok("status@broadcast").kind(), JidKind::Broadcast);
        assert_eq!(ok("1234@broadcast").user_part(), "1234");
        assert_eq!(ok("123456789012345@LID").kind(), JidKind::Lid);
    }

    #[test]
    fn unknown_server_is_rejected_and_named_in_the_message() {
        let err = Jid::parse("12345@example.com").unwrap_err();
        assert!(err.to_string().contains("12345@example.com"), "{err}");
        assert!(err.reason.contains("unknown server"));
    }

    #[test]
    fn malformed_inputs_are_rejected() {
        let bad = "|   |abc|12345@|@s.whatsapp.net|1@2@g.us|1234@s.whatsapp.net|12a45@s.whatsapp.net\
            |1234567890123456@s.whatsapp.net|+1 555 CALL-NOW|12345 +|1-2-3@g.us|@|1234|12\t345\
            |1234567890123456|status@g.us|STATUS@broadcast|123456789012345678901@lid|1@x@lid";
        for s in bad.split('|') {
            assert!(Jid::parse_recipient(s).is_err(), "{s:?} should be rejected");
        }
        assert!(Jid::parse("15551234567").is_err(), "parse is strict");
        assert!(Jid::user("12345@s.whatsapp.net").is_err());
    }

    #[test]
    fn long_input_is_cut_in_the_error() {
        let err = Jid::parse(&"x".repeat(10_000)).unwrap_err();
        assert_eq!(err.input.chars().count(), MAX_ECHO_CHARS + 1);
    }

    #[test]
    fn serde_uses_the_canonical_string_and_accepts_phones() {
        let jid: Jid = serde_json::from_str("\"+44 7911 123456\"").unwrap();
        assert_eq!(
            serde_json::to_string(&jid).unwrap(),
            "\"447911123456@s.whatsapp.net\""
        );
        assert!(serde_json::from_str::<Jid>("\"nope\"").is_err());
        assert_eq!("12345".parse::<Jid>().unwrap(), Jid::user("12345").unwrap());
    }

    fn user_digits() -> impl Strategy<Value = String> {
        "[0-9]{5,15}"
    }

    proptest! {
        #[test]
        fn any_valid_jid_round_trips_through_display(
            (user, server) in prop_oneof![
                user_digits().prop_map(|u| (u, "s.whatsapp.net")),
                prop_oneof!["[0-9]{1,40}", "[0-9]{1,19}-[0-9]{1,20}"].prop_map(|u| (u, "g.us")),
                "[0-9]{1,20}".prop_map(|u| (u, "lid")),
                prop_oneof![Just("status".to_owned()), "[0-9]{1,40}"].prop_map(|u| (u, "broadcast")),
            ]
        ) {
            let jid = Jid::parse(&format!("{user}@{server}")).unwrap();
            prop_assert_eq!(jid.user_part(), user.as_str());
            prop_assert_eq!(Jid::parse(&jid.to_string()).unwrap(), jid);
        }

        #[test]
        fn bare_phone_with_any_separators_normalises_to_its_digits(
            plus in any::<bool>(),
            lead in "[ ().-]{0,2}",
            parts in proptest::collection::vec(("[0-9]", "[ ().-]{0,2}"), 5..=15),
        ) {
            let digits: String = parts.iter().map(|(d, _)| d.as_str()).collect();
            let mut input = if plus { "+".to_owned() } else { String::new() };
            input.push_str(&lead);
            for (d, sep) in &parts {
                input.push_str(d);
                input.push_str(sep);
            }
            let jid = Jid::parse_recipient(&input).unwrap();
            prop_assert_eq!(jid.to_string(), format!("{digits}@s.whatsapp.net"));
        }

        #[test]
        fn alias_servers_give_the_same_jid_as_the_canonical(user in user_digits()) {
            let canonical = Jid::parse(&format!("{user}@s.whatsapp.net")).unwrap();
            prop_assert_eq!(Jid::parse(&format!("{user}@s.service.net")).unwrap(), canonical.clone());
            prop_assert_eq!(Jid::parse(&format!("{user}@c.us")).unwrap(), canonical);
        }

        #[test]
        fn every_string_of_the_documented_patterns_is_accepted(
            phone in unanchored(PHONE_PATTERN),
            user in unanchored(USER_PATTERN),
            chat in unanchored(CHAT_PATTERN),
            group in unanchored(GROUP_PATTERN),
            phone_or_user in unanchored(PHONE_OR_USER_JID_PATTERN),
        ) {
            let phone_or_user = Jid::parse_recipient(&phone_or_user);
            prop_assert!(phone_or_user.as_ref().is_ok_and(|j| j.kind() == JidKind::User), "{phone_or_user:?}");
            prop_assert!(Jid::user(&phone).is_ok(), "{phone:?}");
            let user = Jid::parse_recipient(&user);
            prop_assert!(user.as_ref().is_ok_and(|j| !j.is_group()), "{user:?}");
            prop_assert!(Jid::parse_recipient(&chat).is_ok(), "{chat:?}");
            let full = if group.contains('@') { group.clone() } else { format!("{group}@g.us") };
            prop_assert!(Jid::parse(&full).is_ok_and(|j| j.is_group()), "{group:?}");
        }

        #[test]
        fn arbitrary_strings_never_panic(s in any::<String>(), t in "[0-9a-z:.@+() -]{0,30}") {
            for input in [&s, &t] {
                let _ = Jid::parse(input);
                let _ = Jid::user(input);
                if let Ok(jid) = Jid::parse_recipient(input) {
                    prop_assert_eq!(Jid::parse(&jid.to_string()).unwrap(), jid);
                }
            }
        }
    }
}
