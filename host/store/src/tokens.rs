//! API tokens: each record by id, and its id by the hash of its secret (the
//! secret itself is never written).

use redb::ReadableTable;

use super::tables::{TOKEN_HASHES, TOKENS};
use super::{Store, StoreResult, decode, encode};
use crate::domain::token::TokenRecord;

impl Store {
    /// Stores a new token (or replaces one of the same id, moving its hash
    /// when it changed: a rotation).
    pub fn put_token(&self, token: &TokenRecord) -> StoreResult<()> {
        let bytes = encode(token)?;
        self.write(|tx| {
            let mut tokens = tx.open_table(TOKENS)?;
            let mut hashes = tx.open_table(TOKEN_HASHES)?;
            let old = tokens
                .get(token.id.as_str())?
                .map(|v| decode::<TokenRecord>(v.value()))
                .transpose()?;
            if let Some(old) = old
                && old.hash != token.hash
            {
                hashes.remove(old.hash.as_str())?;
            }
            tokens.insert(token.id.as_str(), bytes.as_slice())?;
            hashes.insert(token.hash.as_str(), token.id.as_str())?;
            Ok(())
        })
    }

    /// Every token, in no particular order.
    pub fn list_tokens(&self) -> StoreResult<Vec<TokenRecord>> {
        self.read(|tx| {
            let t = tx.open_table(TOKENS)?;
            let mut out = Vec::new();
            for row in t.iter()? {
                let (_, v) = row?;
                out.push(decode(v.value())?);
            }
            Ok(out)
        })
    }

    /// The token whose secret hashes to `hash`.
    pub fn token_by_hash(&self, hash: &str) -> StoreResult<Option<TokenRecord>> {
        self.read(|tx| {
            let hashes = tx.open_table(TOKEN_HASHES)?;
            let Some(id) = hashes.get(hash)?.map(|v| v.value().to_owned()) else {
                return Ok(None);
            };
            let tokens = tx.open_table(TOKENS)?;
            tokens
                .get(id.as_str())?
                .map(|v| decode(v.value()))
                .transpose()
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::Store;
    use crate::domain::token::{AllSessions, Scope, SessionSet, TokenRecord};

    #[test]
    fn a_token_is_found_by_its_hash_and_a_rotation_moves_the_hash() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let mut t = TokenRecord {
            id: "id1".into(),
            name: "crm".into(),
            prefix: "sbt_abcdef".into(),
            hash: "aa".into(),
            sessions: SessionSet::All(AllSessions::Star),
            scopes: vec![Scope::Read],
            created_at: 1,
            expires_at: None,
            last_used_at: None,
            revoked_at: None,
            rate_per_minute: None,
        };
        store.put_token(&t).unwrap();
        assert_eq!(store.token_by_hash("aa").unwrap().unwrap().name, "crm");
        t.hash = "bb".into();
        store.put_token(&t).unwrap();
        assert!(store.token_by_hash("aa").unwrap().is_none());
        assert_eq!(store.token_by_hash("bb").unwrap().unwrap().id, "id1");
        assert_eq!(store.list_tokens().unwrap().len(), 1);
    }
}
