//! Which of a user's second factors an administrator removed. The event names the kind only,
//! as the user's own removals do: the time and the principal tell one passkey's removal from
//! another's, and no credential id (text a browser chose) is written into an event.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RemovedFactor {
    Passkey,
    /// The TOTP secret together with every recovery code left.
    AuthenticatorApp,
}
