//! JSON for the hot path, written through a buffer each thread keeps and
//! then copied into an allocation of exactly its size.
//!
//! Serialising into a fresh `Vec` grows it by doubling: a 1 KB envelope is
//! copied four times over, through reallocations glibc serves from its slow
//! large-bin path. Starting every buffer at the largest usual size instead
//! makes small events (a send's, a receipt's) pay for a large allocation
//! and hold it while they wait in a queue. The scratch buffer grows once
//! per thread; each result costs one allocation of its own size and one
//! copy.

use std::cell::RefCell;

/// A scratch buffer grown past this is dropped after use, so one huge
/// event does not pin its size in every thread that saw it.
const KEEP: usize = 64 * 1024;

thread_local! {
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// `value` as JSON, in a vector whose capacity is its length.
pub fn to_vec_exact<T: serde::Serialize + ?Sized>(value: &T) -> serde_json::Result<Vec<u8>> {
    SCRATCH.with(|cell| {
        // A value whose serialisation calls this again (none does today)
        // gets a buffer of its own rather than a panic.
        let Ok(mut buf) = cell.try_borrow_mut() else {
            return serde_json::to_vec(value).map(|mut v| {
                v.shrink_to_fit();
                v
            });
        };
        buf.clear();
        let written = serde_json::to_writer(&mut *buf, value).map(|()| buf.as_slice().to_vec());
        if buf.capacity() > KEEP {
            *buf = Vec::new();
        }
        written
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_json_is_serde_json_s_in_an_allocation_of_its_own_size() {
        let small = serde_json::json!({ "event": "receipt", "ids": ["A"] });
        let big = serde_json::json!({ "text": "x".repeat(100_000) });
        for v in [&small, &big, &small] {
            let out = to_vec_exact(v).unwrap();
            assert_eq!(out, serde_json::to_vec(v).unwrap());
            assert_eq!(out.capacity(), out.len());
        }
        SCRATCH.with_borrow(|b| assert!(b.capacity() <= KEEP, "a huge event's buffer is not kept"));
    }

    #[test]
    fn a_nested_call_gets_a_buffer_of_its_own() {
        struct Nested;
        impl serde::Serialize for Nested {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let inner = to_vec_exact(&[1, 2, 3]).map_err(serde::ser::Error::custom)?;
                s.serialize_bytes(&inner)
            }
        }
        assert_eq!(to_vec_exact(&Nested).unwrap(), b"[91,49,44,50,44,51,93]");
    }
}
