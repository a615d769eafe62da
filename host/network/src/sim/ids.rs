//! Deterministic identifiers of the simulated network: message ids, QR codes,
//! pair codes and derived phone numbers all come from one seeded generator (or,
//! for phones, from a hash of the seed and the session id).

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The seeded source of every random choice the simulated network makes.
#[derive(Debug)]
pub struct SimRng(StdRng);

const PAIR_ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTVWXYZ23456789";
const QR_ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

impl SimRng {
    /// A generator whose whole sequence is fixed by `seed`.
    pub fn new(seed: u64) -> Self {
        Self(StdRng::seed_from_u64(seed))
    }

    /// A message id in the network's style: `3EB0` and 16 upper-case hex digits.
    pub fn message_id(&mut self) -> String {
        format!("3EB0{:016X}", self.0.random::<u64>())
    }

    /// A QR payload in the shape of a linked-device QR (`2@ref,key,identity,adv`).
    pub fn qr_code(&mut self) -> String {
        let parts: Vec<String> = [32usize, 44, 44, 24]
            .iter()
            .map(|len| self.pick(QR_ALPHABET, *len))
            .collect();
        format!("2@{}", parts.join(","))
    }

    /// A pair code, `XXXX-XXXX`, from an alphabet without look-alike characters.
    pub fn pair_code(&mut self) -> String {
        let code = self.pick(PAIR_ALPHABET, 8);
        format!("{}-{}", &code[..4], &code[4..])
    }

    /// A group id in the network's style: `120363` and 12 digits.
    pub fn group_id(&mut self) -> String {
        format!("120363{:012}", self.0.random_range(0..1_000_000_000_000u64))
    }

    /// A group invite code: 22 letters and digits.
    pub fn invite_code(&mut self) -> String {
        self.pick(&QR_ALPHABET[..62], 22)
    }

    /// An opaque id of a group description: 16 upper-case hex digits.
    pub fn description_id(&mut self) -> String {
        format!("{:016X}", self.0.random::<u64>())
    }

    /// A uniform number in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        self.0.random::<f64>()
    }

    fn pick(&mut self, alphabet: &[u8], len: usize) -> String {
        (0..len)
            .map(|_| alphabet[self.0.random_range(0..alphabet.len())] as char)
            .collect()
    }
}

/// The phone number a sim session gets when none was given: `1555` and seven
/// digits from a hash of the seed and the session id (stable across restarts).
pub fn derived_phone(seed: u64, session_id: &str) -> String {
    // FNV-1a: small, stable across Rust releases (unlike std's DefaultHasher).
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in seed.to_le_bytes().iter().chain(session_id.as_bytes()) {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("1555{:07}", h % 10_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_sequence() {
        let (mut a, mut b) = (SimRng::new(7), SimRng::new(7));
        assert_eq!(a.message_id(), b.message_id());
        assert_eq!(a.qr_code(), b.qr_code());
        assert_eq!(a.pair_code(), b.pair_code());
        assert_ne!(SimRng::new(8).message_id(), SimRng::new(7).message_id());
    }

    #[test]
    fn group_ids_and_invite_codes_have_the_networks_shape() {
        let mut rng = SimRng::new(3);
        let id = rng.group_id();
        assert_eq!(id.len(), 18);
        assert!(id.starts_with("120363") && id.chars().all(|c| c.is_ascii_digit()));
        let code = rng.invite_code();
        assert_eq!(code.len(), 22);
        assert!(code.chars().all(|c| c.is_ascii_alphanumeric()));
        assert_ne!(code, rng.invite_code());
    }

    #[test]
    fn pair_codes_have_two_groups_of_four() {
        let code = SimRng::new(1).pair_code();
        assert_eq!(code.len(), 9);
        assert_eq!(&code[4..5], "-");
    }

    #[test]
    fn derived_phones_are_stable_and_eleven_digits() {
        let p = derived_phone(42, "alice");
        assert_eq!(p, derived_phone(42, "alice"));
        assert_ne!(p, derived_phone(42, "bob"));
        assert_eq!(p.len(), 11);
        assert!(p.chars().all(|c| c.is_ascii_digit()));
    }
}
