//! The mock phone's half of linking a device: the QR refs a new companion
//! shows, the signed device identity of `pair-success`, and the pair-code
//! exchange (the phone decrypts the companion's key with the code, answers
//! with its own, and derives the shared ADV secret from the key bundle).

use anyhow::{Context, anyhow, bail};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use whatsapp_rust::wacore::crypto::hkdf_sha256_into;
use whatsapp_rust::wacore::libsignal::crypto::aes_256_gcm_decrypt;
use whatsapp_rust::wacore::libsignal::protocol::{KeyPair, PublicKey};
use whatsapp_rust::wacore::pair_code::PairCodeUtils;
use whatsapp_rust::wacore_binary::builder::NodeBuilder;
use whatsapp_rust::wacore_binary::node::Node;
use whatsapp_rust::waproto::buffa::Message;
use whatsapp_rust::waproto::whatsapp as wa;

use crate::cert::public_bytes;

/// What a scanned QR code says.
pub struct Scanned {
    /// The ref the server handed the companion.
    pub pairing_ref: String,
    /// The companion's Noise static key.
    pub noise: [u8; 32],
    /// The companion's identity key.
    pub identity: [u8; 32],
    /// The secret the pair-success HMAC is keyed with.
    pub adv_secret: [u8; 32],
}

/// Reads a QR string `ref,noise,identity,adv[,type]`.
pub fn parse_qr(qr: &str) -> anyhow::Result<Scanned> {
    let parts: Vec<&str> = qr.split(',').collect();
    if parts.len() < 4 {
        bail!("a QR code has at least four comma-separated fields");
    }
    let key = |s: &str, what: &str| -> anyhow::Result<[u8; 32]> {
        B64.decode(s)
            .with_context(|| format!("the QR code's {what} is not base64"))?
            .try_into()
            .map_err(|_| anyhow!("the QR code's {what} is not 32 bytes"))
    };
    Ok(Scanned {
        pairing_ref: parts[0].to_owned(),
        noise: key(parts[1], "noise key")?,
        identity: key(parts[2], "identity key")?,
        adv_secret: key(parts[3], "ADV secret")?,
    })
}

/// The `ADVSignedDeviceIdentityHMAC` the phone sends in `pair-success`: the
/// companion's identity signed by the account's identity key, MACed with
/// the ADV secret.
pub fn device_identity(
    account: &KeyPair,
    companion_identity: &[u8; 32],
    adv_secret: &[u8; 32],
    key_index: u32,
) -> anyhow::Result<Vec<u8>> {
    let now = crate::now();
    let details = wa::ADVDeviceIdentity {
        raw_id: Some(key_index),
        timestamp: Some(now),
        key_index: Some(key_index),
        account_type: Some(wa::ADVEncryptionType::E2EE),
        device_type: Some(wa::ADVEncryptionType::E2EE),
    }
    .encode_to_vec();
    let mut to_sign = vec![6u8, 0];
    to_sign.extend_from_slice(&details);
    to_sign.extend_from_slice(companion_identity);
    let signature = account
        .private_key
        .calculate_signature(&to_sign, &mut rand::rng())
        .map_err(|e| anyhow!("signing the device identity: {e}"))?;
    let signed = wa::ADVSignedDeviceIdentity {
        details: Some(details),
        account_signature_key: Some(public_bytes(account).to_vec()),
        account_signature: Some(signature.to_vec()),
        device_signature: None,
    }
    .encode_to_vec();
    let mut mac = Hmac::<Sha256>::new_from_slice(adv_secret).expect("any key length");
    mac.update(&signed);
    Ok(wa::ADVSignedDeviceIdentityHMAC {
        details: Some(signed),
        hmac: Some(mac.finalize().into_bytes().to_vec()),
        account_type: Some(wa::ADVEncryptionType::E2EE),
    }
    .encode_to_vec())
}

/// The `pair-success` IQ.
pub fn pair_success(
    id: &str,
    identity: Vec<u8>,
    device_jid: &str,
    lid_jid: &str,
    name: &str,
) -> Node {
    NodeBuilder::new("iq")
        .attr("from", "s.whatsapp.net")
        .attr("id", id)
        .attr("type", "set")
        .attr("xmlns", "md")
        .attr("t", crate::now().to_string())
        .children([NodeBuilder::new("pair-success")
            .children([
                NodeBuilder::new("device-identity").bytes(identity).build(),
                NodeBuilder::new("device")
                    .attr("jid", device_jid)
                    .attr("lid", lid_jid)
                    .build(),
                NodeBuilder::new("biz").attr("name", name).build(),
                NodeBuilder::new("platform").attr("name", "android").build(),
            ])
            .build()])
        .build()
}

/// The phone's side of a pair-code exchange, from the companion's hello to
/// the ADV secret.
pub struct CodeExchange {
    /// The ref the server answered the hello with.
    pub pairing_ref: Vec<u8>,
    /// The companion's wrapped ephemeral key.
    pub wrapped_companion: Vec<u8>,
    /// The phone's ephemeral key pair, once the code was entered.
    pub primary_eph: Option<KeyPair>,
    /// The code the user typed on the phone.
    pub code: Option<String>,
}

impl CodeExchange {
    /// The `primary_hello` notification, after the user typed `code` on
    /// the phone: the phone's ephemeral key wrapped with the code.
    pub fn primary_hello(
        &mut self,
        code: &str,
        account: &KeyPair,
        id: &str,
    ) -> anyhow::Result<Node> {
        // Decrypting proves nothing by itself (CTR has no tag); a wrong code
        // shows as a bundle that does not open at the companion's finish.
        let _companion_eph =
            PairCodeUtils::decrypt_primary_ephemeral_pub(&self.wrapped_companion, code)
                .map_err(|e| anyhow!("the companion's key: {e}"))?;
        let eph = KeyPair::generate(&mut rand::rng());
        let wrapped = PairCodeUtils::encrypt_ephemeral_pub(&public_bytes(&eph), code);
        self.primary_eph = Some(eph);
        self.code = Some(code.to_owned());
        Ok(NodeBuilder::new("notification")
            .attr("from", "s.whatsapp.net")
            .attr("id", id)
            .attr("type", "link_code_companion_reg")
            .attr("t", crate::now().to_string())
            .children([NodeBuilder::new("link_code_companion_reg")
                .attr("stage", "primary_hello")
                .children([
                    NodeBuilder::new("link_code_pairing_wrapped_primary_ephemeral_pub")
                        .bytes(wrapped.to_vec())
                        .build(),
                    NodeBuilder::new("primary_identity_pub")
                        .bytes(public_bytes(account).to_vec())
                        .build(),
                    NodeBuilder::new("link_code_pairing_ref")
                        .bytes(self.pairing_ref.clone())
                        .build(),
                ])
                .build()])
            .build())
    }

    /// Opens the companion's key bundle and derives the ADV secret; also
    /// gives the companion's identity key.
    pub fn finish(
        &self,
        wrapped_bundle: &[u8],
        account: &KeyPair,
    ) -> anyhow::Result<([u8; 32], [u8; 32])> {
        let eph = self
            .primary_eph
            .as_ref()
            .ok_or_else(|| anyhow!("no code was entered on the phone"))?;
        let code = self.code.as_deref().unwrap_or_default();
        let companion_eph =
            PairCodeUtils::decrypt_primary_ephemeral_pub(&self.wrapped_companion, code)
                .map_err(|e| anyhow!("the companion's key: {e}"))?;
        let their_eph = PublicKey::from_djb_public_key_bytes(&companion_eph)
            .map_err(|e| anyhow!("the companion's key: {e}"))?;
        let es = eph
            .private_key
            .calculate_agreement(&their_eph)
            .map_err(|e| anyhow!("agreement: {e}"))?;
        if wrapped_bundle.len() < 32 + 12 + 16 {
            bail!("the key bundle is too short");
        }
        let (salt, rest) = wrapped_bundle.split_at(32);
        let (iv, ct) = rest.split_at(12);
        let mut key = [0u8; 32];
        hkdf_sha256_into(
            &es,
            Some(salt),
            b"link_code_pairing_key_bundle_encryption_key",
            &mut key,
        )
        .map_err(|_| anyhow!("bundle key"))?;
        let iv: [u8; 12] = iv.try_into().expect("12 bytes");
        let mut bundle = Vec::new();
        aes_256_gcm_decrypt(&key, &iv, b"", ct, &mut bundle)
            .map_err(|_| anyhow!("the key bundle does not open: the code was wrong"))?;
        if bundle.len() != 96 {
            bail!("the key bundle is {} bytes, not 96", bundle.len());
        }
        let companion_identity: [u8; 32] = bundle[..32].try_into().expect("32 bytes");
        let their_identity = PublicKey::from_djb_public_key_bytes(&companion_identity)
            .map_err(|e| anyhow!("the companion's identity: {e}"))?;
        let is = account
            .private_key
            .calculate_agreement(&their_identity)
            .map_err(|e| anyhow!("agreement: {e}"))?;
        let mut ikm = Vec::with_capacity(96);
        ikm.extend_from_slice(&es);
        ikm.extend_from_slice(&is);
        ikm.extend_from_slice(&bundle[64..96]);
        let mut adv = [0u8; 32];
        hkdf_sha256_into(&ikm, None, b"adv_secret", &mut adv).map_err(|_| anyhow!("adv secret"))?;
        Ok((adv, companion_identity))
    }
}
