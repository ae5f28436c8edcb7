//! The second factors' key: the one [`Sealer`] (AES-256-GCM) under a key derived from the
//! deployment's server secret for this purpose alone, for the TOTP secrets at rest, the
//! enrolment in the form and the sign-in interaction's state. The context (whose secret, which
//! enrolment) is the associated data, so a sealed value opens only where it was sealed for.

use crate::errors::ServerError;
use crate::services::Services;
use crate::signing::seal::Sealer;

/// The key ring's derivation purpose: a key of its own, never the pages' cookie key.
const KEY_PURPOSE: &str = "second-factor-v1";

/// The second factors' sealer. Fails (503) only while the key ring has never been read and
/// cannot be now.
pub async fn sealer(services: &Services) -> Result<Sealer, ServerError> {
    let key = services.codec.keys().derive_key(KEY_PURPOSE).await?;
    Ok(Sealer::new(key))
}
