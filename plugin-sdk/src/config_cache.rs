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
    key: Key,
    value: Rc<dyn Any>,
}

/// What a parsed configuration is found by: its text (0.1, whose host has
/// no other way to tell configurations apart) or the number the 0.2 host
/// gives that text (`config-id`), which spares copying the text into the
/// plugin on every call.
#[derive(PartialEq, Eq)]
pub(crate) enum Key {
    Text(String),
    Id(u64),
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
    cached(Key::Text(crate::config_json()), String::new)
}

/// The configuration found by `key` deserialized into `T`, from the cache
/// when this instance parsed it into the same type before; parsed from the
/// key's text, or from what `text` fetches for a [`Key::Id`], otherwise. Shared by the 0.1 and 0.2 `config_cached`, which differ
/// in the host imports the key and the text come from.
pub(crate) fn cached<T: DeserializeOwned + 'static>(
    key: Key,
    text: impl FnOnce() -> String,
) -> Result<Rc<T>, serde_json::Error> {
    let ty = TypeId::of::<T>();
    let hit = CACHE.with_borrow(|c| {
        c.iter()
            .find(|e| e.ty == ty && e.key == key)
            .and_then(|e| e.value.clone().downcast::<T>().ok())
    });
    if let Some(v) = hit {
        return Ok(v);
    }
    let value: Rc<T> = Rc::new(match &key {
        Key::Text(t) => serde_json::from_str(t)?,
        Key::Id(_) => serde_json::from_str(&text())?,
    });
    CACHE.with_borrow_mut(|c| {
        if c.len() >= ENTRIES {
            c.remove(0);
        }
        c.push(Entry {
            ty,
            key,
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

    #[test]
    fn the_0_2_cache_knows_a_configuration_by_its_number_and_a_new_one_afresh() {
        testing::reset();
        testing::set_config(serde_json::json!({ "n": 1 }));
        let a = crate::v2::config_cached::<Cfg>().unwrap();
        let b = crate::v2::config_cached::<Cfg>().unwrap();
        assert!(Rc::ptr_eq(&a, &b), "the second call reuses the first parse");
        testing::set_config(serde_json::json!({ "n": 1 }));
        let c = crate::v2::config_cached::<Cfg>().unwrap();
        assert!(
            !Rc::ptr_eq(&a, &c),
            "a configuration set again is a new one"
        );
        testing::set_config(serde_json::json!({ "n": 2 }));
        assert_eq!(crate::v2::config_cached::<Cfg>().unwrap().n, 2);
        testing::reset();
        assert!(
            crate::v2::config_cached::<Cfg>().is_err(),
            "`{{}}` (number 0) is not the configuration cached before the reset"
        );
    }
}
