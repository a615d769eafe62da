//! The stored contact directory's record and its pure rules: how an
//! observation from the event stream merges into what is stored, and how the
//! `q` filter of `GET /sessions/{id}/contacts` matches.

use serde::{Deserialize, Serialize};

/// Where a stored contact's latest change came from (the spec's source values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ContactSource {
    /// A full app-state sync (after pairing, or a snapshot resync).
    AppstateSync,
    /// An incremental app-state mutation.
    Appstate,
    /// A contacts update notification pushed by the server (`contact_update`).
    Notification,
    /// A push-name update (`push_name_update`).
    PushName,
    /// An inbound message that surfaced the sender's phone and push name.
    Message,
}

impl ContactSource {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AppstateSync => "appstate_sync",
            Self::Appstate => "appstate",
            Self::Notification => "notification",
            Self::PushName => "push_name",
            Self::Message => "message",
        }
    }
}

/// One contact of a session's directory, as `GET /sessions/{id}/contacts` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct StoredContact {
    /// The user JID.
    pub jid: String,
    /// Phone digits, no JID suffix.
    pub phone: String,
    /// The alternate identifier JID (`<id>@lid`), once known.
    pub lid_jid: Option<String>,
    /// The saved address-book name.
    pub full_name: Option<String>,
    /// The saved first name.
    pub first_name: Option<String>,
    /// The name the contact set for itself.
    pub push_name: Option<String>,
    /// The verified business name.
    pub business_name: Option<String>,
    /// The source of the latest change.
    pub source: ContactSource,
    /// When the latest change was stored, `YYYY-MM-DD HH:MM:SS` (UTC).
    pub updated_at: String,
}

/// A change to one field: leave it, or set it (`None` clears it).
pub type FieldChange = Option<Option<String>>;

/// What one event taught about one contact. Fields left `None` are not
/// touched; `Some(None)` clears a field the source is authoritative for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Observation {
    /// The user JID (canonical form).
    pub jid: String,
    /// Phone digits.
    pub phone: String,
    /// A newly learned `<id>@lid`; a known one is never cleared.
    pub lid_jid: Option<String>,
    /// The address-book full name.
    pub full_name: FieldChange,
    /// The address-book first name.
    pub first_name: FieldChange,
    /// The push name.
    pub push_name: FieldChange,
    /// The business name.
    pub business_name: FieldChange,
}

impl Observation {
    /// A blank observation of `jid` (phone digits `phone`).
    pub fn of(jid: impl Into<String>, phone: impl Into<String>) -> Self {
        Self {
            jid: jid.into(),
            phone: phone.into(),
            ..Self::default()
        }
    }
}

/// Merges `obs` into `current` (or a new record). Returns the record to store,
/// or `None` when nothing would change: an unchanged contact keeps its source
/// and `updated_at`.
pub fn merge(
    current: Option<&StoredContact>,
    obs: &Observation,
    source: ContactSource,
    now: &str,
) -> Option<StoredContact> {
    let mut next = current.cloned().unwrap_or_else(|| StoredContact {
        jid: obs.jid.clone(),
        phone: obs.phone.clone(),
        lid_jid: None,
        full_name: None,
        first_name: None,
        push_name: None,
        business_name: None,
        source,
        updated_at: now.to_owned(),
    });
    let before = current.cloned();
    if let Some(lid) = &obs.lid_jid {
        next.lid_jid = Some(lid.clone());
    }
    let apply = |field: &mut Option<String>, change: &FieldChange| {
        if let Some(v) = change {
            *field = v.clone().filter(|s| !s.trim().is_empty());
        }
    };
    apply(&mut next.full_name, &obs.full_name);
    apply(&mut next.first_name, &obs.first_name);
    apply(&mut next.push_name, &obs.push_name);
    apply(&mut next.business_name, &obs.business_name);
    if let Some(before) = before {
        let same = before.lid_jid == next.lid_jid
            && before.full_name == next.full_name
            && before.first_name == next.first_name
            && before.push_name == next.push_name
            && before.business_name == next.business_name;
        // A full sync re-confirms every entry: it is recorded even when unchanged.
        if same && source != ContactSource::AppstateSync {
            return None;
        }
    }
    next.source = source;
    next.updated_at = now.to_owned();
    Some(next)
}

/// Whether `c` matches the `q` filter: a case-insensitive substring of
/// full_name, first_name, push_name, phone or business_name. An empty `q`
/// matches everything.
pub fn matches(c: &StoredContact, q: &str) -> bool {
    if q.is_empty() {
        return true;
    }
    let needle = q.to_lowercase();
    [
        c.full_name.as_deref(),
        c.first_name.as_deref(),
        c.push_name.as_deref(),
        Some(c.phone.as_str()),
        c.business_name.as_deref(),
    ]
    .into_iter()
    .flatten()
    .any(|field| field.to_lowercase().contains(&needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    const T1: &str = "2026-01-01 00:00:00";
    const T2: &str = "2026-01-02 00:00:00";

    fn obs() -> Observation {
        Observation::of("15550001111@s.whatsapp.net", "15550001111")
    }

    #[test]
    fn a_first_observation_creates_the_contact_with_its_source() {
        let mut o = obs();
        o.push_name = Some(Some("Ann".into()));
        let c = merge(None, &o, ContactSource::PushName, T1).unwrap();
        assert_eq!(c.push_name.as_deref(), Some("Ann"));
        assert_eq!(c.full_name, None);
        assert_eq!(c.source, ContactSource::PushName);
        assert_eq!(c.updated_at, T1);
    }

    #[test]
    fn untouched_fields_are_kept_and_a_known_lid_is_never_cleared() {
        let mut first = obs();
        first.full_name = Some(Some("Ann Smith".into()));
        first.lid_jid = Some("777@lid".into());
        let c = merge(None, &first, ContactSource::AppstateSync, T1).unwrap();
        let mut second = obs();
        second.push_name = Some(Some("annie".into()));
        let c = merge(Some(&c), &second, ContactSource::Message, T2).unwrap();
        assert_eq!(c.full_name.as_deref(), Some("Ann Smith"));
        assert_eq!(c.push_name.as_deref(), Some("annie"));
        assert_eq!(c.lid_jid.as_deref(), Some("777@lid"));
        assert_eq!(c.source, ContactSource::Message);
        assert_eq!(c.updated_at, T2);
    }

    #[test]
    fn an_authoritative_null_clears_a_field_and_blank_is_null() {
        let mut first = obs();
        first.full_name = Some(Some("Ann".into()));
        let c = merge(None, &first, ContactSource::Appstate, T1).unwrap();
        let mut second = obs();
        second.full_name = Some(None);
        second.first_name = Some(Some("  ".into()));
        let c = merge(Some(&c), &second, ContactSource::Notification, T2).unwrap();
        assert_eq!(c.full_name, None);
        assert_eq!(c.first_name, None);
    }

    #[test]
    fn an_observation_that_changes_nothing_is_not_stored_except_by_a_full_sync() {
        let mut o = obs();
        o.push_name = Some(Some("Ann".into()));
        let c = merge(None, &o, ContactSource::PushName, T1).unwrap();
        assert!(merge(Some(&c), &o, ContactSource::Message, T2).is_none());
        let again = merge(Some(&c), &o, ContactSource::AppstateSync, T2).unwrap();
        assert_eq!(again.source, ContactSource::AppstateSync);
    }

    #[test]
    fn the_filter_is_a_case_insensitive_substring_of_five_fields() {
        let c = StoredContact {
            jid: "15550001111@s.whatsapp.net".into(),
            phone: "15550001111".into(),
            lid_jid: Some("777@lid".into()),
            full_name: Some("Ann Smith".into()),
            first_name: Some("Ann".into()),
            push_name: Some("Annie ☀".into()),
            business_name: Some("ACME Bakery".into()),
            source: ContactSource::Appstate,
            updated_at: T1.into(),
        };
        for q in ["", "smith", "ANN", "annie ☀", "0001111", "bakery"] {
            assert!(matches(&c, q), "{q}");
        }
        for q in ["777", "whatsapp", "bob"] {
            assert!(!matches(&c, q), "{q} is not a searched field");
        }
    }

    #[test]
    fn source_spelling_matches_serde() {
        for s in [
            ContactSource::AppstateSync,
            ContactSource::Appstate,
            ContactSource::Notification,
            ContactSource::PushName,
            ContactSource::Message,
        ] {
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
    }
}
