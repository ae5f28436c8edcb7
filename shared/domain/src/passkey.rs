//! Passkeys (WebAuthn; docs/decisions.md, "Passkeys"): a user's registered credentials, and the
//! state of a ceremony between its two requests (the options sent to the browser, then its
//! answer).
//!
//! The WebAuthn library's own values (the credential's public key, counter and backup flags;
//! a ceremony's challenge) are kept here as the JSON it serialises them to: the store keeps
//! them, only the protocol layer reads them.

use serde::{Deserialize, Serialize};

use crate::clock::UnixTime;
use crate::ids::PrincipalId;
use crate::secrets::TokenHash;

/// How long the browser has between the options and its answer (WebAuthn's own timeout is
/// shorter; the margin covers a slow user on the authenticator's prompt).
pub const PASSKEY_CEREMONY_TTL_SECONDS: UnixTime = 300;

/// The longest name a user may give a passkey, in characters.
pub const PASSKEY_NAME_MAX_CHARS: usize = 64;

/// A user's registered passkey. Its key is the user and the credential id: a discoverable
/// credential names both (the user handle is the principal id), so a sign-in reads one item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PasskeyCredential {
    pub principal_id: PrincipalId,
    /// The credential id, base64url without padding.
    pub credential_id: String,
    /// The user's name for it, shown on the account page.
    pub name: String,
    /// The WebAuthn library's serialised credential (public key, signature counter, backup
    /// state); replaced after each sign-in with what the library answers.
    pub passkey: String,
    pub created_at: UnixTime,
    pub last_used_at: Option<UnixTime>,
}

/// What a ceremony is for: adding a passkey to a signed-in user's account, or signing in with
/// any discoverable one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CeremonyPurpose {
    Registration { principal_id: PrincipalId },
    Authentication,
}

/// A ceremony's server-side state, from the options until the browser's answer. Stored under the
/// digest of the random id the browser holds, taken (deleted) by the first answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PasskeyCeremony {
    pub id_hash: TokenHash,
    pub purpose: CeremonyPurpose,
    /// The WebAuthn library's serialised ceremony state (the challenge among it).
    pub state: String,
    pub created_at: UnixTime,
    /// The TTL attribute; the ceremony is refused from this second on.
    pub expires_at: UnixTime,
}

/// A passkey's name as the user typed it: trimmed, control characters removed, at most
/// [`PASSKEY_NAME_MAX_CHARS`]; `None` when nothing is left.
pub fn passkey_name(typed: &str) -> Option<String> {
    let name: String = typed
        .chars()
        .filter(|c| !c.is_control())
        .collect::<String>()
        .trim()
        .chars()
        .take(PASSKEY_NAME_MAX_CHARS)
        .collect();
    let name = name.trim_end().to_owned();
    (!name.is_empty()).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_trimmed_bounded_and_never_empty() {
        assert_eq!(passkey_name("  Laptop \n"), Some("Laptop".to_owned()));
        assert_eq!(passkey_name("a\u{7}b"), Some("ab".to_owned()));
        assert_eq!(passkey_name(" \t "), None);
        let long = "x".repeat(PASSKEY_NAME_MAX_CHARS + 10);
        assert_eq!(
            passkey_name(&long).map(|name| name.chars().count()),
            Some(PASSKEY_NAME_MAX_CHARS)
        );
    }

    #[test]
    fn the_purpose_serialises_with_its_kind() {
        let json = serde_json::to_string(&CeremonyPurpose::Authentication).unwrap();
        assert_eq!(json, r#"{"kind":"authentication"}"#);
    }
}
