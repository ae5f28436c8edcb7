//! What a refresh token names: since a rotation stopped writing a record per token
//! (docs/decisions.md, "What a refresh writes"), a refresh token carries its family's id and its
//! generation beside its 256 bits of secret, so that its lookup reads the family, whose current
//! token's digest it is checked against. The wire form is still one opaque URL-safe string:
//! base64url (no padding) of a version byte, the family id, the generation (big-endian) and the
//! secret, 71 characters. Tokens issued before it (43 characters of secret alone) parse as no
//! name and are looked up by their digest, as they always were.
//!
//! The name is no secret: the family's id is what introspection and the audit trail show its
//! owner anyway, and without the secret it refreshes nothing.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use uuid::Uuid;

use crate::random::TOKEN_BYTES;
use crate::secrets::Secret;
use crate::FamilyId;

/// The first byte of the decoded token: a later form can be told from this one.
const FORM: u8 = 1;
const FAMILY_BYTES: usize = 16;
const GENERATION_BYTES: usize = 4;
const DECODED_BYTES: usize = 1 + FAMILY_BYTES + GENERATION_BYTES + TOKEN_BYTES;

/// The family and generation a refresh token names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefreshTokenName {
    pub family_id: FamilyId,
    /// 0 for a family's first token, +1 per rotation ([`crate::Family::generation`]).
    pub generation: u32,
}

impl RefreshTokenName {
    pub fn new(family_id: FamilyId, generation: u32) -> Self {
        Self {
            family_id,
            generation,
        }
    }

    /// The token of this name with `secret` (random for a family's first token, derived for a
    /// successor).
    pub fn token(&self, secret: &[u8; TOKEN_BYTES]) -> Secret {
        let mut bytes = Vec::with_capacity(DECODED_BYTES);
        bytes.push(FORM);
        bytes.extend_from_slice(self.family_id.as_uuid().as_bytes());
        bytes.extend_from_slice(&self.generation.to_be_bytes());
        bytes.extend_from_slice(secret);
        Secret::new(URL_SAFE_NO_PAD.encode(bytes))
    }

    /// The name `token` carries; `None` for a token of the older, unnamed form (or none of
    /// ours), which only its digest can find.
    pub fn of(token: &Secret) -> Option<Self> {
        let text = token.expose();
        // Checked before decoding, so that no hostile input is decoded at length.
        if text.len() != URL_SAFE_NO_PAD.encode([0u8; DECODED_BYTES]).len() {
            return None;
        }
        let bytes = URL_SAFE_NO_PAD.decode(text).ok()?;
        let (form, rest) = bytes.split_first()?;
        if *form != FORM || rest.len() != DECODED_BYTES - 1 {
            return None;
        }
        let (family, rest) = rest.split_at(FAMILY_BYTES);
        let (generation, _secret) = rest.split_at(GENERATION_BYTES);
        Some(Self {
            family_id: FamilyId::new(Uuid::from_slice(family).ok()?),
            generation: u32::from_be_bytes(generation.try_into().ok()?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::{OsRandom, RandomExt};

    #[test]
    fn a_token_names_its_family_and_generation() {
        let name = RefreshTokenName::new(FamilyId::new(OsRandom.uuid()), 41);
        let token = name.token(&[7; TOKEN_BYTES]);
        assert_eq!(token.expose().len(), 71);
        assert!(token
            .expose()
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
        assert_eq!(RefreshTokenName::of(&token), Some(name));
    }

    #[test]
    fn the_secret_changes_the_token_not_the_name() {
        let name = RefreshTokenName::new(FamilyId::new(OsRandom.uuid()), 0);
        let (one, other) = (name.token(&[1; TOKEN_BYTES]), name.token(&[2; TOKEN_BYTES]));
        assert_ne!(one.expose(), other.expose());
        assert_eq!(RefreshTokenName::of(&other), Some(name));
    }

    #[test]
    fn older_tokens_and_hostile_input_name_nothing() {
        let unnamed = Secret::new(OsRandom.opaque_token());
        assert_eq!(RefreshTokenName::of(&unnamed), None);
        let named = RefreshTokenName::new(FamilyId::new(OsRandom.uuid()), 3)
            .token(&[9; TOKEN_BYTES])
            .expose()
            .to_owned();
        // Another form byte: the first character carries its top six bits.
        let other_form = format!("B{}", &named[1..]);
        for text in [
            "",
            "not a token",
            &"A".repeat(71),
            &other_form,
            &format!("{}=", &named[..70]),
            &format!("{named}A"),
        ] {
            assert_eq!(RefreshTokenName::of(&Secret::new(text)), None, "{text:?}");
        }
    }
}
