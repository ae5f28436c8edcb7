//! Randomness as an injected dependency. Production uses the operating system's CSPRNG; the
//! trait exists so tests can observe or fix what is generated.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use rand::RngCore;
use uuid::Uuid;

pub trait RandomSource: Send + Sync + std::fmt::Debug {
    fn fill(&self, buf: &mut [u8]);
}

#[derive(Debug, Default, Clone, Copy)]
pub struct OsRandom;

impl RandomSource for OsRandom {
    fn fill(&self, buf: &mut [u8]) {
        rand::rngs::OsRng.fill_bytes(buf);
    }
}

/// Bytes of randomness in every opaque bearer credential we issue (refresh tokens, company auth
/// tokens): 256 bits, as RFC 9700 and the contract ask.
pub const TOKEN_BYTES: usize = 32;

/// Convenience constructors over any [`RandomSource`].
pub trait RandomExt: RandomSource {
    /// A version-4 UUID from this source.
    fn uuid(&self) -> Uuid {
        let mut bytes = [0u8; 16];
        self.fill(&mut bytes);
        uuid::Builder::from_random_bytes(bytes).into_uuid()
    }

    /// An opaque, URL-safe token of [`TOKEN_BYTES`] random bytes (43 characters).
    fn opaque_token(&self) -> String {
        let mut bytes = [0u8; TOKEN_BYTES];
        self.fill(&mut bytes);
        URL_SAFE_NO_PAD.encode(bytes)
    }
}

impl<T: RandomSource + ?Sized> RandomExt for T {}
