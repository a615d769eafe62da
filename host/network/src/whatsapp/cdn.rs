//! A stand-in for a media host in the backend's tests: a local HTTP server
//! that answers every request with the given head and body, the body in
//! pieces with a pause between them when asked (a slow CDN).

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// `HTTP/1.1 <status>` with the body's `Content-Length`, closing after it.
pub fn head(status: &str, body: &[u8]) -> String {
    format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
}

/// Serves `head` then `body` (64 KiB at a time, `pause` between pieces) to
/// every request, then closes the connection; the address it listens on.
pub async fn serve(head: String, body: Vec<u8>, pause: Duration) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let (head, body) = (head.clone(), body.clone());
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = socket.write_all(head.as_bytes()).await;
                for piece in body.chunks(64 * 1024) {
                    if socket.write_all(piece).await.is_err() {
                        return;
                    }
                    if !pause.is_zero() {
                        tokio::time::sleep(pause).await;
                    }
                }
                let _ = socket.shutdown().await;
            });
        }
    });
    addr
}
