//! Copying the 0.2 event record into a filter's memory with one view of
//! that memory, instead of one per field.
//!
//! The record is passed in the guest's memory (it flattens to more values
//! than a call may take directly), and the derived lowering writes it
//! field by field: every string, every pointer and length and every flag
//! looks up the instance's memory again (`LowerContext::as_slice_mut`),
//! about fifty lookups for a message, an eighth of a small filter call.
//! [`EventArg`] first asks the guest's allocator for each string's room
//! (each answer is checked against the memory's bounds by wasmtime), then
//! takes the memory once and writes everything. Field offsets come from
//! the canonical ABI of the fields' own types, the rule the derived code
//! follows, and the record's type is the derived one, so the filter
//! export's type check still holds it to the WIT.
//!
//! Guests whose strings are not UTF-8 (the canonical ABI also allows
//! UTF-16 and Latin-1) get the derived lowering, which converts.
//!
//! This reaches into wasmtime's doc-hidden `__internal` items (the ones its
//! derive macros use), which may move between releases: an upgrade that
//! moves them fails to compile here, and the end-to-end test with the
//! `record-echo` component compares every field a filter receives with the
//! event it came from.

use std::mem::MaybeUninit;
use std::sync::LazyLock;

use wasmtime::component::__internal::wasmtime_environ::component::{StringEncoding, VariantInfo};
use wasmtime::component::__internal::{
    CanonicalAbiInfo, InstanceType, InterfaceType, LowerContext,
};
use wasmtime::component::{ComponentType, Lower};

use super::event_record::{EventRef, MessageRef};

/// The event record as a filter's argument: lowered as [`EventRef`] is,
/// in one pass over the guest's memory (see the module docs).
#[derive(Clone, Copy, Debug)]
pub struct EventArg<'a>(pub EventRef<'a>);

/// Longest string the canonical ABI lets a host copy in (wasmtime's bound).
const MAX_STRING: usize = (1 << 31) - 1;

/// Strings a record holds at most: two in the event, twelve in its message.
const MAX_STRINGS: usize = 14;

/// Byte offsets of the record's fields, from the start of the record.
struct Layout {
    session_id: usize,
    event: usize,
    timestamp: usize,
    /// The `option<bool>`'s discriminant; its value at `+ bool_payload`.
    offline: usize,
    /// The `option<message>`'s discriminant; the message at `+ message_payload`.
    message: usize,
    bool_payload: usize,
    message_payload: usize,
    /// Within an `option<string>`: where the string's pointer and length are.
    string_payload: usize,
    m: MessageLayout,
}

/// Byte offsets of the message record's fields, from its start.
struct MessageLayout {
    message_id: usize,
    from: usize,
    from_phone: usize,
    chat: usize,
    chat_phone: usize,
    participant: usize,
    message_type: usize,
    text: usize,
    caption: usize,
    is_group: usize,
    is_from_me: usize,
    push_name: usize,
    quoted_id: usize,
    media_mimetype: usize,
    forwarded: usize,
}

/// Lays out a record's fields one after another, as the canonical ABI does.
struct Fields(usize);

impl Fields {
    fn next(&mut self, abi: &CanonicalAbiInfo) -> usize {
        abi.next_field32_size(&mut self.0)
    }
}

static LAYOUT: LazyLock<Layout> = LazyLock::new(|| {
    let string = <&str as ComponentType>::ABI;
    let opt_string = <Option<&str> as ComponentType>::ABI;
    let boolean = <bool as ComponentType>::ABI;
    let mut f = Fields(0);
    let m = MessageLayout {
        message_id: f.next(&string),
        from: f.next(&string),
        from_phone: f.next(&opt_string),
        chat: f.next(&string),
        chat_phone: f.next(&opt_string),
        participant: f.next(&string),
        message_type: f.next(&string),
        text: f.next(&opt_string),
        caption: f.next(&opt_string),
        is_group: f.next(&boolean),
        is_from_me: f.next(&boolean),
        push_name: f.next(&string),
        quoted_id: f.next(&opt_string),
        media_mimetype: f.next(&opt_string),
        forwarded: f.next(&boolean),
    };
    let mut f = Fields(0);
    Layout {
        session_id: f.next(&string),
        event: f.next(&string),
        timestamp: f.next(&<i64 as ComponentType>::ABI),
        offline: f.next(&<Option<bool> as ComponentType>::ABI),
        message: f.next(&<Option<MessageRef<'_>> as ComponentType>::ABI),
        bool_payload: payload_offset(&boolean),
        message_payload: payload_offset(&<MessageRef<'_> as ComponentType>::ABI),
        string_payload: payload_offset(&string),
        m,
    }
});

/// Where an `option<T>`'s value sits after its discriminant.
fn payload_offset(some: &CanonicalAbiInfo) -> usize {
    VariantInfo::new_static(&[None, Some(some.clone())]).payload_offset32 as usize
}

/// The strings of one record: where each one's pointer and length go, and
/// its text.
struct Strings<'a> {
    at: [(usize, &'a str); MAX_STRINGS],
    len: usize,
}

impl<'a> Strings<'a> {
    fn push(&mut self, at: usize, s: &'a str) {
        self.at[self.len] = (at, s);
        self.len += 1;
    }

    /// An `option<string>` at `at`: its string, when it has one.
    fn push_opt(&mut self, at: usize, s: Option<&'a str>, l: &Layout) {
        if let Some(s) = s {
            self.push(at + l.string_payload, s);
        }
    }
}

/// Writes `bytes` at `at`, or fails when that is outside the memory.
fn put(mem: &mut [u8], at: usize, bytes: &[u8]) -> wasmtime::Result<()> {
    mem.get_mut(at..)
        .and_then(|m| m.get_mut(..bytes.len()))
        .ok_or_else(|| wasmtime::Error::msg("the event record falls outside the plugin's memory"))?
        .copy_from_slice(bytes);
    Ok(())
}

// SAFETY: the flat form, the ABI and the type check are `EventRef`'s own,
// which wasmtime's derive made for the same fields; `EventArg` only wraps
// it. (The one place in the workspace that implements an unsafe trait by
// hand: `unsafe_code` is denied everywhere else.)
#[allow(unsafe_code)]
unsafe impl ComponentType for EventArg<'_> {
    type Lower = <EventRef<'static> as ComponentType>::Lower;

    const ABI: CanonicalAbiInfo = <EventRef<'static> as ComponentType>::ABI;

    fn typecheck(ty: &InterfaceType, types: &InstanceType<'_>) -> wasmtime::Result<()> {
        <EventRef<'_> as ComponentType>::typecheck(ty, types)
    }
}

// SAFETY: the flat lowering is `EventRef`'s; the one into memory writes
// the layout the canonical ABI gives these field types (offsets from their
// `CanonicalAbiInfo`), every write through a bounds-checked slice of the
// guest's memory, and every string into room the guest's allocator handed
// out and wasmtime checked.
#[allow(unsafe_code)]
unsafe impl Lower for EventArg<'_> {
    fn linear_lower_to_flat<T>(
        &self,
        cx: &mut LowerContext<'_, T>,
        ty: InterfaceType,
        dst: &mut MaybeUninit<Self::Lower>,
    ) -> wasmtime::Result<()> {
        self.0.linear_lower_to_flat(cx, ty, dst)
    }

    fn linear_lower_to_memory<T>(
        &self,
        cx: &mut LowerContext<'_, T>,
        ty: InterfaceType,
        offset: usize,
    ) -> wasmtime::Result<()> {
        if !matches!(cx.options().string_encoding, StringEncoding::Utf8) {
            return self.0.linear_lower_to_memory(cx, ty, offset);
        }
        let l = &*LAYOUT;
        let e = &self.0;
        let mut strings = Strings {
            at: [(0, ""); MAX_STRINGS],
            len: 0,
        };
        strings.push(offset + l.session_id, e.session_id);
        strings.push(offset + l.event, e.event);
        let base = offset + l.message + l.message_payload;
        if let Some(m) = &e.message {
            strings.push(base + l.m.message_id, m.message_id);
            strings.push(base + l.m.from, m.from);
            strings.push_opt(base + l.m.from_phone, m.from_phone, l);
            strings.push(base + l.m.chat, m.chat);
            strings.push_opt(base + l.m.chat_phone, m.chat_phone, l);
            strings.push(base + l.m.participant, m.participant);
            strings.push(base + l.m.message_type, m.message_type);
            strings.push_opt(base + l.m.text, m.text, l);
            strings.push_opt(base + l.m.caption, m.caption, l);
            strings.push(base + l.m.push_name, m.push_name);
            strings.push_opt(base + l.m.quoted_id, m.quoted_id, l);
            strings.push_opt(base + l.m.media_mimetype, m.media_mimetype, l);
        }
        let strings = &strings.at[..strings.len];

        // Room for every string first: the allocator may grow the memory,
        // which would leave an earlier view of it stale.
        let mut ptrs = [0usize; MAX_STRINGS];
        for (ptr, (_, s)) in ptrs.iter_mut().zip(strings) {
            if s.len() > MAX_STRING {
                wasmtime::bail!("string length of {} too large to copy into wasm", s.len());
            }
            *ptr = cx.realloc(0, 0, 1, s.len())?;
        }

        let mem = cx.as_slice_mut();
        for (&ptr, &(at, s)) in ptrs.iter().zip(strings) {
            put(mem, ptr, s.as_bytes())?;
            // Both fit in 32 bits: `realloc` checked the pointer, and the
            // length is under `MAX_STRING`.
            put(mem, at, &(ptr as u32).to_le_bytes())?;
            put(mem, at + 4, &(s.len() as u32).to_le_bytes())?;
        }
        put(mem, offset + l.timestamp, &e.timestamp.to_le_bytes())?;
        put(mem, offset + l.offline, &[u8::from(e.offline.is_some())])?;
        if let Some(b) = e.offline {
            put(mem, offset + l.offline + l.bool_payload, &[u8::from(b)])?;
        }
        put(mem, offset + l.message, &[u8::from(e.message.is_some())])?;
        if let Some(m) = &e.message {
            for (at, some) in [
                (l.m.from_phone, m.from_phone.is_some()),
                (l.m.chat_phone, m.chat_phone.is_some()),
                (l.m.text, m.text.is_some()),
                (l.m.caption, m.caption.is_some()),
                (l.m.quoted_id, m.quoted_id.is_some()),
                (l.m.media_mimetype, m.media_mimetype.is_some()),
                (l.m.is_group, m.is_group),
                (l.m.is_from_me, m.is_from_me),
                (l.m.forwarded, m.forwarded),
            ] {
                put(mem, base + at, &[u8::from(some)])?;
            }
        }
        Ok(())
    }
}
