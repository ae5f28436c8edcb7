//! RFC 7636 Proof Key for Code Exchange, S256 only: the challenge an authorization request
//! carries and the verifier its token request answers with.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The only `code_challenge_method` accepted; `plain` is refused (docs/decisions.md, "Authorization
/// code flow").
pub const S256: &str = "S256";

/// An S256 challenge is the unpadded base64url of a SHA-256 digest: exactly 43 characters.
pub fn is_well_formed_challenge(challenge: &str) -> bool {
    challenge.len() == 43
        && URL_SAFE_NO_PAD
            .decode(challenge)
            .is_ok_and(|d| d.len() == 32)
}

/// RFC 7636 §4.1: 43 to 128 characters of `[A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~"`.
fn is_well_formed_verifier(verifier: &str) -> bool {
    (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// `BASE64URL(SHA256(verifier))`, the challenge a verifier answers.
pub fn s256_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// RFC 7636 §4.6, compared in constant time so the comparison leaks nothing about the stored
/// challenge. A malformed verifier never matches.
pub fn verify_s256(verifier: &str, challenge: &str) -> bool {
    is_well_formed_verifier(verifier)
        && s256_challenge(verifier)
            .as_bytes()
            .ct_eq(challenge.as_bytes())
            .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7636 Appendix B.
    const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

    #[test]
    fn rfc_7636_appendix_b() {
        assert_eq!(s256_challenge(VERIFIER), CHALLENGE);
        assert!(verify_s256(VERIFIER, CHALLENGE));
        assert!(is_well_formed_challenge(CHALLENGE));
    }

    #[test]
    fn mismatches_and_malformed_verifiers_fail() {
        let other = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXx";
        assert!(!verify_s256(other, CHALLENGE));
        assert!(!verify_s256("short", &s256_challenge("short")));
        assert!(!verify_s256(&format!("{VERIFIER} "), CHALLENGE));
        assert!(!is_well_formed_challenge("plain-text-challenge"));
    }
}
