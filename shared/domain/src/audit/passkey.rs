//! What passkey sign-ins record when they are refused: why, without naming the credential (an
//! unknown one may be a probe for accounts).

use serde::{Deserialize, Serialize};

/// Why a passkey answer did not sign anyone in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PasskeyRefusal {
    /// The ceremony was unknown, already answered or expired (a replayed answer among them).
    Ceremony,
    /// No passkey of that user with that credential id (never registered, or removed).
    UnknownCredential,
    /// The answer did not verify: another origin or RP ID, a bad signature, no user
    /// verification, a malformed answer.
    Invalid,
    /// The passkey verified, but its user may not sign in (disabled, or gone).
    UserRefused,
}
