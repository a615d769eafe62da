//! Webhook deliveries over https, through the real binary: a receiver whose
//! certificate chains to a root the gateway trusts gets the signed event;
//! one whose chain it does not trust is never sent the event (the TLS
//! handshake is refused) and the delivery is dead-lettered with the
//! certificate error. The trusted root is the test's own, named by
//! `SSL_CERT_FILE`, which the delivery client's platform verifier reads on
//! Linux as it would read the system's bundle.

use std::convert::Infallible;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use reqwest::Method;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::json;
use switchboard_tests::crash::{Intervals, Rig, until};
use tokio::net::TcpListener;

use crate::BINARY;

/// A certificate authority of the test's own.
struct Authority {
    issuer: Issuer<'static, KeyPair>,
    pem: String,
}

impl Authority {
    fn new(name: &str) -> Authority {
        let key = KeyPair::generate().expect("a CA key");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let cert = params.self_signed(&key).expect("a self-signed CA");
        Authority {
            pem: cert.pem(),
            issuer: Issuer::new(params, key),
        }
    }

    /// A server certificate for `127.0.0.1` signed by this authority.
    fn server_cert(&self) -> (CertificateDer<'static>, PrivateKeyDer<'static>) {
        let key = KeyPair::generate().expect("a server key");
        let mut params =
            CertificateParams::new(vec!["127.0.0.1".to_owned()]).expect("server parameters");
        params.is_ca = IsCa::ExplicitNoCa;
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let cert = params
            .signed_by(&key, &self.issuer)
            .expect("a server certificate");
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        (cert.der().clone(), key)
    }
}

/// What a TLS receiver saw.
#[derive(Default)]
struct Seen {
    /// Handshakes that failed (the client refused the certificate).
    refused: AtomicUsize,
    /// Each request: its `User-Agent`, its event header and its body.
    requests: Mutex<Vec<(String, String, Bytes)>>,
}

impl Seen {
    fn requests(&self) -> Vec<(String, String, Bytes)> {
        self.requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// An HTTPS receiver on `127.0.0.1:0` presenting `cert`, answering 200 to
/// every request; its URL and what it sees.
async fn tls_receiver(
    cert: CertificateDer<'static>,
    key: PrivateKeyDer<'static>,
) -> (String, Arc<Seen>) {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .expect("the server certificate");
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("https://{}/hook", listener.local_addr().expect("address"));
    let seen = Arc::new(Seen::default());
    let recorder = seen.clone();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, seen) = (acceptor.clone(), recorder.clone());
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    seen.refused.fetch_add(1, Ordering::SeqCst);
                    return;
                };
                let service = service_fn(move |req: hyper::Request<hyper::body::Incoming>| {
                    let seen = seen.clone();
                    async move {
                        let header = |name: &str| {
                            req.headers()
                                .get(name)
                                .and_then(|v| v.to_str().ok())
                                .unwrap_or_default()
                                .to_owned()
                        };
                        let (agent, event) = (header("user-agent"), header("x-webhook-event"));
                        let body = http_body_util::BodyExt::collect(req.into_body())
                            .await
                            .map(|b| b.to_bytes())
                            .unwrap_or_default();
                        seen.requests
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .push((agent, event, body));
                        Ok::<_, Infallible>(hyper::Response::new(Full::new(Bytes::from_static(
                            b"ok",
                        ))))
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    (url, seen)
}

#[tokio::test]
async fn a_webhook_over_https_is_delivered_when_its_certificate_is_trusted_and_refused_when_not() {
    let trusted = Authority::new("switchboard test root");
    let stranger = Authority::new("an authority nobody trusts");
    let (cert, key) = trusted.server_cert();
    let (good_url, good) = tls_receiver(cert, key).await;
    let (cert, key) = stranger.server_cert();
    let (bad_url, bad) = tls_receiver(cert, key).await;

    let roots = tempfile::tempdir().expect("a directory for the root bundle");
    let bundle = roots.path().join("roots.pem");
    std::fs::write(&bundle, &trusted.pem).expect("the root bundle");
    let rig = Rig::start_with_env(
        BINARY,
        Intervals::Production,
        &[
            ("SSL_CERT_FILE", path_str(&bundle)),
            ("WEBHOOK_ALLOW_PRIVATE", "true"),
            // One attempt: the refused delivery is dead-lettered at once.
            ("WEBHOOK_RETRY_MAX_ATTEMPTS", "1"),
        ],
    )
    .await;
    let api = rig.api();
    api.pair("s").await;
    for url in [&good_url, &bad_url] {
        api.expect(
            Method::POST,
            "/api/v1/sessions/s/webhooks",
            Some(json!({ "url": url, "events": ["message"], "secret": "tls-secret" })),
            201,
        )
        .await;
    }
    api.expect(
        Method::POST,
        "/api/v1/sim/sessions/s/inbound",
        Some(json!({ "from": "15550001111", "text": "over tls" })),
        200,
    )
    .await;

    until("the trusted receiver to get the event", || async {
        !good.requests().is_empty()
    })
    .await;
    let requests = good.requests();
    assert_eq!(requests.len(), 1, "one delivery");
    let (agent, event, body) = &requests[0];
    assert!(agent.starts_with("Switchboard/"), "user agent: {agent}");
    assert_eq!(event, "message");
    let envelope: serde_json::Value = serde_json::from_slice(body).expect("a JSON envelope");
    assert_eq!(envelope["data"]["text"], "over tls");

    until("the untrusted delivery to be dead-lettered", || async {
        api.get("/api/v1/sessions/s/webhooks/dlq").await["count"] == 1
    })
    .await;
    let dlq = api.get("/api/v1/sessions/s/webhooks/dlq").await;
    let entry = &dlq["entries"][0];
    assert_eq!(entry["webhook_url"], bad_url.as_str());
    let error = entry["last_error"].as_str().unwrap_or_default();
    assert!(
        error.starts_with("connection failed") && error.contains("certificate"),
        "the certificate error is named: {error}"
    );
    assert!(
        bad.refused.load(Ordering::SeqCst) >= 1,
        "the handshake was refused"
    );
    assert!(
        bad.requests().is_empty(),
        "nothing is sent over an untrusted connection"
    );
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 temporary path")
}
