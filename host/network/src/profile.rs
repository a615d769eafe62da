//! The account's own profile a network serves for a session: its push name
//! (the name others see), its about text and its profile picture, read
//! and changed.

use async_trait::async_trait;
use serde::Serialize;

use super::NetworkError;
use super::contacts::ProfilePicture;

/// Longest push name WhatsApp's clients let a user type, in characters.
pub const MAX_PUSH_NAME_CHARS: usize = 25;

/// Longest about text WhatsApp's clients take, in characters.
pub const MAX_ABOUT_CHARS: usize = 139;

/// Largest picture a profile takes, in bytes (before it is made a
/// 640 × 640 JPEG).
pub const MAX_PICTURE_BYTES: usize = 10 * 1024 * 1024;

/// The account's own profile as the network tells it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OwnProfile {
    /// The account's JID.
    pub jid: String,
    /// The name others see; `null` when none is set.
    pub push_name: Option<String>,
    /// The about text; `null` when none is set (or the network does not
    /// tell).
    pub about: Option<String>,
    /// The profile picture; `null` without one.
    pub picture: Option<ProfilePicture>,
}

/// The own-profile operations of one session (each needs a live
/// connection).
#[async_trait]
pub trait ProfileOps: Send + Sync {
    /// The account's profile.
    async fn own_profile(&self) -> Result<OwnProfile, NetworkError>;

    /// Sets the name others see (1 to [`MAX_PUSH_NAME_CHARS`] characters;
    /// the caller checks).
    async fn set_push_name(&self, name: &str) -> Result<(), NetworkError>;

    /// Sets the about text (up to [`MAX_ABOUT_CHARS`]; empty clears it).
    async fn set_about(&self, about: &str) -> Result<(), NetworkError>;

    /// Sets the profile picture from an image (JPEG, PNG or WebP; the
    /// backend makes it what the network takes); returns the new
    /// picture's id when the network gives one.
    async fn set_picture(&self, image: Vec<u8>) -> Result<Option<String>, NetworkError>;

    /// Removes the profile picture.
    async fn remove_picture(&self) -> Result<(), NetworkError>;
}
