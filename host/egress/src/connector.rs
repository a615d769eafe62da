//! The guarded connector: hyper-util's TCP connector resolving names
//! through a [`Guard`] (so it connects only to the addresses the guard
//! checked: pinned, the one lookup of the connection), checking IP
//! literals before connecting (the TCP connector never asks a resolver
//! about them), wrapped in rustls for `https` with the platform's
//! certificate roots. It reads no proxy from the environment; a client on
//! it follows no redirect (hyper's never does).

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

use http::Uri;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::dns::Name;
use hyper_util::rt::TokioIo;
use rustls_platform_verifier::BuilderVerifierExt;
use tokio::net::TcpStream;
use tower_service::Service;

use crate::guard::{BoxError, Guard};

/// The connector every guarded client connects through.
pub type Connector = HttpsConnector<GuardedHttp>;

/// A connector for `guard`: TCP (connecting within `connect_timeout`,
/// without Nagle's delay) to the addresses it allows, TLS for `https`.
pub fn connector(guard: Guard, connect_timeout: Duration) -> Result<Connector, BoxError> {
    let mut http = HttpConnector::new_with_resolver(Resolver {
        guard: guard.clone(),
    });
    // https goes through the TLS wrapper, which hands plain TCP here.
    http.enforce_http(false);
    http.set_connect_timeout(Some(connect_timeout));
    http.set_nodelay(true);
    Ok(hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config((*tls_config()?).clone())
        .https_or_http()
        .enable_http1()
        .wrap_connector(GuardedHttp { http, guard }))
}

/// The TLS client configuration (ring, the platform's verifier), built once:
/// the platform's roots are read from disk.
fn tls_config() -> Result<Arc<rustls::ClientConfig>, BoxError> {
    static CONFIG: OnceLock<Result<Arc<rustls::ClientConfig>, String>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .map_err(|e| e.to_string())?
                .with_platform_verifier()
                .map(|b| Arc::new(b.with_no_client_auth()))
                .map_err(|e| e.to_string())
        })
        .clone()
        .map_err(|e| format!("no TLS client configuration: {e}").into())
}

/// The TCP half of the connector: the literal check, then hyper-util's
/// connector over the guard's resolver.
#[derive(Clone)]
pub struct GuardedHttp {
    http: HttpConnector<Resolver>,
    guard: Guard,
}

impl Service<Uri> for GuardedHttp {
    type Response = TokioIo<TcpStream>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.http.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let checked = self.guard.check_literal(uri.host());
        let connecting = self.http.call(uri);
        Box::pin(async move {
            checked?;
            connecting.await.map_err(Into::into)
        })
    }
}

/// The connector's resolver: the guard's addresses (their ports 0: the
/// connector sets the URL's).
#[derive(Clone)]
pub struct Resolver {
    guard: Guard,
}

impl Service<Name> for Resolver {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        let guard = self.guard.clone();
        Box::pin(async move { Ok(guard.addresses(name.as_str(), 0).await?.into_iter()) })
    }
}
