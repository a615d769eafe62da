//! The account's own profile: read from the network, changed through it;
//! a new push name is kept on the session's account too, so the session
//! shows it as it shows the one learned at login.

use super::{SessionError, Sessions};
use crate::network::profile::{
    MAX_ABOUT_CHARS, MAX_PICTURE_BYTES, MAX_PUSH_NAME_CHARS, OwnProfile,
};

impl Sessions {
    /// The account's profile as the network tells it.
    pub async fn own_profile(&self, id: &str) -> Result<OwnProfile, SessionError> {
        let (client, _) = self.sender(id)?;
        Ok(client.own_profile().await?)
    }

    /// Sets the name others see: 1 to 25 characters, not blank.
    pub async fn set_push_name(&self, id: &str, name: &str) -> Result<(), SessionError> {
        let name = name.trim();
        if name.is_empty() || name.chars().count() > MAX_PUSH_NAME_CHARS {
            return Err(SessionError::Invalid {
                field: "name",
                message: format!("must be 1 to {MAX_PUSH_NAME_CHARS} characters, not blank"),
            });
        }
        let (client, _) = self.sender(id)?;
        client.set_push_name(name).await?;
        self.modify(id, |r| {
            if let Some(a) = r.account.as_mut() {
                a.push_name = Some(name.to_owned());
            }
        })?;
        Ok(())
    }

    /// Sets the about text (at most 139 characters; empty clears it).
    pub async fn set_about(&self, id: &str, about: &str) -> Result<(), SessionError> {
        if about.chars().count() > MAX_ABOUT_CHARS {
            return Err(SessionError::Invalid {
                field: "about",
                message: format!("is longer than {MAX_ABOUT_CHARS} characters"),
            });
        }
        let (client, _) = self.sender(id)?;
        Ok(client.set_about(about).await?)
    }

    /// Sets the profile picture from an image of at most 10 MiB; the new
    /// picture's id when the network gives one.
    pub async fn set_picture(
        &self,
        id: &str,
        image: Vec<u8>,
    ) -> Result<Option<String>, SessionError> {
        if image.is_empty() || image.len() > MAX_PICTURE_BYTES {
            return Err(SessionError::Invalid {
                field: "data",
                message: format!(
                    "must be an image of 1 byte to {} MiB",
                    MAX_PICTURE_BYTES >> 20
                ),
            });
        }
        let (client, _) = self.sender(id)?;
        Ok(client.set_picture(image).await?)
    }

    /// Removes the profile picture.
    pub async fn remove_picture(&self, id: &str) -> Result<(), SessionError> {
        let (client, _) = self.sender(id)?;
        Ok(client.remove_picture().await?)
    }
}
