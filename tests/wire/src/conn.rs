//! One client connection: the websocket, the frame codec, the Noise
//! handshake, and then binary nodes in both directions. What a node means is
//! the server's business ([`crate::server`]); this file only moves them.

use std::sync::Arc;

use anyhow::{Context, anyhow, bail};
use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio_websockets::{Message, ServerBuilder, WebSocketStream};
use whatsapp_rust::wacore::framing::{FrameDecoder, encode_frame};
use whatsapp_rust::wacore::noise::NoiseCipher;
use whatsapp_rust::wacore_binary::marshal::{marshal, unmarshal_ref};
use whatsapp_rust::wacore_binary::node::Node;
use whatsapp_rust::wacore_binary::util::unpack;

use crate::cert::ServerIdentity;
use crate::noise::{self, Established, Hello};

/// What the writer task is asked to do.
pub enum Out {
    /// Encrypt and send a node.
    Node(Node),
    /// Close the websocket (after what was queued before).
    Close,
}

/// The sending half of a live connection; cheap to clone.
#[derive(Clone)]
pub struct Sender {
    tx: mpsc::UnboundedSender<Out>,
    /// This connection's number (unique per server).
    pub id: u64,
}

impl Sender {
    /// Queues a node; false if the connection is gone.
    pub fn send(&self, node: Node) -> bool {
        self.tx.send(Out::Node(node)).is_ok()
    }

    /// Closes the connection once what was queued is sent.
    pub fn close(&self) {
        let _ = self.tx.send(Out::Close);
    }

    /// Whether the connection is gone.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}

/// A connection whose handshake is done: the nodes it receives, and its
/// sender.
pub struct Accepted {
    /// What the client said it is (registration or login).
    pub payload: whatsapp_rust::waproto::whatsapp::ClientPayload,
    /// The client's static Noise key.
    pub client_static: [u8; 32],
    /// Sends to the client.
    pub sender: Sender,
    /// Nodes from the client; ends when the connection does.
    pub nodes: mpsc::UnboundedReceiver<Node>,
}

/// Accepts the websocket, runs the handshake, and starts the reader and the
/// writer.
pub async fn accept(
    tcp: TcpStream,
    identity: Arc<ServerIdentity>,
    id: u64,
) -> anyhow::Result<Accepted> {
    let (_request, mut ws) = ServerBuilder::new()
        .accept(tcp)
        .await
        .map_err(|e| anyhow!("websocket upgrade: {e}"))?;
    let mut decoder = FrameDecoder::new();
    let mut header_seen = false;
    let hello = next_frame(&mut ws, &mut decoder, &mut header_seen).await?;
    let established: Established = match noise::answer_hello(&identity, &hello)? {
        Hello::Ik { reply, established } => {
            send_raw(&mut ws, &reply).await?;
            *established
        }
        Hello::Xx { reply, pending } => {
            send_raw(&mut ws, &reply).await?;
            let finish = next_frame(&mut ws, &mut decoder, &mut header_seen).await?;
            pending.finish(&finish)?
        }
    };
    let (tx, rx) = mpsc::unbounded_channel();
    let (node_tx, nodes) = mpsc::unbounded_channel();
    let (sink, stream) = ws.split();
    tokio::spawn(writer(sink, rx, established.write));
    tokio::spawn(reader(stream, decoder, established.read, node_tx));
    Ok(Accepted {
        payload: established.payload,
        client_static: established.client_static,
        sender: Sender { tx, id },
        nodes,
    })
}

/// Reads websocket messages until one whole frame is buffered.
async fn next_frame(
    ws: &mut WebSocketStream<TcpStream>,
    decoder: &mut FrameDecoder,
    header_seen: &mut bool,
) -> anyhow::Result<Vec<u8>> {
    loop {
        if let Some(frame) = decoder.decode_frame() {
            return Ok(frame.to_vec());
        }
        let msg = ws
            .next()
            .await
            .ok_or_else(|| anyhow!("the client closed during the handshake"))?
            .map_err(|e| anyhow!("websocket: {e}"))?;
        if !msg.is_binary() {
            if msg.is_close() {
                bail!("the client closed during the handshake");
            }
            continue;
        }
        let payload = msg.into_payload();
        let bytes: &[u8] = &payload;
        if *header_seen {
            decoder.feed(bytes);
        } else {
            *header_seen = true;
            decoder.feed(noise::strip_header(bytes)?);
        }
    }
}

async fn send_raw(ws: &mut WebSocketStream<TcpStream>, payload: &[u8]) -> anyhow::Result<()> {
    let framed = encode_frame(payload, None)?;
    ws.send(Message::binary(bytes::Bytes::from(framed)))
        .await
        .map_err(|e| anyhow!("websocket: {e}"))
}

type Sink = futures_util::stream::SplitSink<WebSocketStream<TcpStream>, Message>;
type Stream = futures_util::stream::SplitStream<WebSocketStream<TcpStream>>;

async fn writer(mut sink: Sink, mut rx: mpsc::UnboundedReceiver<Out>, cipher: NoiseCipher) {
    let mut counter: u32 = 0;
    while let Some(out) = rx.recv().await {
        match out {
            Out::Node(node) => {
                let Ok(plain) = marshal(&node) else {
                    log::warn!("wire: a {} node did not encode", node.tag);
                    continue;
                };
                let Ok(ct) = cipher.encrypt_with_counter(counter, &plain) else {
                    break;
                };
                counter += 1;
                let Ok(framed) = encode_frame(&ct, None) else {
                    break;
                };
                if sink
                    .send(Message::binary(bytes::Bytes::from(framed)))
                    .await
                    .is_err()
                {
                    break;
                }
            }
            Out::Close => break,
        }
    }
    let _ = sink.close().await;
}

async fn reader(
    mut stream: Stream,
    mut decoder: FrameDecoder,
    cipher: NoiseCipher,
    nodes: mpsc::UnboundedSender<Node>,
) {
    let mut counter: u32 = 0;
    let result: anyhow::Result<()> = async {
        loop {
            while let Some(frame) = decoder.decode_frame() {
                let mut buf = frame;
                cipher
                    .decrypt_in_place_with_counter(counter, &mut buf)
                    .context("a frame did not decrypt")?;
                counter += 1;
                let data = unpack(&buf).map_err(|e| anyhow!("unpack: {e}"))?;
                let node = unmarshal_ref(&data)
                    .map_err(|e| anyhow!("a node did not decode: {e}"))?
                    .to_owned();
                if nodes.send(node).is_err() {
                    return Ok(());
                }
            }
            match stream.next().await {
                None => return Ok(()),
                Some(Err(_)) => return Ok(()),
                Some(Ok(msg)) if msg.is_binary() => decoder.feed(&msg.into_payload()),
                Some(Ok(msg)) if msg.is_close() => return Ok(()),
                Some(Ok(_)) => {}
            }
        }
    }
    .await;
    if let Err(e) = result {
        log::warn!("wire: connection dropped: {e:#}");
    }
}
