//! Where a one-time password is sent: the `channel_type` / `channel_handle` pair of the
//! one-time-password request (`POST /oauth2/v0/otp`). Only e-mail exists.

use std::fmt;

use crate::secrets::TokenHash;

/// The longest address SMTP can carry in a forward path (RFC 5321 §4.5.3.1.3, less the brackets).
const MAX_ADDRESS_LENGTH: usize = 254;

/// A syntactically valid e-mail address, as the caller spelled it (mail goes to that spelling).
#[derive(Clone, PartialEq, Eq)]
pub struct ChannelHandle(String);

/// lettre 0.11's `Address::from_str`, on the crates it uses (`email_address`, `idna`), so that
/// the domain layer needs no mail library: the local part after the last `@`'s left is valid,
/// and the domain is a valid name (as written or in its ASCII form) or an IP address, bracketed
/// or not.
pub fn is_mail_address(text: &str) -> bool {
    let Some((user, domain)) = text.rsplit_once('@') else {
        return false;
    };
    let domain_ascii = |domain: &str| {
        let ip = domain
            .strip_prefix('[')
            .and_then(|ip| ip.strip_suffix(']'))
            .unwrap_or(domain);
        email_address::EmailAddress::is_valid_domain(domain)
            || ip.parse::<std::net::IpAddr>().is_ok()
    };
    email_address::EmailAddress::is_valid_local_part(user)
        && (domain_ascii(domain)
            || idna::domain_to_ascii(domain).is_ok_and(|ascii| domain_ascii(&ascii)))
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("channel_handle is not a valid e-mail address")]
pub struct InvalidChannelHandle;

impl ChannelHandle {
    /// Accepts `local@domain` as lettre's address parser does ([`is_mail_address`]: the address
    /// must be deliverable by the mailer that sends to it), without surrounding whitespace, display names or control
    /// characters, and at most 254 characters long.
    pub fn parse(text: &str) -> Result<Self, InvalidChannelHandle> {
        let text = text.trim();
        if text.is_empty()
            || text.len() > MAX_ADDRESS_LENGTH
            || text.chars().any(|c| c.is_whitespace() || c.is_control())
        {
            return Err(InvalidChannelHandle);
        }
        if !is_mail_address(text) {
            return Err(InvalidChannelHandle);
        }
        Ok(Self(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The store key of this address. Addresses are case-insensitive here (`tokenctl`'s `--email`
    /// is unique case-insensitively: docs/decisions.md, "Administration (tokenctl)"), so
    /// `Ann@Example.com` and `ann@example.com` share their open passwords and their request cap.
    pub fn key(&self) -> AddressKey {
        AddressKey(TokenHash::of(&self.0.to_lowercase()))
    }
}

/// An address is personal data: debug prints show only its domain.
impl fmt::Debug for ChannelHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let domain = self.0.rsplit_once('@').map_or("", |(_, domain)| domain);
        write!(f, "ChannelHandle(…@{domain})")
    }
}

/// The SHA-256 digest of the lower-cased address: what the store keys one-time passwords by, so
/// the store holds no address in the clear.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AddressKey(pub TokenHash);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_ordinary_addresses_and_keys_them_case_insensitively() {
        let mixed = ChannelHandle::parse(" Ann.Lee+otp@Example.COM ").unwrap();
        assert_eq!(mixed.as_str(), "Ann.Lee+otp@Example.COM");
        assert_eq!(
            mixed.key(),
            ChannelHandle::parse("ann.lee+otp@example.com")
                .unwrap()
                .key()
        );
        assert_ne!(
            mixed.key(),
            ChannelHandle::parse("ann@example.com").unwrap().key()
        );
    }

    #[test]
    fn rejects_malformed_addresses() {
        let too_long = format!("{}@example.com", "a".repeat(250));
        for bad in [
            "",
            "ann",
            "ann@",
            "@example.com",
            "ann@@example.com",
            "ann lee@example.com",
            "Ann <ann@example.com>",
            "ann@example.com\r\nBcc: eve@example.com",
            too_long.as_str(),
        ] {
            assert_eq!(
                ChannelHandle::parse(bad),
                Err(InvalidChannelHandle),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn debug_hides_the_local_part() {
        let handle = ChannelHandle::parse("ann@example.com").unwrap();
        assert_eq!(format!("{handle:?}"), "ChannelHandle(…@example.com)");
    }

    #[test]
    fn addresses_are_accepted_as_lettre_accepts_them() {
        for text in [
            "ann@example.com",
            "a.b+c@sub.example.co.uk",
            "ann@[127.0.0.1]",
            "ann@127.0.0.1",
            "ann@[::1]",
            "ann@bücher.example",
            "\"quoted user\"@example.com",
            "ann@",
            "@example.com",
            "annexample.com",
            "ann@@example.com",
            "a@b@example.com",
            "ann@exa mple.com",
            "ann@-example.com",
            "ann@example..com",
            "ann..b@example.com",
        ] {
            assert_eq!(
                is_mail_address(text),
                text.parse::<lettre::Address>().is_ok(),
                "{text}"
            );
        }
    }
}
