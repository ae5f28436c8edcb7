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

    /// A version-7 UUID (RFC 9562): `unix_millis` in its first 48 bits, then 74 random bits.
    /// Unique and unguessable like a version 4, and ordered by time, so that identifiers issued
    /// one after another are stored one after another: the SQLite store appends each new
    /// access token's `jti` to its index instead of rewriting a random page of it.
    fn time_ordered_uuid(&self, unix_millis: u64) -> Uuid {
        let mut bytes = [0u8; 10];
        self.fill(&mut bytes);
        uuid::Builder::from_unix_timestamp_millis(unix_millis, &bytes).into_uuid()
    }

    /// An opaque, URL-safe token of [`TOKEN_BYTES`] random bytes (43 characters).
    fn opaque_token(&self) -> String {
        let mut bytes = [0u8; TOKEN_BYTES];
        self.fill(&mut bytes);
        URL_SAFE_NO_PAD.encode(bytes)
    }
}

impl<T: RandomSource + ?Sized> RandomExt for T {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_ordered_uuids_carry_the_time_and_sort_by_it() {
        let earlier = OsRandom.time_ordered_uuid(1_700_000_000_000);
        let same_millisecond = OsRandom.time_ordered_uuid(1_700_000_000_000);
        let later = OsRandom.time_ordered_uuid(1_700_000_000_001);
        assert_eq!(earlier.get_version_num(), 7);
        assert_eq!(
            earlier.get_timestamp().map(|t| t.to_unix()),
            Some((1_700_000_000, 0))
        );
        assert_ne!(earlier, same_millisecond, "74 random bits tell them apart");
        assert!(earlier.to_string() < later.to_string());
        assert!(same_millisecond.to_string() < later.to_string());
    }
}
