//! What WhatsApp's clients send with a media besides its bytes: an image's
//! size and a small JPEG thumbnail (the preview a recipient sees before the
//! download), a video's length and size, an audio's length (a voice note
//! without it shows 0:00). Read from the plain bytes on a blocking thread;
//! what cannot be read (an unknown container, a damaged file) is left out,
//! never a failed send: the media itself is what the recipient asked for.

use std::io::{BufReader, Read, Seek, SeekFrom};

use whatsapp_rust::download::MediaType;

/// Longest side of an image's thumbnail, in pixels.
pub const THUMBNAIL_SIDE: u32 = 72;
/// The thumbnail's JPEG quality.
const THUMBNAIL_QUALITY: u8 = 60;
/// Most memory an image may take decoded for its thumbnail: a larger one
/// goes with its size alone.
const DECODE_LIMIT: u64 = 128 << 20;

/// What was read of a media.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// Width in pixels (images, videos).
    pub width: Option<u32>,
    /// Height in pixels (images, videos).
    pub height: Option<u32>,
    /// Length in whole seconds (videos, audio).
    pub seconds: Option<u32>,
    /// A JPEG thumbnail (images).
    pub thumbnail: Option<Vec<u8>>,
}

/// Reads the facts of media of `kind` from its plain bytes in `file`. A
/// parser that panics on a crafted file is caught here too: the media goes
/// without its facts, never with a failed send.
pub fn read<R: Read + Seek>(kind: MediaType, file: &mut R) -> Facts {
    let facts = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match kind {
        MediaType::Image => image(file),
        MediaType::Video => video(file),
        MediaType::Audio => audio(file),
        _ => Ok(Facts::default()),
    }))
    .unwrap_or_else(|_| Err("its parser gave up on it".to_owned()));
    facts.unwrap_or_else(|why| {
        tracing::debug!(?kind, %why, "the media's size or length could not be read; it is sent without");
        Facts::default()
    })
}

/// An image reader over `file` from its start, its format guessed from its bytes.
fn open_image<R: Read + Seek>(
    file: &mut R,
) -> Result<image::ImageReader<BufReader<&mut R>>, String> {
    file.seek(SeekFrom::Start(0)).map_err(|e| e.to_string())?;
    image::ImageReader::new(BufReader::new(file))
        .with_guessed_format()
        .map_err(|e| e.to_string())
}

/// An image's size as it is shown (its EXIF orientation applied: a phone's
/// portrait photo is stored sideways) and a thumbnail the same way up.
fn image<R: Read + Seek>(file: &mut R) -> Result<Facts, String> {
    use image::ImageDecoder as _;
    let mut reader = open_image(file)?;
    let mut limits = image::Limits::default();
    limits.max_alloc = Some(DECODE_LIMIT);
    reader.limits(limits);
    let mut decoder = reader.into_decoder().map_err(|e| e.to_string())?;
    let orientation = decoder
        .orientation()
        .unwrap_or(image::metadata::Orientation::NoTransforms);
    let (stored_width, stored_height) = decoder.dimensions();
    let turned = matches!(
        orientation,
        image::metadata::Orientation::Rotate90
            | image::metadata::Orientation::Rotate270
            | image::metadata::Orientation::Rotate90FlipH
            | image::metadata::Orientation::Rotate270FlipH
    );
    let (width, height) = if turned {
        (stored_height, stored_width)
    } else {
        (stored_width, stored_height)
    };
    let mut facts = Facts {
        width: Some(width),
        height: Some(height),
        ..Facts::default()
    };
    match image::DynamicImage::from_decoder(decoder) {
        Ok(mut decoded) => {
            decoded.apply_orientation(orientation);
            let small = decoded.thumbnail(THUMBNAIL_SIDE, THUMBNAIL_SIDE).to_rgb8();
            let mut jpeg = Vec::new();
            let encoder =
                image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, THUMBNAIL_QUALITY);
            small
                .write_with_encoder(encoder)
                .map_err(|e| e.to_string())?;
            facts.thumbnail = Some(jpeg);
        }
        Err(e) => {
            tracing::debug!(error = %e, "no thumbnail for an image that does not decode within the limit")
        }
    }
    Ok(facts)
}

fn video<R: Read + Seek>(file: &mut R) -> Result<Facts, String> {
    file.seek(SeekFrom::Start(0)).map_err(|e| e.to_string())?;
    let context = mp4parse::read_mp4(&mut BufReader::new(file)).map_err(|e| format!("{e:?}"))?;
    let track = context
        .tracks
        .iter()
        .find(|t| t.track_type == mp4parse::TrackType::Video)
        .ok_or("the file has no video track")?;
    let seconds = match (track.duration, track.timescale) {
        (Some(d), Some(s)) if s.0 > 0 => Some((d.0 / s.0) as u32),
        _ => None,
    };
    // The track header keeps the size as 16.16 fixed point, and the turn
    // the player applies as a matrix: a quarter turn (a phone's portrait
    // video) has no scale on the diagonal, and is shown the other way up.
    let (width, height) = match &track.tkhd {
        Some(h) if h.matrix.a == 0 && h.matrix.d == 0 => {
            (Some(h.height >> 16), Some(h.width >> 16))
        }
        Some(h) => (Some(h.width >> 16), Some(h.height >> 16)),
        None => (None, None),
    };
    Ok(Facts {
        width,
        height,
        seconds,
        thumbnail: None,
    })
}

fn audio<R: Read + Seek>(file: &mut R) -> Result<Facts, String> {
    use lofty::file::AudioFile as _;
    file.seek(SeekFrom::Start(0)).map_err(|e| e.to_string())?;
    let options = lofty::config::ParseOptions::new().read_tags(false);
    let tagged = lofty::probe::Probe::new(BufReader::new(file))
        .options(options)
        .guess_file_type()
        .map_err(|e| e.to_string())?
        .read()
        .map_err(|e| e.to_string())?;
    let length = tagged.properties().duration();
    Ok(Facts {
        seconds: Some(length.as_secs() as u32),
        ..Facts::default()
    })
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::*;

    /// An MP4 box: its size, its type, its body.
    fn mp4_box(kind: &[u8; 4], body: &[u8]) -> Vec<u8> {
        let mut b = ((body.len() + 8) as u32).to_be_bytes().to_vec();
        b.extend_from_slice(kind);
        b.extend_from_slice(body);
        b
    }

    /// A full box: version 0, no flags, then `body`.
    fn full_box(kind: &[u8; 4], body: &[u8]) -> Vec<u8> {
        let mut b = vec![0, 0, 0, 0];
        b.extend_from_slice(body);
        mp4_box(kind, &b)
    }

    /// The smallest MP4 with one video track of `width` × `height` lasting
    /// `seconds` (the boxes a demuxer reads; no samples).
    fn mp4(width: u32, height: u32, seconds: u32) -> Vec<u8> {
        mp4_turned(width, height, seconds, false)
    }

    /// [`mp4`], its track turned a quarter (as a phone records a portrait
    /// video) when `quarter`.
    fn mp4_turned(width: u32, height: u32, seconds: u32, quarter: bool) -> Vec<u8> {
        let be = |v: u32| v.to_be_bytes();
        let unit = 0x0001_0000u32;
        let matrix = if quarter {
            [0, unit, 0, unit.wrapping_neg(), 0, 0, 0, 0, 0x4000_0000]
        } else {
            [unit, 0, 0, 0, unit, 0, 0, 0, 0x4000_0000]
        };
        let identity: Vec<u8> = [unit, 0, 0, 0, unit, 0, 0, 0, 0x4000_0000]
            .iter()
            .flat_map(|v| v.to_be_bytes())
            .collect();
        let track_matrix: Vec<u8> = matrix.iter().flat_map(|v| v.to_be_bytes()).collect();
        let mut mvhd = Vec::new();
        for v in [0, 0, 1000, seconds * 1000, 0x0001_0000] {
            mvhd.extend_from_slice(&be(v));
        }
        mvhd.extend_from_slice(&[1, 0, 0, 0]);
        mvhd.extend_from_slice(&[0; 8]);
        mvhd.extend_from_slice(&identity);
        mvhd.extend_from_slice(&[0; 24]);
        mvhd.extend_from_slice(&be(2));
        let mut tkhd = Vec::new();
        for v in [0, 0, 1, 0, seconds * 1000] {
            tkhd.extend_from_slice(&be(v));
        }
        tkhd.extend_from_slice(&[0; 8]);
        tkhd.extend_from_slice(&[0; 8]);
        tkhd.extend_from_slice(&track_matrix);
        tkhd.extend_from_slice(&be(width << 16));
        tkhd.extend_from_slice(&be(height << 16));
        let mut mdhd = Vec::new();
        for v in [0, 0, 90_000, seconds * 90_000] {
            mdhd.extend_from_slice(&be(v));
        }
        mdhd.extend_from_slice(&[0x55, 0xc4, 0, 0]);
        let mut hdlr = vec![0; 4];
        hdlr.extend_from_slice(b"vide");
        hdlr.extend_from_slice(&[0; 12]);
        hdlr.push(0);
        let empty = |kind: &[u8; 4]| full_box(kind, &be(0));
        let stbl = [
            empty(b"stsd"),
            empty(b"stts"),
            empty(b"stsc"),
            full_box(b"stsz", &[be(0), be(0)].concat()),
            empty(b"stco"),
        ]
        .concat();
        let minf = [
            full_box(b"vmhd", &[0; 8]),
            mp4_box(b"dinf", &full_box(b"dref", &be(0))),
            mp4_box(b"stbl", &stbl),
        ]
        .concat();
        let mdia = [
            full_box(b"mdhd", &mdhd),
            full_box(b"hdlr", &hdlr),
            mp4_box(b"minf", &minf),
        ]
        .concat();
        let trak = [full_box(b"tkhd", &tkhd), mp4_box(b"mdia", &mdia)].concat();
        let moov = [full_box(b"mvhd", &mvhd), mp4_box(b"trak", &trak)].concat();
        let ftyp = mp4_box(b"ftyp", b"isom\0\0\x02\0isomiso2mp41");
        [ftyp, mp4_box(b"moov", &moov)].concat()
    }

    /// A WAV file of `seconds` of 8 kHz mono 8-bit silence.
    fn wav(seconds: u32) -> Vec<u8> {
        let rate = 8_000u32;
        let data = rate * seconds;
        let mut w = b"RIFF".to_vec();
        w.extend_from_slice(&(36 + data).to_le_bytes());
        w.extend_from_slice(b"WAVEfmt ");
        w.extend_from_slice(&16u32.to_le_bytes());
        w.extend_from_slice(&1u16.to_le_bytes());
        w.extend_from_slice(&1u16.to_le_bytes());
        w.extend_from_slice(&rate.to_le_bytes());
        w.extend_from_slice(&rate.to_le_bytes());
        w.extend_from_slice(&1u16.to_le_bytes());
        w.extend_from_slice(&8u16.to_le_bytes());
        w.extend_from_slice(b"data");
        w.extend_from_slice(&data.to_le_bytes());
        w.extend(std::iter::repeat_n(128u8, data as usize));
        w
    }

    #[test]
    fn an_image_gives_its_size_and_a_small_jpeg_thumbnail_of_its_shape() {
        let picture = image::RgbImage::from_fn(400, 200, |x, y| {
            image::Rgb([(x % 256) as u8, (y % 256) as u8, 90])
        });
        let mut png = Vec::new();
        picture
            .write_to(&mut Cursor::new(&mut png), image::ImageFormat::Png)
            .unwrap();
        let facts = read(MediaType::Image, &mut Cursor::new(png));
        assert_eq!((facts.width, facts.height), (Some(400), Some(200)));
        let thumbnail = image::load_from_memory(&facts.thumbnail.unwrap()).unwrap();
        assert_eq!(
            (thumbnail.width(), thumbnail.height()),
            (THUMBNAIL_SIDE, THUMBNAIL_SIDE / 2)
        );
    }

    /// A JPEG of `width` × `height` whose EXIF says to show it turned a
    /// quarter clockwise (orientation 6), as a phone stores a portrait photo.
    fn sideways_jpeg(width: u32, height: u32) -> Vec<u8> {
        let picture = image::RgbImage::from_pixel(width, height, image::Rgb([10, 200, 30]));
        let mut jpeg = Vec::new();
        picture
            .write_to(&mut Cursor::new(&mut jpeg), image::ImageFormat::Jpeg)
            .unwrap();
        // APP1: "Exif\0\0", a big-endian TIFF header, one IFD entry:
        // orientation (0x0112), SHORT, 1 value, 6.
        let mut exif = b"Exif\0\0MM\0\x2a\0\0\0\x08\0\x01".to_vec();
        exif.extend_from_slice(&[0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0, 0, 0, 0, 0]);
        let mut app1 = vec![0xFF, 0xE1];
        app1.extend_from_slice(&((exif.len() + 2) as u16).to_be_bytes());
        app1.extend_from_slice(&exif);
        [&jpeg[..2], &app1[..], &jpeg[2..]].concat()
    }

    #[test]
    fn a_phones_portrait_photo_and_video_are_measured_the_way_up_they_are_shown() {
        let facts = read(MediaType::Image, &mut Cursor::new(sideways_jpeg(80, 40)));
        assert_eq!((facts.width, facts.height), (Some(40), Some(80)));
        let thumbnail = image::load_from_memory(&facts.thumbnail.unwrap()).unwrap();
        assert_eq!(
            (thumbnail.width(), thumbnail.height()),
            (THUMBNAIL_SIDE / 2, THUMBNAIL_SIDE)
        );
        let facts = read(
            MediaType::Video,
            &mut Cursor::new(mp4_turned(1920, 1080, 5, true)),
        );
        assert_eq!((facts.width, facts.height), (Some(1080), Some(1920)));
    }

    #[test]
    fn a_video_gives_its_length_and_size_and_an_audio_its_length() {
        let facts = read(MediaType::Video, &mut Cursor::new(mp4(640, 360, 12)));
        assert_eq!(
            facts,
            Facts {
                width: Some(640),
                height: Some(360),
                seconds: Some(12),
                thumbnail: None,
            }
        );
        let facts = read(MediaType::Audio, &mut Cursor::new(wav(3)));
        assert_eq!(facts.seconds, Some(3));
    }

    #[test]
    fn media_that_cannot_be_read_gives_nothing_rather_than_failing() {
        for kind in [MediaType::Image, MediaType::Video, MediaType::Audio] {
            let facts = read(kind, &mut Cursor::new(b"not a media file at all".to_vec()));
            assert_eq!(facts, Facts::default(), "{kind:?}");
        }
    }
}
