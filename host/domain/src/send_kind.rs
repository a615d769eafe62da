//! The kinds of message a send can be, spelled as in the URL
//! (`POST …/messages/{kind}`). A leaf of the send modules: `send` and each
//! kind's body module name it, and it names none of them.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The kind of message to send, spelled as in the URL (`cta-url`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SendKind {
    /// Plain text, optionally quoting a message and mentioning users.
    Text,
    /// A picture with an optional caption.
    Image,
    /// A video with an optional caption.
    Video,
    /// An audio file, or a voice note when `ptt` is set.
    Audio,
    /// Any file, sent with a file name.
    Document,
    /// A point on the map.
    Location,
    /// One or more contact cards.
    Contact,
    /// A poll with 2 to 12 options.
    Poll,
    /// An emoji reaction to an earlier message, or its removal.
    Reaction,
    /// Text with one button that opens a URL.
    CtaUrl,
    /// Text with up to 3 reply buttons.
    Buttons,
    /// Text with a button that opens a list of selectable rows.
    List,
}

impl SendKind {
    /// Every kind, in the order of the API documentation.
    pub const ALL: [SendKind; 12] = [
        SendKind::Text,
        SendKind::Image,
        SendKind::Video,
        SendKind::Audio,
        SendKind::Document,
        SendKind::Location,
        SendKind::Contact,
        SendKind::Poll,
        SendKind::Reaction,
        SendKind::CtaUrl,
        SendKind::Buttons,
        SendKind::List,
    ];

    /// The URL spelling, e.g. `"cta-url"`.
    pub fn as_str(self) -> &'static str {
        match self {
            SendKind::Text => "text",
            SendKind::Image => "image",
            SendKind::Video => "video",
            SendKind::Audio => "audio",
            SendKind::Document => "document",
            SendKind::Location => "location",
            SendKind::Contact => "contact",
            SendKind::Poll => "poll",
            SendKind::Reaction => "reaction",
            SendKind::CtaUrl => "cta-url",
            SendKind::Buttons => "buttons",
            SendKind::List => "list",
        }
    }

    /// The kind with this exact URL spelling (lower case, `cta-url`), if any.
    pub fn parse(s: &str) -> Option<SendKind> {
        SendKind::ALL.into_iter().find(|kind| kind.as_str() == s)
    }
}

impl fmt::Display for SendKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
