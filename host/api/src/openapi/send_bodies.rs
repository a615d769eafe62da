//! The request body of `POST /api/v1/sessions/{id}/messages/{kind}` (and of
//! a blast's `body`): one of the send kinds' wire bodies, whose schemas are
//! derived from the very structs that parse them (`domain::send::wire`).

use std::borrow::Cow;

use utoipa::openapi::schema::{OneOfBuilder, Schema};
use utoipa::openapi::{Ref, RefOr};
use utoipa::{PartialSchema, ToSchema};

use crate::domain::send::wire::{
    AudioWire, ButtonsWire, ContactWire, CtaUrlWire, DocumentWire, ListWire, LocationWire,
    PollWire, ReactionWire, TextWire, VisualWire,
};

/// Which body goes with which kind, in the order of the API reference.
const KINDS: &str = "`text`: SendText; `image`, `video`: SendImageOrVideo; `audio`: SendAudio; \
    `document`: SendDocument; `location`: SendLocation; `contact`: SendContact; `poll`: SendPoll; \
    `reaction`: SendReaction; `cta-url`: SendCtaUrl; `buttons`: SendButtons; `list`: SendList. \
    Every body may also carry `send_at` (an ISO-8601 time, or null): a future one schedules the send.";

/// One of the send kinds' bodies; the path's `kind` says which.
pub struct SendBody;

/// Pushes `T` and every schema it refers to.
fn with<T: ToSchema>(out: &mut Vec<(String, RefOr<Schema>)>) {
    out.push((T::name().into_owned(), T::schema()));
    T::schemas(out);
}

impl PartialSchema for SendBody {
    fn schema() -> RefOr<Schema> {
        let names = [
            TextWire::name(),
            VisualWire::name(),
            AudioWire::name(),
            DocumentWire::name(),
            LocationWire::name(),
            ContactWire::name(),
            PollWire::name(),
            ReactionWire::name(),
            CtaUrlWire::name(),
            ButtonsWire::name(),
            ListWire::name(),
        ];
        let mut one_of = OneOfBuilder::new().description(Some(KINDS));
        for name in names {
            one_of = one_of.item(Ref::from_schema_name(name));
        }
        RefOr::T(Schema::OneOf(one_of.build()))
    }
}

impl ToSchema for SendBody {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("SendBody")
    }

    fn schemas(out: &mut Vec<(String, RefOr<Schema>)>) {
        with::<TextWire>(out);
        with::<VisualWire>(out);
        with::<AudioWire>(out);
        with::<DocumentWire>(out);
        with::<LocationWire>(out);
        with::<ContactWire>(out);
        with::<PollWire>(out);
        with::<ReactionWire>(out);
        with::<CtaUrlWire>(out);
        with::<ButtonsWire>(out);
        with::<ListWire>(out);
    }
}
