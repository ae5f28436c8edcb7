//! Which IP addresses the server never calls on a client's behalf: anything that is not a
//! public unicast address, since a client-supplied URL naming one would let the client reach
//! this deployment's own network (server-side request forgery).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why `address` is not called, or `None` for a public unicast address.
pub fn refusal(address: IpAddr) -> Option<&'static str> {
    match address {
        IpAddr::V4(v4) => refusal_v4(v4),
        IpAddr::V6(v6) => refusal_v6(v6),
    }
}

fn refusal_v4(address: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = address.octets();
    Some(match (a, b, c) {
        _ if address.is_unspecified() => "unspecified",
        _ if address.is_broadcast() => "broadcast",
        (0, _, _) => "\"this network\" (0.0.0.0/8)",
        (127, _, _) => "loopback",
        (10, _, _) | (192, 168, _) => "private",
        (172, b, _) if (16..32).contains(&b) => "private",
        (100, b, _) if (64..128).contains(&b) => "shared address space (100.64.0.0/10)",
        (169, 254, _) => "link-local",
        (192, 0, 0) => "IETF protocol assignments (192.0.0.0/24)",
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => "documentation",
        (198, 18 | 19, _) => "benchmarking (198.18.0.0/15)",
        (224..=239, _, _) => "multicast",
        (240..=255, _, _) => "reserved (240.0.0.0/4)",
        _ => return None,
    })
}

fn refusal_v6(address: Ipv6Addr) -> Option<&'static str> {
    let segments = address.segments();
    if address.is_unspecified() {
        return Some("unspecified");
    }
    if address.is_loopback() {
        return Some("loopback");
    }
    // Forms that carry an IPv4 address are judged by it.
    if let Some(v4) = address.to_ipv4_mapped() {
        return refusal_v4(v4);
    }
    if segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        // NAT64 (RFC 6052): reaches the embedded IPv4 address.
        return refusal_v4(embedded_v4(&address, 12));
    }
    if segments[0] == 0x2002 {
        // 6to4 (RFC 3056): reaches the IPv4 address in bits 16 to 48.
        let [_, _, a, b, c, d, ..] = address.octets();
        return refusal_v4(Ipv4Addr::new(a, b, c, d));
    }
    Some(match segments[0] {
        0xfc00..=0xfdff => "unique local (fc00::/7)",
        0xfe80..=0xfebf => "link-local",
        0xfec0..=0xfeff => "site-local (deprecated)",
        0xff00..=0xffff => "multicast",
        0x2001 if segments[1] == 0x0db8 => "documentation",
        0x3fff if segments[1] < 0x1000 => "documentation",
        // Teredo, ORCHID, benchmarking and other IETF protocol assignments (2001::/23).
        0x2001 if segments[1] < 0x0200 => "IETF protocol assignments (2001::/23)",
        // Only global unicast (2000::/3) is routed on the internet; the rest is reserved,
        // IPv4-compatible (deprecated) forms included.
        0x2000..=0x3fff => return None,
        _ => "reserved",
    })
}

fn embedded_v4(address: &Ipv6Addr, at: usize) -> Ipv4Addr {
    let octets = address.octets();
    Ipv4Addr::new(octets[at], octets[at + 1], octets[at + 2], octets[at + 3])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> Option<&'static str> {
        refusal(text.parse().unwrap())
    }

    #[test]
    fn public_addresses_are_called() {
        for address in [
            "93.184.215.14",
            "8.8.8.8",
            "1.1.1.1",
            "172.32.0.1",
            "100.128.0.1",
            "2606:2800:21f:cb07:6820:80da:af6b:8b2c",
            "64:ff9b::808:808",
            "2002:808:808::1",
        ] {
            assert_eq!(refused(address), None, "{address}");
        }
    }

    #[test]
    fn each_kind_of_internal_address_is_refused() {
        for (address, why) in [
            ("0.0.0.0", "unspecified"),
            ("0.1.2.3", "\"this network\" (0.0.0.0/8)"),
            ("127.0.0.1", "loopback"),
            ("127.255.0.9", "loopback"),
            ("10.1.2.3", "private"),
            ("172.16.0.1", "private"),
            ("172.31.255.255", "private"),
            ("192.168.1.1", "private"),
            ("100.64.0.1", "shared address space (100.64.0.0/10)"),
            ("100.127.255.254", "shared address space (100.64.0.0/10)"),
            ("169.254.169.254", "link-local"),
            ("192.0.0.8", "IETF protocol assignments (192.0.0.0/24)"),
            ("192.0.2.1", "documentation"),
            ("198.51.100.7", "documentation"),
            ("203.0.113.9", "documentation"),
            ("198.18.0.1", "benchmarking (198.18.0.0/15)"),
            ("224.0.0.1", "multicast"),
            ("239.255.255.250", "multicast"),
            ("240.0.0.1", "reserved (240.0.0.0/4)"),
            ("255.255.255.255", "broadcast"),
            ("::", "unspecified"),
            ("::1", "loopback"),
            ("fc00::1", "unique local (fc00::/7)"),
            ("fd12:3456::1", "unique local (fc00::/7)"),
            ("fe80::1", "link-local"),
            ("fec0::1", "site-local (deprecated)"),
            ("ff02::1", "multicast"),
            ("2001:db8::1", "documentation"),
            ("3fff::1", "documentation"),
            ("2001::1", "IETF protocol assignments (2001::/23)"),
            ("::127.0.0.1", "reserved"),
            ("100::1", "reserved"),
        ] {
            assert_eq!(refused(address), Some(why), "{address}");
        }
    }

    #[test]
    fn ipv4_in_ipv6_forms_are_judged_by_their_ipv4_address() {
        assert_eq!(refused("::ffff:127.0.0.1"), Some("loopback"));
        assert_eq!(refused("::ffff:10.0.0.1"), Some("private"));
        assert_eq!(refused("::ffff:169.254.169.254"), Some("link-local"));
        assert_eq!(refused("::ffff:100.64.0.1"), refused("100.64.0.1"));
        assert_eq!(refused("::ffff:8.8.8.8"), None);
        assert_eq!(refused("64:ff9b::a00:1"), Some("private"));
        assert_eq!(refused("64:ff9b::7f00:1"), Some("loopback"));
        assert_eq!(refused("2002:a00:1::1"), Some("private"));
        assert_eq!(refused("2002:7f00:1::"), Some("loopback"));
    }

    /// The cloud's instance metadata service (169.254.169.254, and fd00:ec2::254 on AWS) in
    /// every form that reaches it.
    #[test]
    fn the_metadata_service_is_refused_in_every_form() {
        for address in [
            "169.254.169.254",
            "::ffff:169.254.169.254",
            "::ffff:a9fe:a9fe",
            "64:ff9b::a9fe:a9fe",
            "2002:a9fe:a9fe::1",
        ] {
            assert_eq!(refused(address), Some("link-local"), "{address}");
        }
        assert_eq!(refused("fd00:ec2::254"), Some("unique local (fc00::/7)"));
        assert_eq!(refused("fe80::a9fe:a9fe"), Some("link-local"));
    }

    /// Each private and special-use block at its edges: the first and last address inside, and
    /// the neighbours outside, which are public.
    #[test]
    fn blocks_are_refused_to_their_edges_and_no_further() {
        for (inside, outside) in [
            (
                ["10.0.0.0", "10.255.255.255"],
                ["9.255.255.255", "11.0.0.0"],
            ),
            (
                ["172.16.0.0", "172.31.255.255"],
                ["172.15.255.255", "172.32.0.0"],
            ),
            (
                ["192.168.0.0", "192.168.255.255"],
                ["192.167.255.255", "192.169.0.0"],
            ),
            (
                ["100.64.0.0", "100.127.255.255"],
                ["100.63.255.255", "100.128.0.0"],
            ),
            (
                ["169.254.0.0", "169.254.255.255"],
                ["169.253.255.255", "169.255.0.0"],
            ),
            (
                ["127.0.0.0", "127.255.255.255"],
                ["126.255.255.255", "128.0.0.0"],
            ),
        ] {
            for address in inside {
                assert!(refused(address).is_some(), "{address} is refused");
            }
            for address in outside {
                assert_eq!(refused(address), None, "{address} is public");
            }
        }
        for address in [
            "fc00::",
            "fdff:ffff::1",
            "fe80::",
            "febf:ffff::1",
            "ff00::",
            "::1",
        ] {
            assert!(refused(address).is_some(), "{address} is refused");
        }
        for address in ["2001:4860::8888", "2a00:1450::1", "2600::1"] {
            assert_eq!(refused(address), None, "{address} is public");
        }
    }
}
