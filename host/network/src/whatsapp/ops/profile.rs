//! The account's own profile through the crate's `profile()` feature: the
//! push name (a `<presence name>` and the `setting_pushName` app-state
//! mutation), the about text (the `status` IQ) and the profile picture
//! (the `w:profile:picture` IQ, with a 640 × 640 JPEG made from whatever
//! image was given, as WhatsApp's clients crop and scale it). Reading the
//! profile asks the server for the about text and picture as for any
//! contact.

use std::slice;

use async_trait::async_trait;
use whatsapp_rust::features::ProfileError;

use crate::NetworkError;
use crate::contacts::ContactOps;
use crate::domain::jid::Jid;
use crate::profile::{OwnProfile, ProfileOps};
use crate::whatsapp::map::iq_errors::iq_error;
use crate::whatsapp::session::WaSession;

/// The side of the square JPEG a profile picture is sent as.
const PICTURE_SIDE: u32 = 640;

/// The JPEG quality of a sent profile picture.
const PICTURE_QUALITY: u8 = 85;

/// The error of a profile change (`what`).
fn profile_error(what: &str, e: &ProfileError) -> NetworkError {
    match e {
        ProfileError::Iq(e) => iq_error(what, e),
        ProfileError::InvalidArgument(why) => {
            NetworkError::Rejected(format!("{what} was not sent: {why}"))
        }
        other => NetworkError::Failed(format!("{what} failed: {other}")),
    }
}

/// `image` (any format the `image` crate reads) as WhatsApp takes a
/// profile picture: the centre square, at most [`PICTURE_SIDE`] on a side,
/// as a JPEG.
pub(crate) fn profile_jpeg(image: &[u8]) -> Result<Vec<u8>, String> {
    let picture = image::load_from_memory(image)
        .map_err(|e| format!("is not an image this gateway can read (JPEG, PNG, WebP): {e}"))?;
    let side = picture.width().min(picture.height());
    if side == 0 {
        return Err("is an empty image".into());
    }
    let x = (picture.width() - side) / 2;
    let y = (picture.height() - side) / 2;
    let square = picture.crop_imm(x, y, side, side);
    let sized = if side > PICTURE_SIDE {
        square.resize_exact(
            PICTURE_SIDE,
            PICTURE_SIDE,
            image::imageops::FilterType::Lanczos3,
        )
    } else {
        square
    };
    let mut out = Vec::new();
    let encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, PICTURE_QUALITY);
    sized
        .to_rgb8()
        .write_with_encoder(encoder)
        .map_err(|e| format!("could not be made a JPEG: {e}"))?;
    Ok(out)
}

#[async_trait]
impl ProfileOps for WaSession {
    async fn own_profile(&self) -> Result<OwnProfile, NetworkError> {
        let client = self.logged_in().await?;
        let pn = client.pn().ok_or(NetworkError::NotConnected)?;
        let jid = Jid::parse(&pn.to_non_ad_string()).map_err(|e| {
            NetworkError::Failed(format!("the account's own JID is not valid: {e}"))
        })?;
        let push_name = Some(client.push_name()).filter(|n| !n.is_empty());
        let about = self
            .user_info(slice::from_ref(&jid))
            .await?
            .into_iter()
            .next()
            .and_then(|u| u.status)
            .filter(|s| !s.is_empty());
        let picture = self.profile_picture(&jid).await?;
        Ok(OwnProfile {
            jid: jid.to_string(),
            push_name,
            about,
            picture,
        })
    }

    async fn set_push_name(&self, name: &str) -> Result<(), NetworkError> {
        let client = self.logged_in().await?;
        client
            .profile()
            .set_push_name(name)
            .await
            .map_err(|e| profile_error("the push name change", &e))
    }

    async fn set_about(&self, about: &str) -> Result<(), NetworkError> {
        let client = self.logged_in().await?;
        client
            .profile()
            .set_status_text(about)
            .await
            .map_err(|e| profile_error("the about text change", &e))
    }

    async fn set_picture(&self, image: Vec<u8>) -> Result<Option<String>, NetworkError> {
        let client = self.logged_in().await?;
        let jpeg = tokio::task::spawn_blocking(move || profile_jpeg(&image))
            .await
            .map_err(|e| NetworkError::Failed(format!("the picture could not be prepared: {e}")))?
            .map_err(|why| NetworkError::Rejected(format!("the picture {why}")))?;
        let answer = client
            .profile()
            .set_profile_picture(jpeg)
            .await
            .map_err(|e| profile_error("the profile picture change", &e))?;
        Ok(Some(answer.id).filter(|id| !id.is_empty()))
    }

    async fn remove_picture(&self) -> Result<(), NetworkError> {
        let client = self.logged_in().await?;
        client
            .profile()
            .remove_profile_picture()
            .await
            .map(|_| ())
            .map_err(|e| profile_error("the profile picture removal", &e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(width: u32, height: u32) -> Vec<u8> {
        let picture =
            image::RgbImage::from_fn(width, height, |x, _| image::Rgb([(x % 256) as u8, 40, 200]));
        let mut out = Vec::new();
        picture
            .write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
            .unwrap();
        out
    }

    #[test]
    fn a_wide_picture_becomes_its_centre_square_as_a_640_pixel_jpeg() {
        let jpeg = profile_jpeg(&png(1600, 900)).unwrap();
        assert_eq!(&jpeg[..2], &[0xFF, 0xD8], "a JPEG");
        let back = image::load_from_memory(&jpeg).unwrap();
        assert_eq!((back.width(), back.height()), (640, 640));
    }

    #[test]
    fn a_small_picture_keeps_its_size_and_what_is_not_an_image_is_refused() {
        let jpeg = profile_jpeg(&png(120, 200)).unwrap();
        let back = image::load_from_memory(&jpeg).unwrap();
        assert_eq!((back.width(), back.height()), (120, 120));
        let err = profile_jpeg(b"not a picture").unwrap_err();
        assert!(err.contains("is not an image"), "{err}");
    }
}
