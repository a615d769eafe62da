//! The server side of the Noise handshake a whatsapp-rust client starts:
//! XX for a first connect, IK when the client kept the server's static key
//! from an earlier one. What comes out is the pair of transport ciphers and
//! the client's `ClientPayload` (registration or login).

use anyhow::{Context, anyhow, bail};
use whatsapp_rust::wacore::handshake::NoiseHandshake;
use whatsapp_rust::wacore::libsignal::protocol::KeyPair;
use whatsapp_rust::wacore::noise::NoiseCipher;
use whatsapp_rust::wacore_binary::consts::{NOISE_PATTERN_IK, NOISE_PATTERN_XX, WA_CONN_HEADER};
use whatsapp_rust::waproto::buffa::{self, Message};
use whatsapp_rust::waproto::whatsapp as wa;

use crate::cert::{ServerIdentity, public_bytes};

/// A finished handshake.
pub struct Established {
    /// Encrypts what the server sends.
    pub write: NoiseCipher,
    /// Decrypts what the client sends.
    pub read: NoiseCipher,
    /// The client's static Noise key (its device's noise key).
    pub client_static: [u8; 32],
    /// The `ClientPayload` protobuf the client sent.
    pub payload: wa::ClientPayload,
}

/// Where a handshake stands after the client's hello.
pub enum Hello {
    /// XX: the server hello to send, and the state that reads the finish.
    Xx {
        reply: Vec<u8>,
        pending: Box<XxPending>,
    },
    /// IK accepted: the server hello to send; the handshake is done.
    Ik {
        reply: Vec<u8>,
        established: Box<Established>,
    },
}

/// An XX handshake waiting for the client's finish message.
pub struct XxPending {
    noise: NoiseHandshake,
    server_eph: KeyPair,
}

/// Answers a client hello (the first frame, the connection header stripped).
pub fn answer_hello(server: &ServerIdentity, hello: &[u8]) -> anyhow::Result<Hello> {
    let msg = wa::HandshakeMessage::decode_from_slice(hello).context("client hello")?;
    let hello = msg
        .client_hello
        .into_option()
        .ok_or_else(|| anyhow!("the first message is not a client hello"))?;
    let eph: [u8; 32] = hello
        .ephemeral
        .ok_or_else(|| anyhow!("client hello without an ephemeral key"))?
        .try_into()
        .map_err(|_| anyhow!("client ephemeral key is not 32 bytes"))?;
    match (hello.r#static, hello.payload) {
        (Some(static_ct), Some(payload_ct)) => ik(server, eph, &static_ct, &payload_ct),
        _ => xx(server, eph),
    }
}

fn xx(server: &ServerIdentity, client_eph: [u8; 32]) -> anyhow::Result<Hello> {
    let mut noise = NoiseHandshake::new(NOISE_PATTERN_XX, &WA_CONN_HEADER)?;
    noise.authenticate(&client_eph);
    let server_eph = KeyPair::generate(&mut rand::rng());
    let eph_pub = public_bytes(&server_eph);
    noise.authenticate(&eph_pub);
    noise.mix_shared_secret(server_eph.private_key.serialize(), &client_eph)?;
    let static_ct = noise.encrypt(&server.static_pub())?;
    noise.mix_shared_secret(server.static_kp.private_key.serialize(), &client_eph)?;
    let cert_ct = noise.encrypt(&server.chain)?;
    Ok(Hello::Xx {
        reply: server_hello(eph_pub, Some(static_ct), cert_ct),
        pending: Box::new(XxPending { noise, server_eph }),
    })
}

impl XxPending {
    /// Reads the client's finish message and completes the handshake.
    pub fn finish(mut self: Box<Self>, finish: &[u8]) -> anyhow::Result<Established> {
        let msg = wa::HandshakeMessage::decode_from_slice(finish).context("client finish")?;
        let cf = msg
            .client_finish
            .into_option()
            .ok_or_else(|| anyhow!("the second message is not a client finish"))?;
        let static_ct = cf
            .r#static
            .ok_or_else(|| anyhow!("finish without static"))?;
        let payload_ct = cf
            .payload
            .ok_or_else(|| anyhow!("finish without payload"))?;
        let client_static: [u8; 32] = self
            .noise
            .decrypt(&static_ct)?
            .try_into()
            .map_err(|_| anyhow!("client static key is not 32 bytes"))?;
        self.noise
            .mix_shared_secret(self.server_eph.private_key.serialize(), &client_static)?;
        let payload = self.noise.decrypt(&payload_ct)?;
        let payload = wa::ClientPayload::decode_from_slice(&payload).context("client payload")?;
        let (client_write, client_read) = self.noise.finish()?;
        // The initiator's write key is the responder's read key.
        Ok(Established {
            write: client_read,
            read: client_write,
            client_static,
            payload,
        })
    }
}

fn ik(
    server: &ServerIdentity,
    client_eph: [u8; 32],
    static_ct: &[u8],
    payload_ct: &[u8],
) -> anyhow::Result<Hello> {
    let mut noise = NoiseHandshake::new(NOISE_PATTERN_IK, &WA_CONN_HEADER)?;
    noise.authenticate(&server.static_pub());
    noise.authenticate(&client_eph);
    let server_priv = server.static_kp.private_key.serialize();
    noise.mix_shared_secret(server_priv, &client_eph)?;
    let client_static: [u8; 32] = noise
        .decrypt(static_ct)
        .context("the client's IK hello was made for another server key")?
        .try_into()
        .map_err(|_| anyhow!("client static key is not 32 bytes"))?;
    noise.mix_shared_secret(server_priv, &client_static)?;
    let payload = noise.decrypt(payload_ct)?;
    let payload = wa::ClientPayload::decode_from_slice(&payload).context("client payload")?;
    let server_eph = KeyPair::generate(&mut rand::rng());
    let eph_pub = public_bytes(&server_eph);
    noise.authenticate(&eph_pub);
    noise.mix_shared_secret(server_eph.private_key.serialize(), &client_eph)?;
    noise.mix_shared_secret(server_eph.private_key.serialize(), &client_static)?;
    let cert_ct = noise.encrypt(&server.chain)?;
    let (client_write, client_read) = noise.finish()?;
    Ok(Hello::Ik {
        reply: server_hello(eph_pub, None, cert_ct),
        established: Box::new(Established {
            write: client_read,
            read: client_write,
            client_static,
            payload,
        }),
    })
}

fn server_hello(eph: [u8; 32], static_ct: Option<Vec<u8>>, payload: Vec<u8>) -> Vec<u8> {
    wa::HandshakeMessage {
        server_hello: buffa::MessageField::some(wa::handshake_message::ServerHello {
            ephemeral: Some(eph.to_vec()),
            r#static: static_ct,
            payload: Some(payload),
            ..Default::default()
        }),
        ..Default::default()
    }
    .encode_to_vec()
}

/// Strips the connection header (and an edge-routing preamble before it)
/// from the first bytes a client sends, giving what follows.
pub fn strip_header(first: &[u8]) -> anyhow::Result<&[u8]> {
    let mut rest = first;
    if rest.starts_with(b"ED\x00\x01") {
        if rest.len() < 7 {
            bail!("truncated edge-routing preamble");
        }
        let len = ((rest[4] as usize) << 16) | ((rest[5] as usize) << 8) | rest[6] as usize;
        rest = rest
            .get(7 + len..)
            .ok_or_else(|| anyhow!("truncated edge-routing preamble"))?;
    }
    rest.strip_prefix(&WA_CONN_HEADER[..])
        .ok_or_else(|| anyhow!("the connection does not start with the WhatsApp header"))
}
