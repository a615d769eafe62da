//! The wire server's Noise identity and the certificate chain it presents.
//!
//! WhatsApp's chain is signed by a root key only WhatsApp holds, so this one
//! carries zero signatures: a client accepts it only when built with the
//! crate's `danger-skip-cert-chain-verify` feature, which this crate turns on
//! for the builds that depend on it (tests) and nothing else does.

use whatsapp_rust::wacore::libsignal::protocol::KeyPair;
use whatsapp_rust::waproto::buffa::{self, Message};
use whatsapp_rust::waproto::whatsapp::{self as wa, cert_chain::noise_certificate};

/// The server's long-lived Noise static key and the chain naming it.
pub struct ServerIdentity {
    /// The static key pair (the leaf certificate's key).
    pub static_kp: KeyPair,
    /// The encoded `CertChain` sent, encrypted, in every server hello.
    pub chain: Vec<u8>,
}

impl ServerIdentity {
    /// A fresh identity: a new static key and a chain over it.
    pub fn generate() -> Self {
        let static_kp = KeyPair::generate(&mut rand::rng());
        let chain = test_chain(&public_bytes(&static_kp));
        Self { static_kp, chain }
    }

    /// The static public key, as the 32 bytes the handshake mixes.
    pub fn static_pub(&self) -> [u8; 32] {
        public_bytes(&self.static_kp)
    }
}

/// The 32 raw bytes of a key pair's public key.
pub fn public_bytes(kp: &KeyPair) -> [u8; 32] {
    kp.public_key
        .public_key_bytes()
        .try_into()
        .expect("an X25519 public key is 32 bytes")
}

/// An intermediate and a leaf certificate whose leaf names `leaf_key`, valid
/// from 2023 to 2030, signed with zeros.
pub fn test_chain(leaf_key: &[u8; 32]) -> Vec<u8> {
    let intermediate = noise_certificate::Details {
        serial: Some(1),
        issuer_serial: Some(0),
        key: Some(vec![0xCC; 32]),
        not_before: Some(1_700_000_000),
        not_after: Some(1_900_000_000),
    };
    let leaf = noise_certificate::Details {
        serial: Some(2),
        issuer_serial: Some(1),
        key: Some(leaf_key.to_vec()),
        not_before: Some(1_700_000_500),
        not_after: Some(1_899_999_500),
    };
    let cert = |details: noise_certificate::Details| wa::cert_chain::NoiseCertificate {
        details: Some(details.encode_to_vec()),
        signature: Some(vec![0u8; 64]),
    };
    wa::CertChain {
        leaf: buffa::MessageField::some(cert(leaf)),
        intermediate: buffa::MessageField::some(cert(intermediate)),
    }
    .encode_to_vec()
}

#[cfg(test)]
mod tests {
    use whatsapp_rust::wacore::libsignal::protocol::PublicKey;
    use whatsapp_rust::wacore::noise::WA_CERT_PUB_KEY;
    use whatsapp_rust::waproto::buffa::Message;
    use whatsapp_rust::waproto::whatsapp as wa;

    use super::*;

    /// The check a release client makes (wacore-noise's
    /// `verify_cert_step`): the intermediate certificate signed by
    /// WhatsApp's root key.
    fn signed_by_whatsapp(chain: &[u8]) -> bool {
        let chain = wa::CertChain::decode_from_slice(chain).unwrap();
        let intermediate = chain.intermediate.into_option().unwrap();
        let root = PublicKey::from_djb_public_key_bytes(&WA_CERT_PUB_KEY).unwrap();
        root.verify_signature(
            intermediate.details.as_deref().unwrap(),
            intermediate.signature.as_deref().unwrap(),
        )
    }

    #[test]
    fn the_test_chain_names_the_servers_key_but_is_not_signed_by_whatsapps_root() {
        let id = ServerIdentity::generate();
        let chain = wa::CertChain::decode_from_slice(&id.chain).unwrap();
        let leaf = chain.leaf.into_option().unwrap();
        let details = wa::cert_chain::noise_certificate::Details::decode_from_slice(
            leaf.details.as_deref().unwrap(),
        )
        .unwrap();
        assert_eq!(details.key.as_deref(), Some(&id.static_pub()[..]));
        assert!(
            !signed_by_whatsapp(&id.chain),
            "a release client, which checks the root signature, refuses the wire server"
        );
    }
}
