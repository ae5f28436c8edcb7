//! The HTTP-Redirect binding (SAML bindings §3.4): a message DEFLATEd, base64'd and put in the
//! query, signed over the query's own octets (`SAMLRequest=…&RelayState=…&SigAlg=…`, as sent,
//! still URL-encoded) rather than inside the XML. What we receive is checked against the IdP's
//! certificates before a byte of the XML is read, and inflated to at most 256 KiB.

use std::io::{Read, Write};

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use flate2::read::DeflateDecoder;
use flate2::write::DeflateEncoder;
use flate2::Compression;
use openssl::hash::MessageDigest;
use openssl::pkey::{PKey, Private};

use super::keys;
use super::xml::MAX_DOCUMENT_BYTES;
use crate::errors::ServerError;

pub const RSA_SHA256: &str = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256";
const RSA_SHA384: &str = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha384";
const RSA_SHA512: &str = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512";

/// Which parameter carries the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carrier {
    Request,
    Response,
}

impl Carrier {
    fn parameter(self) -> &'static str {
        match self {
            Self::Request => "SAMLRequest",
            Self::Response => "SAMLResponse",
        }
    }
}

fn form_encode(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

/// `destination` with the message (and `RelayState`) in its query, signed with `key` when one
/// is given.
pub fn encode(
    destination: &str,
    carrier: Carrier,
    xml: &str,
    relay_state: Option<&str>,
    key: Option<&PKey<Private>>,
) -> Result<String, ServerError> {
    let mut deflater = DeflateEncoder::new(Vec::new(), Compression::default());
    deflater
        .write_all(xml.as_bytes())
        .and_then(|()| deflater.finish())
        .map_err(|_| ServerError::internal("deflating a SAML message"))
        .and_then(|deflated| {
            let mut signed = format!(
                "{}={}",
                carrier.parameter(),
                form_encode(&STANDARD.encode(deflated))
            );
            if let Some(relay_state) = relay_state {
                signed.push_str("&RelayState=");
                signed.push_str(&form_encode(relay_state));
            }
            if let Some(key) = key {
                signed.push_str("&SigAlg=");
                signed.push_str(&form_encode(RSA_SHA256));
                let signature = keys::sign_rsa_sha256(key, signed.as_bytes())?;
                signed.push_str("&Signature=");
                signed.push_str(&form_encode(&STANDARD.encode(signature)));
            }
            let separator = if destination.contains('?') { '&' } else { '?' };
            Ok(format!("{destination}{separator}{signed}"))
        })
}

/// A message received over the binding, its signature checked.
#[derive(Debug)]
pub struct Received {
    pub carrier: Carrier,
    pub xml: String,
    pub relay_state: Option<String>,
}

/// Why a redirect-bound message is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectRefusal {
    Malformed,
    Unsigned,
    /// A `SigAlg` other than RSA with SHA-256 or stronger (SHA-1 among them).
    WeakAlgorithm,
    BadSignature,
    TooLarge,
    /// Signed, but not from the IdP or not to our single logout service.
    Misaddressed,
}

impl RedirectRefusal {
    pub fn reason(self) -> &'static str {
        match self {
            Self::Malformed => "malformed",
            Self::Unsigned => "unsigned",
            Self::WeakAlgorithm => "weak_algorithm",
            Self::BadSignature => "bad_signature",
            Self::TooLarge => "too_large",
            Self::Misaddressed => "misaddressed",
        }
    }
}

/// The raw query's parameters, their values still URL-encoded (the signature covers them so).
fn raw_pairs(query: &str) -> Vec<(&str, &str)> {
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| pair.split_once('=').unwrap_or((pair, "")))
        .collect()
}

fn form_decode(value: &str) -> String {
    url::form_urlencoded::parse(format!("v={value}").as_bytes())
        .next()
        .map(|(_, value)| value.into_owned())
        .unwrap_or_default()
}

/// The message in `query`, accepted only signed by one of `certificates` (DER).
pub fn decode(query: &str, certificates: &[Vec<u8>]) -> Result<Received, RedirectRefusal> {
    let pairs = raw_pairs(query);
    let one = |name: &str| -> Result<Option<&str>, RedirectRefusal> {
        let mut found = pairs.iter().filter(|(key, _)| *key == name);
        let first = found.next().map(|(_, value)| *value);
        if found.next().is_some() {
            return Err(RedirectRefusal::Malformed);
        }
        Ok(first)
    };
    let (carrier, message) = match (one("SAMLRequest")?, one("SAMLResponse")?) {
        (Some(message), None) => (Carrier::Request, message),
        (None, Some(message)) => (Carrier::Response, message),
        _ => return Err(RedirectRefusal::Malformed),
    };
    let relay_state = one("RelayState")?;
    let (Some(algorithm), Some(signature)) = (one("SigAlg")?, one("Signature")?) else {
        return Err(RedirectRefusal::Unsigned);
    };
    let digest = match form_decode(algorithm).as_str() {
        RSA_SHA256 => MessageDigest::sha256(),
        RSA_SHA384 => MessageDigest::sha384(),
        RSA_SHA512 => MessageDigest::sha512(),
        _ => return Err(RedirectRefusal::WeakAlgorithm),
    };
    let mut signed = format!("{}={message}", carrier.parameter());
    if let Some(relay_state) = relay_state {
        signed.push_str("&RelayState=");
        signed.push_str(relay_state);
    }
    signed.push_str("&SigAlg=");
    signed.push_str(algorithm);
    let signature = STANDARD
        .decode(form_decode(signature))
        .map_err(|_| RedirectRefusal::Malformed)?;
    if !keys::verify_rsa(digest, certificates, signed.as_bytes(), &signature) {
        return Err(RedirectRefusal::BadSignature);
    }
    let deflated = STANDARD
        .decode(form_decode(message))
        .map_err(|_| RedirectRefusal::Malformed)?;
    let mut xml = String::new();
    DeflateDecoder::new(deflated.as_slice())
        .take(MAX_DOCUMENT_BYTES as u64 + 1)
        .read_to_string(&mut xml)
        .map_err(|_| RedirectRefusal::Malformed)?;
    if xml.len() > MAX_DOCUMENT_BYTES {
        return Err(RedirectRefusal::TooLarge);
    }
    Ok(Received {
        carrier,
        xml,
        relay_state: relay_state.map(form_decode),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key_and_certificate() -> (PKey<Private>, Vec<u8>) {
        let made = keys::make_key("sp").unwrap();
        (
            keys::private_key(&made.pkcs8_der).unwrap(),
            STANDARD.decode(made.certificate).unwrap(),
        )
    }

    #[test]
    fn what_we_sign_decodes_and_verifies_and_a_change_does_not() {
        let (key, certificate) = key_and_certificate();
        let xml = "<samlp:LogoutRequest ID=\"_1\"/>";
        let url = encode(
            "https://idp.example/slo?tenant=a",
            Carrier::Request,
            xml,
            Some("r s"),
            Some(&key),
        )
        .unwrap();
        let query = url.split_once("?tenant=a&").unwrap().1;
        let received = decode(query, std::slice::from_ref(&certificate)).unwrap();
        assert_eq!(
            (received.carrier, received.xml.as_str()),
            (Carrier::Request, xml)
        );
        assert_eq!(received.relay_state.as_deref(), Some("r s"));
        let changed = query.replace("RelayState=r+s", "RelayState=r+t");
        assert_eq!(
            decode(&changed, std::slice::from_ref(&certificate)).err(),
            Some(RedirectRefusal::BadSignature)
        );
        let (_, other) = key_and_certificate();
        assert_eq!(
            decode(query, &[other]).err(),
            Some(RedirectRefusal::BadSignature)
        );
        let unsigned =
            encode("https://idp.example/slo", Carrier::Request, xml, None, None).unwrap();
        let query = unsigned.split_once('?').unwrap().1;
        assert_eq!(
            decode(query, std::slice::from_ref(&certificate)).err(),
            Some(RedirectRefusal::Unsigned)
        );
        let sha1 = format!(
            "{query}&SigAlg={}&Signature=AAAA",
            form_encode("http://www.w3.org/2000/09/xmldsig#rsa-sha1")
        );
        assert_eq!(
            decode(&sha1, &[certificate]).err(),
            Some(RedirectRefusal::WeakAlgorithm)
        );
    }
}
