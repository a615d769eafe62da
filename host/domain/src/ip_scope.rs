//! Which network addresses count as public: the rule every outbound call
//! the gateway makes on someone else's behalf (webhook deliveries, plugin
//! HTTP) applies before it connects, so a caller cannot reach the
//! gateway's own network by naming an internal address.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Whether an address is on the public internet (not loopback, private,
/// link-local, shared, documentation, multicast, reserved or unspecified).
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public_v4(v4);
            }
            let s = v6.segments();
            let low_v4 =
                || Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
            // The well-known NAT64 prefix 64:ff9b::/96 and IPv4-translated
            // addresses (::ffff:0:a.b.c.d) reach the IPv4 address they
            // embed, so that address decides.
            let nat64 = s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0; 4];
            let translated = s[0..4] == [0; 4] && s[4] == 0xffff && s[5] == 0;
            if nat64 || translated {
                return is_public_v4(low_v4());
            }
            // 6to4 (2002:a.b.c.d::/48) is relayed to the IPv4 address in
            // its second and third segments.
            if s[0] == 0x2002 {
                let v4 =
                    Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8);
                return is_public_v4(v4);
            }
            // IPv4-compatible addresses (`::a.b.c.d`, deprecated): some
            // stacks still reach the embedded IPv4 address.
            if s[0..6] == [0; 6] && !v6.is_loopback() && !v6.is_unspecified() {
                return false;
            }
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1) // local-use NAT64 (RFC 8215)
                || (s[0] == 0x100 && s[1..4] == [0; 3]) // discard-only
                || (s[0] & 0xffc0) == 0xfec0 // site local (deprecated)
                || (s[0] & 0xfe00) == 0xfc00 // unique local
                || (s[0] & 0xffc0) == 0xfe80 // link local
                || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
                || (s[0] & 0xfff0) == 0x3ff0 // documentation (3fff::/20)
                || (s[0] == 0x2001 && s[1] == 0) // Teredo tunnels
                || (s[0] == 0x2001 && s[1] == 2 && s[2] == 0) // benchmarking
                || v6 == Ipv6Addr::from_bits(1)) // ::1 spelled out
        }
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_documentation()
        || ip.is_multicast()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 198 && (b == 18 || b == 19)) // benchmarking
        || a >= 240) // reserved
}

#[cfg(test)]
mod tests {
    use super::*;

    fn public(s: &str) -> bool {
        is_public(s.parse().unwrap())
    }

    #[test]
    fn internal_addresses_are_not_public() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "255.255.255.255",
            "224.0.0.1",
            "192.0.2.1",
            "198.18.0.1",
            "240.0.0.1",
            "::1",
            "::",
            "fc00::1",
            "fd12::1",
            "fe80::1",
            "fec0::1",
            "ff02::1",
            "2001:db8::1",
            "100::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "::8.8.8.8",
            "64:ff9b::a00:1",
            "64:ff9b:1::808:808",
            "::ffff:0:10.0.0.1",
            "2002:7f00:1::1",
            "2002:c0a8:101::1",
            "2001:0:4136:e378::1",
            "2001:2::1",
            "3fff::1",
        ] {
            assert!(!public(ip), "{ip} must not count as public");
        }
    }

    #[test]
    fn ordinary_internet_addresses_are_public() {
        for ip in [
            "1.1.1.1",
            "8.8.8.8",
            "93.184.216.34",
            "2606:4700::1111",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "::ffff:0:8.8.8.8",
            "2002:808:808::1",
            "2001:4860:4860::8888",
        ] {
            assert!(public(ip), "{ip} is public");
        }
    }
}
