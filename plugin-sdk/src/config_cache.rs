//! [`config_cached`]: the binding's configuration parsed once per instance
//! and configuration text, not on every call. Fetching the text from the
//! host is cheap; parsing it (and whatever a plugin derives from it while
//! deserializing) is what a hot filter should not repeat for every event.

use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::rc::Rc;

use serde::de::DeserializeOwned;

/// Distinct (type, text) pairs kept per instance; a plugin bound several
/// times with different configurations holds one entry per binding.
const ENTRIES: usize = 16;

/// One parsed configuration.
struct Entry {
    ty: TypeId,
    text: String,
    value: Rc<dyn Any>,
}

thread_local! {
    static CACHE: RefCell<Vec<Entry>> = const { RefCell::new(Vec::new()) };
}

/// The binding's JSON configuration deserialized into `T`, shared: parsed
/// the first time this instance sees this configuration text, then handed
/// out again while the text stays the same (a changed binding configuration
/// is a new text, so it is parsed afresh). Errors are not cached.
///
/// Prefer it to [`config`](crate::config) in filters and transforms that
/// run on every event or send.
pub fn config_cached<T: DeserializeOwned + 'static>() -> Result<Rc<T>, serde_json::Error> {
    cached(crate::config_json())
}

/// `text` deserialized into `T`, from the cache when this instance parsed
/// the same text into the same type before. Shared by the 0.1 and 0.2
/// `config_cached`, which differ only in the host import the text comes from.
pub(crate) fn cached<T: DeserializeOwned + 'static>(
    text: String,
) -> Result<Rc<T>, serde_json::Error> {
    let ty = TypeId::of::<T>();
    let hit = CACHE.with_borrow(|c| {
        c.iter()
            .find(|e| e.ty == ty && e.text == text)
            .and_then(|e| e.value.clone().downcast::<T>().ok())
    });
    if let Some(v) = hit {
        return Ok(v);
    }
    let value: Rc<T> = Rc::new(serde_json::from_str(&text)?);
    CACHE.with_borrow_mut(|c| {
        if c.len() >= ENTRIES {
            c.remove(0);
        }
        c.push(Entry {
            ty,
            text,
            value: value.clone(),
        });
    });
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing;

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Cfg {
        n: u32,
    }

    #[test]
    fn the_same_text_is_parsed_once_and_a_new_text_afresh() {
        testing::reset();
        testing::set_config(serde_json::json!({ "n": 1 }));
        let a = config_cached::<Cfg>().unwrap();
        let b = config_cached::<Cfg>().unwrap();
        assert!(Rc::ptr_eq(&a, &b), "the second call reuses the first parse");
        testing::set_config(serde_json::json!({ "n": 2 }));
        assert_eq!(config_cached::<Cfg>().unwrap().n, 2);
        testing::set_config(serde_json::json!({ "n": "x" }));
        assert!(config_cached::<Cfg>().is_err());
    }
}
