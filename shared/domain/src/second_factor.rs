//! Second factors: authenticator-app codes (TOTP, RFC 6238) and one-time
//! recovery codes, and what a company requires of its users' sign-ins.
//!
//! The TOTP secret is the one value here that must be read back, so it is stored sealed
//! (`core` encrypts it with a key derived from the deployment's server secret); recovery codes
//! are only ever compared, so only their SHA-256 digests are kept, like tokens'.

use serde::{Deserialize, Serialize};
use totp_rs::{Algorithm, TOTP};

use crate::clock::UnixTime;
use crate::ids::PrincipalId;
use crate::random::RandomSource;
use crate::secrets::TokenHash;

/// RFC 6238's defaults, which every authenticator app supports: HMAC-SHA-1, 6 digits, 30 s.
pub const TOTP_DIGITS: usize = 6;
pub const TOTP_STEP_SECONDS: u64 = 30;
/// Steps either side of the current one that are accepted (clock drift, typing time).
pub const TOTP_SKEW_STEPS: i64 = 1;
/// RFC 4226 §4 recommends 160 bits.
pub const TOTP_SECRET_BYTES: usize = 20;
/// Recovery codes handed out at enrolment, each usable once.
pub const RECOVERY_CODE_COUNT: usize = 10;
/// Recovery-code characters: no vowels (no words), no look-alikes (0/O, 1/l).
const RECOVERY_ALPHABET: &[u8] = b"23456789bcdfghjkmnpqrstvwxz";
/// 10 characters of 27: over 47 bits each, far beyond what the lockout lets anyone guess.
const RECOVERY_CODE_CHARS: usize = 10;

/// A TOTP secret in clear: only in memory, never logged (no `Debug` of the bytes).
#[derive(Clone, PartialEq, Eq)]
pub struct TotpSecret(Vec<u8>);

impl std::fmt::Debug for TotpSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TotpSecret(..)")
    }
}

impl TotpSecret {
    pub fn generate(random: &dyn RandomSource) -> Self {
        let mut bytes = vec![0u8; TOTP_SECRET_BYTES];
        random.fill(&mut bytes);
        Self(bytes)
    }

    pub fn from_bytes(bytes: Vec<u8>) -> Self {
        Self(bytes)
    }

    /// The secret as typed from the enrolment page (base32, as [`Self::base32`] gives it).
    pub fn from_base32(text: &str) -> Option<Self> {
        totp_rs::Secret::Encoded(text.trim().to_owned())
            .to_bytes()
            .ok()
            .map(Self)
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    fn totp(&self, digits: usize) -> TOTP {
        // Unchecked: our secrets are 160 bits and the digits constant; RFC 6238's own test
        // vectors use 8.
        TOTP::new_unchecked(
            Algorithm::SHA1,
            digits,
            0,
            TOTP_STEP_SECONDS,
            self.0.clone(),
        )
    }

    /// The secret as authenticator apps take it typed in: base32, no padding.
    pub fn base32(&self) -> String {
        self.totp(TOTP_DIGITS).get_secret_base32()
    }

    /// The Key URI (`otpauth://totp/...`) that authenticator apps read from a QR code.
    pub fn otpauth_uri(&self, issuer: &str, account: &str) -> String {
        let label = format!("{issuer}:{account}");
        let label: String = url::form_urlencoded::byte_serialize(label.as_bytes()).collect();
        let issuer: String = url::form_urlencoded::byte_serialize(issuer.as_bytes()).collect();
        format!(
            "otpauth://totp/{}?secret={}&issuer={issuer}&algorithm=SHA1&digits={TOTP_DIGITS}&period={TOTP_STEP_SECONDS}",
            label.replace('+', "%20"),
            self.base32(),
        )
    }

    /// The code of the step that contains `time` (seconds since the epoch).
    pub fn code_at(&self, time: UnixTime) -> String {
        self.code_with(TOTP_DIGITS, time)
    }

    fn code_with(&self, digits: usize, time: UnixTime) -> String {
        self.totp(digits)
            .generate(u64::try_from(time).unwrap_or_default())
    }

    /// The step of the window around `now` whose code `code` is, if that step is later than
    /// `last_used` (a code is good once: the step it was used in is remembered). Constant time
    /// per comparison.
    pub fn verify(&self, code: &str, now: UnixTime, last_used: Option<i64>) -> Option<i64> {
        let code = code.trim();
        if code.len() != TOTP_DIGITS || !code.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let step_seconds = i64::try_from(TOTP_STEP_SECONDS).expect("30 fits");
        let current = now.div_euclid(step_seconds);
        let mut matched = None;
        for step in current - TOTP_SKEW_STEPS..=current + TOTP_SKEW_STEPS {
            let expected = self.code_at(step * step_seconds);
            let equal: bool =
                subtle::ConstantTimeEq::ct_eq(expected.as_bytes(), code.as_bytes()).into();
            if equal && last_used.is_none_or(|last| step > last) {
                matched = Some(step);
            }
        }
        matched
    }
}

/// One user's authenticator app: the secret sealed, the last step a code was accepted in, and
/// the digests of the recovery codes not used yet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TotpFactor {
    pub principal_id: PrincipalId,
    /// base64url(nonce ‖ AES-256-GCM ciphertext) of the secret, bound to the principal.
    pub sealed_secret: String,
    /// The step (Unix time / 30) of the last accepted code: only later steps are accepted.
    pub last_used_step: i64,
    /// SHA-256 of each recovery code still unused.
    pub recovery_codes: Vec<TokenHash>,
    pub enrolled_at: UnixTime,
}

/// Fresh recovery codes (shown once) and their digests (stored).
pub fn recovery_codes(random: &dyn RandomSource) -> (Vec<String>, Vec<TokenHash>) {
    let codes: Vec<String> = (0..RECOVERY_CODE_COUNT)
        .map(|_| recovery_code(random))
        .collect();
    let hashes = codes.iter().map(|code| TokenHash::of(code)).collect();
    (codes, hashes)
}

fn recovery_code(random: &dyn RandomSource) -> String {
    let mut bytes = [0u8; RECOVERY_CODE_CHARS];
    random.fill(&mut bytes);
    let alphabet_len = u8::try_from(RECOVERY_ALPHABET.len()).expect("27 fits");
    // 27 does not divide 256: bytes at or above 243 would favour some characters; they are
    // drawn again.
    let limit = 256 - 256 % u16::from(alphabet_len);
    let mut code = String::with_capacity(RECOVERY_CODE_CHARS + 1);
    for mut byte in bytes {
        while u16::from(byte) >= limit {
            let mut again = [0u8; 1];
            random.fill(&mut again);
            byte = again[0];
        }
        if code.len() == RECOVERY_CODE_CHARS / 2 {
            code.push('-');
        }
        code.push(char::from(
            RECOVERY_ALPHABET[usize::from(byte % alphabet_len)],
        ));
    }
    code
}

/// A typed recovery code in the form it was handed out: lower case, the dash where it was
/// (users may leave it out or add spaces).
pub fn normalise_recovery_code(typed: &str) -> String {
    let compact: String = typed
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect();
    if compact.len() == RECOVERY_CODE_CHARS {
        format!(
            "{}-{}",
            &compact[..RECOVERY_CODE_CHARS / 2],
            &compact[RECOVERY_CODE_CHARS / 2..]
        )
    } else {
        compact
    }
}

/// Whether a company's users must finish page sign-ins with a second factor
/// (`tokenctl companies set-mfa`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MfaPolicy {
    #[default]
    Optional,
    Required,
}

impl MfaPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Optional => "optional",
            Self::Required => "required",
        }
    }

    pub fn is_required(self) -> bool {
        self == Self::Required
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::OsRandom;

    /// RFC 6238 Appendix B, SHA-1 (its ASCII seed, 8 digits).
    #[test]
    fn rfc_6238_test_vectors() {
        let secret = TotpSecret::from_bytes(b"12345678901234567890".to_vec());
        for (time, code) in [
            (59, "94287082"),
            (1_111_111_109, "07081804"),
            (1_111_111_111, "14050471"),
            (1_234_567_890, "89005924"),
            (2_000_000_000, "69279037"),
            (20_000_000_000, "65353130"),
        ] {
            assert_eq!(secret.code_with(8, time), code, "at {time}");
        }
        // The 6-digit code is the same number's last six digits.
        assert_eq!(secret.code_at(59), "287082");
    }

    #[test]
    fn a_code_is_accepted_one_step_either_side_and_once() {
        let secret = TotpSecret::generate(&OsRandom);
        let now = 1_700_000_015; // step 56_666_667
        let step = now / 30;
        assert_eq!(secret.verify(&secret.code_at(now), now, None), Some(step));
        assert_eq!(
            secret.verify(&secret.code_at(now - 30), now, None),
            Some(step - 1)
        );
        assert_eq!(
            secret.verify(&secret.code_at(now + 30), now, None),
            Some(step + 1)
        );
        assert_eq!(
            secret.verify(&secret.code_at(now - 60), now, None),
            None,
            "two steps old"
        );
        assert_eq!(secret.verify(&secret.code_at(now + 60), now, None), None);
        assert_eq!(
            secret.verify(&secret.code_at(now), now, Some(step)),
            None,
            "the step already used: a replay"
        );
        assert_eq!(
            secret.verify(&secret.code_at(now - 30), now, Some(step)),
            None,
            "an older step after a newer one"
        );
        assert_eq!(
            secret.verify(&secret.code_at(now + 30), now, Some(step)),
            Some(step + 1)
        );
    }

    #[test]
    fn wrong_and_malformed_codes_are_refused() {
        let secret = TotpSecret::generate(&OsRandom);
        let now = 1_700_000_000;
        let right = secret.code_at(now);
        let wrong = format!("{:06}", (right.parse::<u32>().unwrap() + 1) % 1_000_000);
        assert_eq!(secret.verify(&wrong, now, None), None);
        for typed in ["", "12345", "1234567", "abcdef", "12 456"] {
            assert_eq!(secret.verify(typed, now, None), None, "{typed:?}");
        }
        assert!(
            secret.verify(&format!(" {right} "), now, None).is_some(),
            "spaces around"
        );
        let other = TotpSecret::generate(&OsRandom);
        assert_eq!(
            other.verify(&right, now, None).is_some(),
            other.code_at(now) == right
        );
    }

    #[test]
    fn the_key_uri_names_the_account_and_the_parameters() {
        let secret = TotpSecret::from_bytes(b"12345678901234567890".to_vec());
        assert_eq!(secret.base32(), "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ");
        assert_eq!(
            TotpSecret::from_base32(&secret.base32()),
            Some(secret.clone())
        );
        let uri = secret.otpauth_uri("Token Service", "ada@example.com");
        assert_eq!(
            uri,
            "otpauth://totp/Token%20Service%3Aada%40example.com?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ\
             &issuer=Token+Service&algorithm=SHA1&digits=6&period=30"
        );
    }

    #[test]
    fn ten_distinct_recovery_codes_of_which_only_digests_are_kept() {
        let (codes, hashes) = recovery_codes(&OsRandom);
        assert_eq!(codes.len(), RECOVERY_CODE_COUNT);
        let distinct: std::collections::BTreeSet<_> = codes.iter().collect();
        assert_eq!(distinct.len(), RECOVERY_CODE_COUNT);
        for (code, hash) in codes.iter().zip(&hashes) {
            assert_eq!(code.len(), 11, "{code}");
            assert!(hash.verify(code));
            assert_eq!(
                &normalise_recovery_code(&code.to_uppercase().replace('-', " ")),
                code
            );
        }
        let stored = serde_json::to_string(&hashes).unwrap();
        assert!(!stored.contains(&codes[0]));
    }

    #[test]
    fn the_policy_defaults_to_optional() {
        assert_eq!(MfaPolicy::default(), MfaPolicy::Optional);
        assert_eq!(
            serde_json::to_string(&MfaPolicy::Required).unwrap(),
            "\"required\""
        );
    }
}
