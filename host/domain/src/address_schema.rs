//! The address formats of the API document: string schema components whose
//! patterns are [`crate::jid`]'s, so a field or parameter that takes an
//! address names the component (`#[schema(value_type = UserAddress)]`) and
//! the rule is written once, beside the parser it describes.

use std::borrow::Cow;

use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::{PartialSchema, ToSchema};

use crate::jid::{
    CHAT_PATTERN, GROUP_PATTERN, PHONE_OR_USER_JID_PATTERN, PHONE_PATTERN, USER_PATTERN,
};

/// Declares a string schema component with one of the address patterns.
macro_rules! address_schema {
    ($(#[$doc:meta])* $name:ident, $pattern:expr, $description:literal, $example:literal) => {
        $(#[$doc])*
        pub struct $name;

        impl PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .pattern(Some($pattern))
                    .description(Some($description))
                    .examples([serde_json::json!($example)])
                    .into()
            }
        }

        impl ToSchema for $name {
            fn name() -> Cow<'static, str> {
                Cow::Borrowed(stringify!($name))
            }
        }
    };
}

address_schema!(
    /// A phone number.
    PhoneNumber,
    PHONE_PATTERN,
    "A phone number: an optional `+`, then 5 to 15 digits; single spaces, `-`, `.`, `(` or `)` may separate them.",
    "+1 555 000 1111"
);
address_schema!(
    /// A person's address.
    UserAddress,
    USER_PATTERN,
    "A person: a phone number, a user JID (`<digits>@s.whatsapp.net`) or a LID (`<digits>@lid`).",
    "15550001111@s.whatsapp.net"
);
address_schema!(
    /// A person with a phone number: a phone number or a user JID, not a LID.
    PhoneOrUserJid,
    PHONE_OR_USER_JID_PATTERN,
    "A person by phone number or user JID (`<digits>@s.whatsapp.net`); a LID is not accepted here.",
    "+1 555 000 1111"
);
address_schema!(
    /// A chat's address.
    ChatAddress,
    CHAT_PATTERN,
    "A chat: a person (phone number, user JID or LID) or a group JID (`<digits>@g.us`).",
    "15550001111@s.whatsapp.net"
);
address_schema!(
    /// A group's address.
    GroupAddress,
    GROUP_PATTERN,
    "A group: its JID `<digits>@g.us`, or the bare id.",
    "120363025246125486@g.us"
);
