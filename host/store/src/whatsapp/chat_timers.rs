//! Each chat's disappearing-messages timer, as the `whatsapp` backend last
//! saw it on the network (a message's `expiration`, a chat's or group's
//! timer change), so its sends carry the timer the chat has: a message sent
//! without it into a disappearing chat never disappears.

use crate::tables::WA_CHAT_TIMERS;
use crate::{Store, StoreResult};

impl Store {
    /// Sets these chats' timers, in seconds (`0`: the chat has none). Reads
    /// first and writes only what changes, so the messages of a
    /// disappearing chat, which all carry its timer, cost no write.
    pub fn put_wa_chat_timers(
        &self,
        session_id: &str,
        timers: &[(String, u32)],
    ) -> StoreResult<()> {
        let changed: Vec<(String, u32)> = self.read(|tx| {
            let t = tx.open_table(WA_CHAT_TIMERS)?;
            let mut changed = Vec::new();
            for (chat, secs) in timers {
                let now = t.get((session_id, chat.as_str()))?.map(|v| v.value());
                if now.unwrap_or(0) != *secs {
                    changed.push((chat.clone(), *secs));
                }
            }
            Ok(changed)
        })?;
        if changed.is_empty() {
            return Ok(());
        }
        self.write(|tx| {
            let mut t = tx.open_table(WA_CHAT_TIMERS)?;
            for (chat, secs) in &changed {
                if *secs == 0 {
                    t.remove((session_id, chat.as_str()))?;
                } else {
                    t.insert((session_id, chat.as_str()), *secs)?;
                }
            }
            Ok(())
        })
    }

    /// The timer of chat `chat`, in seconds; `None`: it has none.
    pub fn wa_chat_timer(&self, session_id: &str, chat: &str) -> StoreResult<Option<u32>> {
        self.read(|tx| {
            let t = tx.open_table(WA_CHAT_TIMERS)?;
            Ok(t.get((session_id, chat))?.map(|v| v.value()))
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::Store;

    #[test]
    fn a_chat_timer_is_set_changed_and_turned_off_and_goes_with_its_session() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let chat = "15550001111@s.whatsapp.net".to_owned();
        assert_eq!(store.wa_chat_timer("s", &chat).unwrap(), None);
        store
            .put_wa_chat_timers("s", &[(chat.clone(), 86_400)])
            .unwrap();
        assert_eq!(store.wa_chat_timer("s", &chat).unwrap(), Some(86_400));
        assert_eq!(store.wa_chat_timer("other", &chat).unwrap(), None);
        store
            .put_wa_chat_timers("s", &[(chat.clone(), 604_800)])
            .unwrap();
        assert_eq!(store.wa_chat_timer("s", &chat).unwrap(), Some(604_800));
        store.put_wa_chat_timers("s", &[(chat.clone(), 0)]).unwrap();
        assert_eq!(store.wa_chat_timer("s", &chat).unwrap(), None);

        store
            .put_wa_chat_timers("s", &[(chat.clone(), 86_400)])
            .unwrap();
        store.wipe_whatsapp_state("s").unwrap();
        assert_eq!(
            store.wa_chat_timer("s", &chat).unwrap(),
            Some(86_400),
            "a logout keeps it"
        );
        let gone = crate::whatsapp::delete_session_whatsapp;
        store.write(|tx| gone(tx, "s")).unwrap();
        assert_eq!(store.wa_chat_timer("s", &chat).unwrap(), None);
    }
}
