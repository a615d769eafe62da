//! Each chat's disappearing-messages timer, as the `whatsapp` backend last
//! saw it on the network (a message's `expiration`, a chat's or group's
//! timer change), so its sends carry the timer the chat has: a message sent
//! without it into a disappearing chat never disappears.

use redb::ReadableTable;

use crate::tables::WA_CHAT_TIMERS;
use crate::{Store, StoreResult};

/// What the network said of one chat's timer, and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatTimer {
    /// The chat's JID.
    pub chat: String,
    /// The timer in seconds; `0`: the chat has none.
    pub secs: u32,
    /// When the network said so (the message's or notification's time,
    /// Unix seconds).
    pub at: i64,
}

impl Store {
    /// Keeps what these say of their chats' timers, each only when it is
    /// newer than what is kept (a message delivered late, a redelivery,
    /// never turns back a later change) and changes the timer (the messages
    /// of a disappearing chat, which all carry its timer, cost no write).
    pub fn put_wa_chat_timers(&self, session_id: &str, timers: &[ChatTimer]) -> StoreResult<()> {
        let news = |kept: Option<(u32, i64)>, t: &ChatTimer| match kept {
            Some((secs, at)) => secs != t.secs && t.at >= at,
            None => t.secs != 0,
        };
        let any = self.read(|tx| {
            let table = tx.open_table(WA_CHAT_TIMERS)?;
            for t in timers {
                let kept = table.get((session_id, t.chat.as_str()))?.map(|v| v.value());
                if news(kept, t) {
                    return Ok(true);
                }
            }
            Ok(false)
        })?;
        if !any {
            return Ok(());
        }
        self.write(|tx| {
            let mut table = tx.open_table(WA_CHAT_TIMERS)?;
            for t in timers {
                let kept = table.get((session_id, t.chat.as_str()))?.map(|v| v.value());
                if news(kept, t) {
                    table.insert((session_id, t.chat.as_str()), (t.secs, t.at))?;
                }
            }
            Ok(())
        })
    }

    /// The timer of chat `chat`, in seconds; `None`: it has none.
    pub fn wa_chat_timer(&self, session_id: &str, chat: &str) -> StoreResult<Option<u32>> {
        self.read(|tx| {
            let t = tx.open_table(WA_CHAT_TIMERS)?;
            Ok(t.get((session_id, chat))?
                .map(|v| v.value().0)
                .filter(|secs| *secs > 0))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::ChatTimer;
    use crate::Store;

    fn said(chat: &str, secs: u32, at: i64) -> ChatTimer {
        ChatTimer {
            chat: chat.into(),
            secs,
            at,
        }
    }

    #[test]
    fn a_late_word_on_a_chats_timer_never_turns_back_a_later_change() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let chat = "15550001111@s.whatsapp.net";
        store
            .put_wa_chat_timers("s", &[said(chat, 86_400, 100)])
            .unwrap();
        store
            .put_wa_chat_timers("s", &[said(chat, 0, 200)])
            .unwrap();
        store
            .put_wa_chat_timers("s", &[said(chat, 86_400, 150)])
            .unwrap();
        assert_eq!(
            store.wa_chat_timer("s", chat).unwrap(),
            None,
            "off at 200 stands"
        );
        store
            .put_wa_chat_timers("s", &[said(chat, 604_800, 300)])
            .unwrap();
        assert_eq!(store.wa_chat_timer("s", chat).unwrap(), Some(604_800));
    }

    #[test]
    fn a_chat_timer_is_set_changed_and_turned_off_and_goes_with_its_session() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let chat = "15550001111@s.whatsapp.net".to_owned();
        assert_eq!(store.wa_chat_timer("s", &chat).unwrap(), None);
        store
            .put_wa_chat_timers("s", &[said(&chat, 86_400, 1)])
            .unwrap();
        assert_eq!(store.wa_chat_timer("s", &chat).unwrap(), Some(86_400));
        assert_eq!(store.wa_chat_timer("other", &chat).unwrap(), None);
        store
            .put_wa_chat_timers("s", &[said(&chat, 604_800, 2)])
            .unwrap();
        assert_eq!(store.wa_chat_timer("s", &chat).unwrap(), Some(604_800));
        store.put_wa_chat_timers("s", &[said(&chat, 0, 3)]).unwrap();
        assert_eq!(store.wa_chat_timer("s", &chat).unwrap(), None);

        store
            .put_wa_chat_timers("s", &[said(&chat, 86_400, 4)])
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
