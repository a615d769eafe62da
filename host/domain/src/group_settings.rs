//! The three group settings (`membership_approval_mode`, `member_add_mode`,
//! `member_link_mode`) with the spec's spelling, and a partial update that
//! reports what it changed.

use serde::{Deserialize, Serialize};

/// Gives a settings enum its API spelling and a parse from a string whose
/// error lists the allowed values (serde's own enum errors on a non-string
/// read as malformed JSON).
macro_rules! setting_values {
    ($t:ident { $($v:ident = $s:literal),+ }) => {
        impl $t {
            /// The API spelling.
            pub fn as_str(self) -> &'static str {
                match self { $($t::$v => $s),+ }
            }
        }

        impl TryFrom<String> for $t {
            type Error = String;

            fn try_from(s: String) -> Result<Self, String> {
                match s.as_str() {
                    $($s => Ok($t::$v),)+
                    _ => Err(format!("must be one of {}, not `{s}`", [$($s),+].join(", "))),
                }
            }
        }
    };
}

/// Whether join requests need an admin's approval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case", try_from = "String")]
pub enum MembershipApprovalMode {
    /// Anyone with the invite link joins at once.
    #[default]
    Off,
    /// Joining by link leaves a request for the admins.
    On,
}

/// Who can add participants.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case", try_from = "String")]
pub enum MemberAddMode {
    /// Only admins.
    #[default]
    AdminAdd,
    /// Every member.
    AllMemberAdd,
}

/// Who can read and reset the invite link.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case", try_from = "String")]
pub enum MemberLinkMode {
    /// Only admins.
    #[default]
    AdminLink,
    /// Every member.
    AllMemberLink,
}

setting_values!(MembershipApprovalMode { Off = "off", On = "on" });
setting_values!(MemberAddMode { AdminAdd = "admin_add", AllMemberAdd = "all_member_add" });
setting_values!(MemberLinkMode { AdminLink = "admin_link", AllMemberLink = "all_member_link" });

/// The three settings of a group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct GroupSettings {
    /// Whether join requests need approval.
    pub membership_approval_mode: MembershipApprovalMode,
    /// Who can add participants.
    pub member_add_mode: MemberAddMode,
    /// Who can read and reset the invite link.
    pub member_link_mode: MemberLinkMode,
}

/// A change of settings: only the fields that are `Some` change.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct SettingsUpdate {
    /// New approval mode.
    pub membership_approval_mode: Option<MembershipApprovalMode>,
    /// New add mode.
    pub member_add_mode: Option<MemberAddMode>,
    /// New link mode.
    pub member_link_mode: Option<MemberLinkMode>,
}

impl GroupSettings {
    /// Applies `update` and returns what actually changed, as the JSON fields
    /// of a `group_update` event (empty when nothing changed).
    pub fn apply(&mut self, update: &SettingsUpdate) -> serde_json::Map<String, serde_json::Value> {
        let before = *self;
        if let Some(v) = update.membership_approval_mode {
            self.membership_approval_mode = v;
        }
        if let Some(v) = update.member_add_mode {
            self.member_add_mode = v;
        }
        if let Some(v) = update.member_link_mode {
            self.member_link_mode = v;
        }
        let (old, new) = (to_map(&before), to_map(self));
        new.into_iter()
            .filter(|(k, v)| old.get(k) != Some(v))
            .collect()
    }
}

fn to_map(settings: &GroupSettings) -> serde_json::Map<String, serde_json::Value> {
    match serde_json::to_value(settings) {
        Ok(serde_json::Value::Object(m)) => m,
        _ => serde_json::Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_settings_update_changes_only_the_given_fields_and_reports_real_changes() {
        let mut s = GroupSettings::default();
        let changed = s.apply(&SettingsUpdate {
            member_add_mode: Some(MemberAddMode::AllMemberAdd),
            membership_approval_mode: Some(MembershipApprovalMode::Off),
            ..SettingsUpdate::default()
        });
        assert_eq!(s.member_add_mode, MemberAddMode::AllMemberAdd);
        assert_eq!(s.member_link_mode, MemberLinkMode::AdminLink);
        assert_eq!(changed.len(), 1, "approval was already off: {changed:?}");
        assert_eq!(changed["member_add_mode"], "all_member_add");
        assert!(s.apply(&SettingsUpdate::default()).is_empty());
    }

    #[test]
    fn settings_use_the_spec_spelling_and_name_the_allowed_values() {
        let s = serde_json::to_value(GroupSettings::default()).unwrap();
        assert_eq!(
            s,
            serde_json::json!({
                "membership_approval_mode": "off",
                "member_add_mode": "admin_add",
                "member_link_mode": "admin_link",
            })
        );
        let bad = serde_json::from_str::<SettingsUpdate>(r#"{"member_add_mode":"everyone"}"#);
        let msg = bad.unwrap_err().to_string();
        assert!(msg.contains("admin_add, all_member_add"), "{msg}");
        let bad = serde_json::from_str::<SettingsUpdate>(r#"{"member_link_mode":true}"#);
        assert!(
            bad.unwrap_err().is_data(),
            "a wrong type is not malformed JSON"
        );
        let ok: SettingsUpdate =
            serde_json::from_str(r#"{"member_link_mode":"all_member_link"}"#).unwrap();
        assert_eq!(
            ok.member_link_mode.map(MemberLinkMode::as_str),
            Some("all_member_link")
        );
    }
}
