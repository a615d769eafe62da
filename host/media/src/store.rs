//! [`MediaStore`]: streamed writes (hashed and bounded as they go), ranged
//! streamed reads, copies, deletions by key and by prefix, and presigned
//! URLs, over one `object_store` backend.

use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::stream::BoxStream;
use futures_util::{Stream, StreamExt, TryStreamExt};
use object_store::aws::AmazonS3Builder;
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::signer::Signer;
use object_store::{
    Attribute, GetOptions, GetRange, ObjectStore, PutMultipartOptions, WriteMultipart,
};
use sha2::{Digest, Sha256};

use crate::config::{MediaStoreConfig, S3Config};
use crate::domain::storage_fault::StorageFault;
use crate::error::{MediaStoreError, PutError};

/// Size of the parts a streamed write sends (S3's smallest part is 5 MiB);
/// at most [`PUT_CONCURRENCY`] of them are in memory at once.
const PART_BYTES: usize = 5 * 1024 * 1024;
/// Parts of one write in flight at once.
const PUT_CONCURRENCY: usize = 2;

/// Where media bytes live; cheap to clone.
#[derive(Clone)]
pub struct MediaStore {
    inner: Arc<Inner>,
}

struct Inner {
    objects: Arc<dyn ObjectStore>,
    signer: Option<(Arc<dyn Signer>, Duration)>,
    kind: &'static str,
    /// The directory of a local store, for its free space.
    dir: Option<std::path::PathBuf>,
}

impl std::fmt::Debug for MediaStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MediaStore")
            .field("kind", &self.inner.kind)
            .finish()
    }
}

/// What a write stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// Bytes written.
    pub len: u64,
    /// Their SHA-256, lowercase hex.
    pub sha256: String,
}

/// An object being read: its size and the range of it the stream yields.
pub struct Blob {
    /// The whole object's size in bytes.
    pub size: u64,
    /// The bytes `stream` yields (all of them unless a range was asked for).
    pub range: Range<u64>,
    /// The bytes, read as they are sent.
    pub stream: BoxStream<'static, Result<Bytes, std::io::Error>>,
}

/// One object a listing found.
#[derive(Debug, Clone)]
pub struct StoredObject {
    /// Its key.
    pub key: Path,
    /// Its size in bytes.
    pub size: u64,
    /// Unix seconds it was last written.
    pub modified: i64,
}

/// A multipart write that is aborted when it is dropped unfinished: a
/// caller that stops waiting (a timeout, a client gone mid-upload) must
/// not leave an incomplete upload in the bucket or a staging file behind.
struct Pending(Option<WriteMultipart>);

impl Pending {
    fn writer(&mut self) -> &mut WriteMultipart {
        self.0.as_mut().expect("the write is still pending")
    }

    async fn abort(mut self, key: &Path) {
        if let Some(writer) = self.0.take()
            && let Err(e) = writer.abort().await
        {
            tracing::warn!(key = %key, error = %e, "could not abort a failed media write");
        }
    }

    /// Completes the write. One that fails there leaves nothing under the
    /// key: the backend aborts a failed completion, and a local store's
    /// staging file is removed when its upload is dropped.
    async fn finish(mut self) -> object_store::Result<()> {
        match self.0.take() {
            Some(writer) => writer.finish().await.map(|_| ()),
            None => Ok(()),
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Some(writer) = self.0.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(async move {
                if let Err(e) = writer.abort().await {
                    tracing::warn!(error = %e, "could not abort an abandoned media write");
                }
            });
        }
    }
}

impl MediaStore {
    /// Opens the configured backend. A local directory is created when
    /// missing; an S3 bucket is not checked here (the first write says).
    pub fn open(config: &MediaStoreConfig) -> Result<Self, MediaStoreError> {
        match config {
            MediaStoreConfig::Local { dir } => {
                std::fs::create_dir_all(dir).map_err(|e| {
                    MediaStoreError::Open(format!("cannot create {}: {e}", dir.display()))
                })?;
                let fs = LocalFileSystem::new_with_prefix(dir)
                    .map_err(|e| MediaStoreError::Open(e.to_string()))?
                    .with_automatic_cleanup(true);
                let mut store = Self::with(Arc::new(fs), None, "local");
                if let Some(inner) = Arc::get_mut(&mut store.inner) {
                    inner.dir = Some(dir.clone());
                }
                Ok(store)
            }
            MediaStoreConfig::S3(s3) => {
                let bucket = s3_builder(s3)
                    .build()
                    .map_err(|e| MediaStoreError::Open(e.to_string()))?;
                let bucket = Arc::new(bucket);
                let signer = s3
                    .presign_for
                    .map(|d| (bucket.clone() as Arc<dyn Signer>, d));
                Ok(Self::with(bucket, signer, "s3"))
            }
        }
    }

    /// A store over any backend (tests use the in-memory one).
    pub fn from_object_store(objects: Arc<dyn ObjectStore>) -> Self {
        Self::with(objects, None, "custom")
    }

    fn with(
        objects: Arc<dyn ObjectStore>,
        signer: Option<(Arc<dyn Signer>, Duration)>,
        kind: &'static str,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                objects,
                signer,
                kind,
                dir: None,
            }),
        }
    }

    /// `local` or `s3`.
    pub fn kind(&self) -> &'static str {
        self.inner.kind
    }

    /// Bytes still free on a local store's filesystem (`None` for a bucket,
    /// or when it cannot be asked).
    pub fn free_bytes(&self) -> Option<u64> {
        let dir = self.inner.dir.as_deref()?;
        let st = rustix::fs::statvfs(dir).ok()?;
        Some(st.f_bavail.saturating_mul(st.f_frsize))
    }

    /// Refuses a new write while a local store's filesystem has less than
    /// `min_free` bytes free, so an upload does not fill the disk.
    pub fn check_free_space(&self, min_free: u64) -> Result<(), MediaStoreError> {
        match self.free_bytes() {
            Some(free) if free < min_free => Err(MediaStoreError::Storage(
                StorageFault::NoSpace,
                format!(
                    "the media directory has {free} bytes free, under its floor of {min_free} (--min-free-space-mb)"
                ),
            )),
            _ => Ok(()),
        }
    }

    /// Whether reads are answered with presigned URLs.
    pub fn presigns(&self) -> bool {
        self.inner.signer.is_some()
    }

    /// Writes `body` under `key` as it arrives, hashing it on the way, and
    /// stops at the first byte past `limit`. On any failure, and when the
    /// caller stops waiting, the partial upload is aborted, so nothing is
    /// left under the key. `content_type` is kept with the object where the
    /// backend keeps it (S3: what a presigned read answers with).
    pub async fn put_stream<S, E>(
        &self,
        key: &Path,
        body: S,
        limit: u64,
        content_type: Option<&str>,
    ) -> Result<Written, PutError>
    where
        S: Stream<Item = Result<Bytes, E>> + Send,
        E: std::fmt::Display,
    {
        let mut options = PutMultipartOptions::default();
        if let (Some(t), true) = (content_type, self.inner.kind == "s3") {
            options
                .attributes
                .insert(Attribute::ContentType, t.to_owned().into());
        }
        let upload = self.inner.objects.put_multipart_opts(key, options).await?;
        let mut pending = Pending(Some(WriteMultipart::new_with_chunk_size(
            upload, PART_BYTES,
        )));
        let mut hasher = Sha256::new();
        let mut len = 0u64;
        let mut body = std::pin::pin!(body);
        let failure = loop {
            let chunk = match body.next().await {
                None => break None,
                Some(Err(e)) => break Some(PutError::Body(e.to_string())),
                Some(Ok(chunk)) => chunk,
            };
            len += chunk.len() as u64;
            if len > limit {
                break Some(PutError::TooLarge { limit });
            }
            hasher.update(&chunk);
            if let Err(e) = pending.writer().wait_for_capacity(PUT_CONCURRENCY).await {
                break Some(e.into());
            }
            pending.writer().put(chunk);
        };
        if let Some(failure) = failure {
            pending.abort(key).await;
            return Err(failure);
        }
        pending.finish().await?;
        Ok(Written {
            len,
            sha256: hex::encode(hasher.finalize()),
        })
    }

    /// Writes `bytes` under `key` in one piece (small bodies).
    pub async fn put_bytes(&self, key: &Path, bytes: Bytes) -> Result<Written, PutError> {
        let len = bytes.len() as u64;
        let sha256 = hex::encode(Sha256::digest(&bytes));
        self.inner.objects.put(key, bytes.into()).await?;
        Ok(Written { len, sha256 })
    }

    /// Reads the object under `key`, or the part of it `range` names
    /// (end exclusive, clamped to the object's end).
    pub async fn read(
        &self,
        key: &Path,
        range: Option<Range<u64>>,
    ) -> Result<Blob, MediaStoreError> {
        if let Some(r) = &range
            && r.start >= r.end
        {
            let size = self.size(key).await?;
            return Err(MediaStoreError::RangeNotSatisfiable { size });
        }
        let options = GetOptions {
            range: range.clone().map(GetRange::Bounded),
            ..GetOptions::default()
        };
        let result = match self.inner.objects.get_opts(key, options).await {
            Ok(result) => result,
            Err(object_store::Error::NotFound { path, .. }) => {
                return Err(MediaStoreError::NotFound(path));
            }
            Err(e) if range.is_some() && is_range_error(&e) => {
                let size = self.size(key).await?;
                return Err(MediaStoreError::RangeNotSatisfiable { size });
            }
            Err(e) => return Err(e.into()),
        };
        let size = result.meta.size;
        let range = result.range.clone();
        let stream = result
            .into_stream()
            .map_err(|e| std::io::Error::other(e.to_string()))
            .boxed();
        Ok(Blob {
            size,
            range,
            stream,
        })
    }

    /// The size of the object under `key`.
    pub async fn size(&self, key: &Path) -> Result<u64, MediaStoreError> {
        Ok(self.inner.objects.head(key).await?.size)
    }

    /// Whether an object is under `key`.
    pub async fn exists(&self, key: &Path) -> Result<bool, MediaStoreError> {
        match self.inner.objects.head(key).await {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Copies an object (server-side on S3, a file copy locally: the bytes
    /// never pass through memory whole).
    pub async fn copy(&self, from: &Path, to: &Path) -> Result<(), MediaStoreError> {
        Ok(self.inner.objects.copy(from, to).await?)
    }

    /// Removes the object under `key`; a missing one is no error.
    pub async fn delete(&self, key: &Path) -> Result<(), MediaStoreError> {
        match self.inner.objects.delete(key).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Removes every object under `prefix`; answers how many.
    pub async fn delete_prefix(&self, prefix: &Path) -> Result<u64, MediaStoreError> {
        let locations = self
            .inner
            .objects
            .list(Some(prefix))
            .map_ok(|meta| meta.location)
            .boxed();
        let mut deleted = self.inner.objects.delete_stream(locations);
        let mut n = 0;
        while let Some(result) = deleted.next().await {
            match result {
                Ok(_) => n += 1,
                Err(object_store::Error::NotFound { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(n)
    }

    /// Every object under `prefix`.
    pub async fn list(&self, prefix: &Path) -> Result<Vec<StoredObject>, MediaStoreError> {
        self.inner
            .objects
            .list(Some(prefix))
            .map_ok(|meta| StoredObject {
                key: meta.location,
                size: meta.size,
                modified: meta.last_modified.timestamp(),
            })
            .map_err(MediaStoreError::from)
            .try_collect()
            .await
    }

    /// A URL that reads the object under `key` without credentials, valid
    /// for the configured time; `None` when the store does not presign.
    pub async fn presigned_get(&self, key: &Path) -> Result<Option<url::Url>, MediaStoreError> {
        let Some((signer, valid_for)) = &self.inner.signer else {
            return Ok(None);
        };
        let url = signer
            .signed_url(http::Method::GET, key, *valid_for)
            .await?;
        Ok(Some(url))
    }
}

/// Whether the backend refused a range (past the object's end).
fn is_range_error(e: &object_store::Error) -> bool {
    let text = e.to_string().to_ascii_lowercase();
    text.contains("range") || text.contains("416")
}

fn s3_builder(s3: &S3Config) -> AmazonS3Builder {
    let mut b = AmazonS3Builder::new()
        .with_bucket_name(&s3.bucket)
        .with_region(&s3.region)
        .with_virtual_hosted_style_request(!s3.path_style)
        .with_allow_http(s3.allow_http);
    if let Some(endpoint) = &s3.endpoint {
        b = b.with_endpoint(endpoint);
    }
    if let Some(id) = &s3.access_key_id {
        b = b.with_access_key_id(id);
    }
    if let Some(secret) = &s3.secret_access_key {
        b = b.with_secret_access_key(secret);
    }
    if let Some(token) = &s3.session_token {
        b = b.with_token(token);
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{media_key, session_prefix};

    fn local() -> (tempfile::TempDir, MediaStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = MediaStore::open(&MediaStoreConfig::Local {
            dir: dir.path().join("media"),
        })
        .unwrap();
        (dir, store)
    }

    fn chunks(parts: &[&[u8]]) -> impl Stream<Item = Result<Bytes, std::io::Error>> + Send {
        let owned: Vec<_> = parts
            .iter()
            .map(|p| Ok(Bytes::copy_from_slice(p)))
            .collect();
        futures_util::stream::iter(owned)
    }

    async fn read_all(blob: Blob) -> Vec<u8> {
        blob.stream
            .try_fold(Vec::new(), |mut all, chunk| async move {
                all.extend_from_slice(&chunk);
                Ok(all)
            })
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn a_streamed_write_is_hashed_and_read_back_whole_or_in_part() {
        let (_dir, store) = local();
        let key = media_key("s", "m1");
        let written = store
            .put_stream(&key, chunks(&[b"hello ", b"world"]), 100, None)
            .await
            .unwrap();
        assert_eq!(written.len, 11);
        assert_eq!(
            written.sha256,
            "b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9"
        );
        assert_eq!(
            read_all(store.read(&key, None).await.unwrap()).await,
            b"hello world"
        );
        let part = store.read(&key, Some(6..11)).await.unwrap();
        assert_eq!((part.size, part.range.clone()), (11, 6..11));
        assert_eq!(read_all(part).await, b"world");
    }

    #[tokio::test]
    async fn a_write_past_its_limit_fails_and_leaves_nothing_under_the_key() {
        let (_dir, store) = local();
        let key = media_key("s", "big");
        let err = store
            .put_stream(&key, chunks(&[b"12345", b"67890"]), 7, None)
            .await
            .unwrap_err();
        assert!(matches!(err, PutError::TooLarge { limit: 7 }), "{err}");
        assert!(!store.exists(&key).await.unwrap());
        let broken = futures_util::stream::iter(vec![
            Ok(Bytes::from_static(b"abc")),
            Err(std::io::Error::other("the client went away")),
        ]);
        let err = store.put_stream(&key, broken, 100, None).await.unwrap_err();
        assert!(matches!(err, PutError::Body(_)), "{err}");
        assert!(!store.exists(&key).await.unwrap());
    }

    #[tokio::test]
    async fn a_range_outside_the_object_and_a_missing_key_are_told_apart() {
        let (_dir, store) = local();
        let key = media_key("s", "m");
        store
            .put_bytes(&key, Bytes::from_static(b"0123"))
            .await
            .unwrap();
        assert!(matches!(
            store.read(&key, Some(10..20)).await,
            Err(MediaStoreError::RangeNotSatisfiable { size: 4 })
        ));
        assert!(matches!(
            store.read(&media_key("s", "nope"), None).await,
            Err(MediaStoreError::NotFound(_))
        ));
    }

    #[tokio::test]
    async fn deleting_a_prefix_removes_one_sessions_objects_only() {
        let (_dir, store) = local();
        for (session, id) in [("a", "1"), ("a", "2"), ("ab", "1")] {
            store
                .put_bytes(&media_key(session, id), Bytes::from_static(b"x"))
                .await
                .unwrap();
        }
        assert_eq!(store.delete_prefix(&session_prefix("a")).await.unwrap(), 2);
        assert!(store.exists(&media_key("ab", "1")).await.unwrap());
        assert!(store.list(&session_prefix("a")).await.unwrap().is_empty());
        store
            .copy(&media_key("ab", "1"), &media_key("c", "1"))
            .await
            .unwrap();
        assert_eq!(store.size(&media_key("c", "1")).await.unwrap(), 1);
    }
}
