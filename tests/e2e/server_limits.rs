//! The HTTP server against clients that hold connections: a request head
//! that never ends, a body that stops coming, a connection left idle, a
//! head over the size limit, and more connections than the cap. Raw TCP
//! clients on 127.0.0.1, each waiting for what the gateway does (an answer,
//! or the close: a read that returns 0), never for a length of time. The
//! short timeouts are the tests' own configuration; the guard around each
//! wait only turns a gateway that never closes into a failure.

use std::time::Duration;

use switchboard_tests::{TestServer, eventually};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Longer than any timeout these tests configure to fire, shorter than the
/// ones they leave long: a gateway that does not act within it never would.
const GUARD: Duration = Duration::from_secs(20);

/// Everything the gateway sends until it closes the connection (a reset
/// after its answer counts as a close).
async fn until_closed(stream: &mut TcpStream) -> String {
    let mut out = Vec::new();
    let read = tokio::time::timeout(GUARD, async {
        let mut buf = [0u8; 4096];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(
        read.is_ok(),
        "the gateway kept the connection open; it sent: {}",
        String::from_utf8_lossy(&out)
    );
    String::from_utf8_lossy(&out).into_owned()
}

/// One answer read off a keep-alive connection: its head and its body (by
/// `Content-Length`).
async fn one_answer(stream: &mut TcpStream) -> String {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    let done = tokio::time::timeout(GUARD, async {
        loop {
            let n = stream.read(&mut buf).await.expect("the answer is read");
            assert!(
                n > 0,
                "closed before a whole answer: {}",
                String::from_utf8_lossy(&out)
            );
            out.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&out).into_owned();
            if let Some(end) = text.find("\r\n\r\n") {
                let length = text[..end]
                    .lines()
                    .find_map(|l| {
                        let (k, v) = l.split_once(':')?;
                        k.eq_ignore_ascii_case("content-length")
                            .then(|| v.trim().parse::<usize>().ok())?
                    })
                    .unwrap_or(0);
                if out.len() >= end + 4 + length {
                    return text;
                }
            }
        }
    })
    .await;
    done.expect("an answer in time")
}

fn addr(server: &TestServer) -> String {
    server.base().trim_start_matches("http://").to_owned()
}

const LIVEZ: &[u8] = b"GET /livez HTTP/1.1\r\nHost: gateway\r\n\r\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_that_never_finishes_its_headers_is_closed_after_the_header_read_timeout() {
    let server = TestServer::start_with(|c| {
        c.http.header_read_timeout = Duration::from_millis(300);
        c.http.idle_timeout = Duration::from_secs(3600);
    })
    .await;
    let mut slow = TcpStream::connect(addr(&server)).await.unwrap();
    slow.write_all(b"GET /livez HTTP/1.1\r\nHost: gateway\r\nX-Half: ")
        .await
        .unwrap();
    let sent = until_closed(&mut slow).await;
    assert!(!sent.contains("200 OK"), "{sent}");
    // A client that sends its head in time is served as ever.
    let mut quick = TcpStream::connect(addr(&server)).await.unwrap();
    quick.write_all(LIVEZ).await.unwrap();
    let answer = one_answer(&mut quick).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_that_sends_nothing_after_its_answer_is_closed_after_the_idle_timeout() {
    let server = TestServer::start_with(|c| {
        c.http.header_read_timeout = Duration::from_secs(3600);
        c.http.idle_timeout = Duration::from_millis(300);
    })
    .await;
    let mut idle = TcpStream::connect(addr(&server)).await.unwrap();
    idle.write_all(LIVEZ).await.unwrap();
    let answer = one_answer(&mut idle).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let after = until_closed(&mut idle).await;
    assert!(after.is_empty(), "{after}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_stops_coming_is_answered_with_an_error_after_the_body_read_timeout() {
    let server = TestServer::start_with(|c| {
        c.http.body_read_timeout = Duration::from_millis(300);
        c.http.idle_timeout = Duration::from_secs(3600);
    })
    .await;
    let mut stalled = TcpStream::connect(addr(&server)).await.unwrap();
    let head = format!(
        "POST /api/v1/sessions HTTP/1.1\r\nHost: gateway\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"id\": \"sta",
        switchboard_tests::TOKEN
    );
    stalled.write_all(head.as_bytes()).await.unwrap();
    let answer = one_answer(&mut stalled).await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("unreadable_body"), "{answer}");
    // Nothing was created from the half a body.
    server.get("/api/v1/sessions/sta").await.expect(404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_head_over_the_size_limit_is_answered_431() {
    let server = TestServer::start_with(|c| c.http.max_header_bytes = 8192).await;
    let mut big = TcpStream::connect(addr(&server)).await.unwrap();
    let request = format!(
        "GET /livez HTTP/1.1\r\nHost: gateway\r\nX-Big: {}\r\n\r\n",
        "x".repeat(9_000)
    );
    big.write_all(request.as_bytes()).await.unwrap();
    let answer = until_closed(&mut big).await;
    assert!(answer.starts_with("HTTP/1.1 431"), "{answer}");
    // A head within the limit is served.
    let mut fits = TcpStream::connect(addr(&server)).await.unwrap();
    let request = format!(
        "GET /livez HTTP/1.1\r\nHost: gateway\r\nX-Fits: {}\r\n\r\n",
        "x".repeat(6_000)
    );
    fits.write_all(request.as_bytes()).await.unwrap();
    let answer = one_answer(&mut fits).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_over_the_cap_is_answered_503_and_served_again_once_one_closes() {
    let server = TestServer::start_with(|c| {
        c.http.max_connections = 2;
        c.http.header_read_timeout = Duration::from_secs(3600);
        c.http.idle_timeout = Duration::from_secs(3600);
    })
    .await;
    // Two keep-alive connections, each served once and held open.
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut c = TcpStream::connect(addr(&server)).await.unwrap();
        c.write_all(LIVEZ).await.unwrap();
        let answer = one_answer(&mut c).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        held.push(c);
    }
    // The third is refused with a JSON error, and closed.
    let mut extra = TcpStream::connect(addr(&server)).await.unwrap();
    extra.write_all(LIVEZ).await.unwrap();
    let refused = until_closed(&mut extra).await;
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    assert!(refused.contains("too_many_connections"), "{refused}");
    assert!(refused.contains("--http-max-connections"), "{refused}");
    // The held ones are still served.
    held[0].write_all(LIVEZ).await.unwrap();
    let answer = one_answer(&mut held[0]).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    // One closes: a new connection is served once the gateway has seen it go.
    drop(held.remove(1));
    let served = eventually("a connection to be served again", || async {
        let mut c = TcpStream::connect(addr(&server)).await.ok()?;
        c.write_all(LIVEZ).await.ok()?;
        let mut first = [0u8; 12];
        c.read_exact(&mut first).await.ok()?;
        (&first == b"HTTP/1.1 200").then_some(c)
    })
    .await;
    drop(served);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_lets_the_answer_in_flight_finish_and_closes_idle_connections() {
    let server = TestServer::start_with(|c| {
        c.http.header_read_timeout = Duration::from_secs(3600);
        c.http.idle_timeout = Duration::from_secs(3600);
    })
    .await;
    let mut idle = TcpStream::connect(addr(&server)).await.unwrap();
    idle.write_all(LIVEZ).await.unwrap();
    one_answer(&mut idle).await;
    server.stop().await;
    // The stop returned: the idle keep-alive connection did not hold it up,
    // and it is closed.
    let after = until_closed(&mut idle).await;
    assert!(after.is_empty(), "{after}");
}
