//! Our keys for one SAML connection: RSA 2048 (what every IdP takes, for signatures and for
//! RSA-OAEP key transport alike), each with a self-signed certificate, since the IdP trusts the
//! certificate it imported with our metadata, not a chain. Made with OpenSSL, which the service
//! links already (passkeys); the keys are sealed before they are stored.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use openssl::asn1::Asn1Time;
use openssl::bn::{BigNum, MsbOption};
use openssl::hash::MessageDigest;
use openssl::pkey::{PKey, Private};
use openssl::rsa::Rsa;
use openssl::sign::{Signer, Verifier};
use openssl::x509::{X509Builder, X509NameBuilder, X509};

use crate::errors::ServerError;

/// About ten years: the IdP holds on to our certificate, and a connection's keys are replaced by
/// adding the IdP anew (or, later, by a refresh of ours), never by letting them expire.
const CERTIFICATE_DAYS: u32 = 3650;

/// A key made now: its PKCS#8 (to seal) and its certificate (base64 DER, for our metadata).
pub struct MadeKey {
    pub pkcs8_der: Vec<u8>,
    pub certificate: String,
}

fn failed(what: &'static str) -> impl Fn(openssl::error::ErrorStack) -> ServerError {
    move |_| ServerError::internal(what)
}

pub fn make_key(common_name: &str) -> Result<MadeKey, ServerError> {
    let rsa = Rsa::generate(2048).map_err(failed("making a SAML key: generate"))?;
    let key = PKey::from_rsa(rsa).map_err(failed("making a SAML key: key"))?;
    let mut name = X509NameBuilder::new().map_err(failed("making a SAML key: name"))?;
    // A common name is at most 64 characters (RFC 5280 upper bound).
    let common_name: String = common_name.chars().take(64).collect();
    name.append_entry_by_text("CN", &common_name)
        .map_err(failed("making a SAML key: name"))?;
    let name = name.build();
    let mut builder = X509Builder::new().map_err(failed("making a SAML key: certificate"))?;
    let mut serial = BigNum::new().map_err(failed("making a SAML key: serial"))?;
    serial
        .rand(127, MsbOption::MAYBE_ZERO, false)
        .map_err(failed("making a SAML key: serial"))?;
    let serial = serial
        .to_asn1_integer()
        .map_err(failed("making a SAML key: serial"))?;
    builder
        .set_version(2)
        .map_err(failed("making a SAML key: certificate"))?;
    builder
        .set_serial_number(&serial)
        .map_err(failed("making a SAML key: serial"))?;
    builder
        .set_subject_name(&name)
        .map_err(failed("making a SAML key: name"))?;
    builder
        .set_issuer_name(&name)
        .map_err(failed("making a SAML key: name"))?;
    builder
        .set_pubkey(&key)
        .map_err(failed("making a SAML key: certificate"))?;
    let not_before = Asn1Time::days_from_now(0).map_err(failed("making a SAML key: validity"))?;
    let not_after =
        Asn1Time::days_from_now(CERTIFICATE_DAYS).map_err(failed("making a SAML key: validity"))?;
    builder
        .set_not_before(&not_before)
        .map_err(failed("making a SAML key: validity"))?;
    builder
        .set_not_after(&not_after)
        .map_err(failed("making a SAML key: validity"))?;
    builder
        .sign(&key, MessageDigest::sha256())
        .map_err(failed("making a SAML key: sign"))?;
    let certificate = builder
        .build()
        .to_der()
        .map_err(failed("making a SAML key: certificate"))?;
    let pkcs8_der = key
        .private_key_to_pkcs8()
        .map_err(failed("making a SAML key: pkcs8"))?;
    Ok(MadeKey {
        pkcs8_der,
        certificate: STANDARD.encode(certificate),
    })
}

/// An opened key, for signing our messages.
pub fn private_key(pkcs8_der: &[u8]) -> Result<PKey<Private>, ServerError> {
    PKey::private_key_from_pkcs8(pkcs8_der)
        .map_err(|_| ServerError::internal("a SAML key is not PKCS#8"))
}

/// RSA-SHA256 (`http://www.w3.org/2001/04/xmldsig-more#rsa-sha256`) over `data`.
pub fn sign_rsa_sha256(key: &PKey<Private>, data: &[u8]) -> Result<Vec<u8>, ServerError> {
    let mut signer =
        Signer::new(MessageDigest::sha256(), key).map_err(failed("making a SAML key: signer"))?;
    signer
        .update(data)
        .map_err(failed("making a SAML key: sign"))?;
    signer
        .sign_to_vec()
        .map_err(failed("making a SAML key: sign"))
}

/// Whether one of `certificates` (DER) signed `data` with RSA-SHA256.
#[cfg(test)]
pub fn verify_rsa_sha256(certificates: &[Vec<u8>], data: &[u8], signature: &[u8]) -> bool {
    verify_rsa(MessageDigest::sha256(), certificates, data, signature)
}

/// Whether one of `certificates` (DER) signed `data` with RSA PKCS#1 v1.5 over `digest`.
pub fn verify_rsa(
    digest: MessageDigest,
    certificates: &[Vec<u8>],
    data: &[u8],
    signature: &[u8],
) -> bool {
    certificates.iter().any(|der| {
        let Ok(public) = X509::from_der(der).and_then(|certificate| certificate.public_key())
        else {
            return false;
        };
        if public.rsa().is_err() {
            return false;
        }
        Verifier::new(digest, &public)
            .and_then(|mut verifier| {
                verifier.update(data)?;
                verifier.verify(signature)
            })
            .unwrap_or(false)
    })
}

/// The key as PEM, as the XML Encryption library loads it.
pub fn private_key_pem(pkcs8_der: &[u8]) -> Result<Vec<u8>, ServerError> {
    private_key(pkcs8_der)?
        .private_key_to_pem_pkcs8()
        .map_err(|_| ServerError::internal("a SAML key does not encode"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_made_key_signs_what_its_certificate_verifies() {
        let made = make_key("https://sp.example/federation/v0/saml/x/metadata").unwrap();
        let certificate = STANDARD.decode(&made.certificate).unwrap();
        let key = private_key(&made.pkcs8_der).unwrap();
        let signature = sign_rsa_sha256(&key, b"SAMLRequest=x").unwrap();
        assert!(verify_rsa_sha256(
            std::slice::from_ref(&certificate),
            b"SAMLRequest=x",
            &signature
        ));
        assert!(!verify_rsa_sha256(
            &[certificate],
            b"SAMLRequest=y",
            &signature
        ));
        let other = make_key("other").unwrap();
        let other = STANDARD.decode(other.certificate).unwrap();
        assert!(!verify_rsa_sha256(&[other], b"SAMLRequest=x", &signature));
    }
}
