//! Finding a presented refresh token. A named token ([`RefreshTokenName`]) is found through its
//! family, which is its record: it is the family's current token if its digest is the family's
//! `current_token`, and an older token of the family if deriving its successors forward reaches
//! that token. An unnamed token (issued before tokens named their family) is found by its digest,
//! as before.

use super::refresh::successor;
use super::Issuer;
use crate::domain::{Family, RefreshTokenName, RefreshTokenRecord};
use crate::errors::ServerError;
use crate::secrets::Secret;
use crate::store::{FamilyOrigin, RefreshTokenWithOrigin};

/// How many rotations behind its family an older token may be and still be recognised (as a
/// retry or as reuse). Each step is one HMAC (about a microsecond); a rotation an hour for a
/// 30-day family is 720. Further behind, the token answers as an unknown one would (108), and
/// nothing is revoked: a bound on the work a presented token can cause.
pub const MAX_GENERATIONS_BEHIND: u32 = 2_000;

/// A presented refresh token as found: its record (for a named token, made from its family) and
/// its family's origin, and the family itself when finding the token read it.
#[derive(Debug, Clone)]
pub struct FoundRefreshToken {
    pub token: RefreshTokenWithOrigin,
    pub family: Option<Family>,
}

impl Issuer<'_> {
    /// The token `presented` is, with its family's origin: `None` if it is none of ours, or
    /// expired (or its family is). A rotated token is found too: the caller decides what its use
    /// means. Says nothing of the family's state beyond what [`FoundRefreshToken::family`] shows.
    pub async fn find_refresh_token(
        &self,
        presented: &Secret,
    ) -> Result<Option<FoundRefreshToken>, ServerError> {
        let now = self.ctx.clock.now();
        let families = self.ctx.store.families();
        let Some(name) = RefreshTokenName::of(presented) else {
            let token = families
                .get_refresh_token_with_origin(&presented.hash(), now)
                .await?;
            return Ok(token.map(|token| FoundRefreshToken {
                token,
                family: None,
            }));
        };
        let Some(family) = families.get_family(&name.family_id, now).await? else {
            return Ok(None);
        };
        let Some(rotated) = self.place_in_family(presented, name, &family).await? else {
            return Ok(None);
        };
        let record = record_of_named(presented, name, &family, rotated);
        Ok(Some(FoundRefreshToken {
            token: RefreshTokenWithOrigin {
                record,
                origin: FamilyOrigin::from(&family),
            },
            family: Some(family),
        }))
    }

    /// `Some(false)`: `presented` is the family's current token; `Some(true)`: an older token of
    /// the family; `None`: not the family's (a forged or mistyped token naming it).
    async fn place_in_family(
        &self,
        presented: &Secret,
        name: RefreshTokenName,
        family: &Family,
    ) -> Result<Option<bool>, ServerError> {
        if name.generation == family.generation {
            return Ok(family
                .current_token
                .verify(presented.expose())
                .then_some(false));
        }
        let behind = family.generation.saturating_sub(name.generation);
        if name.generation > family.generation || behind > MAX_GENERATIONS_BEHIND {
            if behind > MAX_GENERATIONS_BEHIND {
                tracing::info!(family_id = %family.id, behind, "refresh token too far behind its family");
            }
            return Ok(None);
        }
        let key = self.successor_key().await?;
        let mut token = presented.clone();
        for generation in name.generation + 1..=family.generation {
            token = successor(&key, &family.id, generation, &token);
        }
        Ok(family.current_token.verify(token.expose()).then_some(true))
    }
}

/// The record a named token would have had: its family's current state for the current token;
/// for an older one, rotated at the family's last rotation if it is the one before (which is what
/// a retry's grace is measured from), and bound as the family was at its generation.
fn record_of_named(
    presented: &Secret,
    name: RefreshTokenName,
    family: &Family,
    rotated: bool,
) -> RefreshTokenRecord {
    let last_rotation = family.rotated_at.unwrap_or(family.created_at);
    let bound = family
        .bound_from
        .is_some_and(|from| name.generation >= from);
    RefreshTokenRecord {
        token_hash: presented.hash(),
        family_id: family.id,
        client_id: family.client_id,
        generation: name.generation,
        // Unknown for an older token, and shown nowhere: a rotated token is inactive.
        issued_at: if rotated {
            family.created_at
        } else {
            last_rotation
        },
        expires_at: family.expires_at,
        rotated_at: rotated.then_some(last_rotation),
        jkt: family.current_jkt.clone().filter(|_| bound),
    }
}

#[cfg(test)]
mod tests {
    //! Where a named token stands in its family, decided on the family alone.

    use std::sync::Arc;

    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine;

    use super::*;
    use crate::clock::ManualClock;
    use crate::config::Policy;
    use crate::context::Context;
    use crate::domain::FamilyId;
    use crate::jwt::AccessTokenCodec;
    use crate::random::{OsRandom, RandomExt, TOKEN_BYTES};
    use crate::signing::KeyRing;
    use crate::store::sqlite::SqliteStore;
    use token_store_conformance::records;

    const NOW: i64 = 1_700_000_000;

    /// What an [`Issuer`] borrows.
    struct Minting {
        ctx: Context,
        codec: AccessTokenCodec,
        policy: Policy,
        _dir: tempfile::TempDir,
    }

    impl Minting {
        fn new() -> Self {
            let dir = tempfile::tempdir().unwrap();
            let store = Arc::new(SqliteStore::open_in_dir(dir.path()).unwrap());
            let clock = Arc::new(ManualClock::new(NOW));
            let codec = AccessTokenCodec::new(
                Arc::new(KeyRing::generate(&OsRandom, clock.as_ref())),
                records::geolocation(),
            );
            Self {
                ctx: Context::new(store).with_clock(clock),
                codec,
                policy: Policy::default(),
                _dir: dir,
            }
        }

        fn issuer(&self) -> Issuer<'_> {
            Issuer::new(&self.ctx, &self.codec, &self.policy)
        }
    }

    /// A family's tokens from its first, generation 0, to `last`, each the successor of the one
    /// before; and the family, its current token the last of them.
    async fn chain(services: &Minting, last: u32) -> (Vec<Secret>, Family) {
        let family_id = FamilyId::new(OsRandom.uuid());
        let mut tokens = vec![RefreshTokenName::new(family_id, 0).token(&[3; TOKEN_BYTES])];
        for generation in 1..=last {
            let next = services
                .issuer()
                .successor_token(&family_id, generation, tokens.last().unwrap())
                .await
                .unwrap();
            tokens.push(next);
        }
        let family = Family {
            id: family_id,
            generation: last,
            current_token: tokens.last().unwrap().hash(),
            ..records::Bundle::live(NOW).family
        };
        (tokens, family)
    }

    async fn place(services: &Minting, token: &Secret, family: &Family) -> Option<bool> {
        let name = RefreshTokenName::of(token).expect("a named token");
        services
            .issuer()
            .place_in_family(token, name, family)
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn the_current_token_and_older_ones_are_told_apart_from_forgeries() {
        let services = Minting::new();
        let (tokens, family) = chain(&services, 3).await;
        assert_eq!(place(&services, &tokens[3], &family).await, Some(false));
        for older in &tokens[..3] {
            assert_eq!(place(&services, older, &family).await, Some(true));
        }
        // The family's name with another secret, at every generation, and a generation the
        // family has not reached.
        for generation in 0..=4 {
            let forged = RefreshTokenName::new(family.id, generation).token(&[4; TOKEN_BYTES]);
            assert_eq!(
                place(&services, &forged, &family).await,
                None,
                "{generation}"
            );
        }
        let ahead = RefreshTokenName::new(family.id, 4).token(&[3; TOKEN_BYTES]);
        assert_eq!(place(&services, &ahead, &family).await, None);
    }

    #[tokio::test]
    async fn a_token_too_far_behind_its_family_is_not_derived_forward() {
        let services = Minting::new();
        let (tokens, family) = chain(&services, MAX_GENERATIONS_BEHIND + 1).await;
        assert_eq!(place(&services, &tokens[1], &family).await, Some(true));
        assert_eq!(place(&services, &tokens[0], &family).await, None);
    }

    #[tokio::test]
    async fn a_successor_issued_bare_by_the_release_before_is_still_found() {
        let services = Minting::new();
        let (tokens, family) = chain(&services, 1).await;
        let named = URL_SAFE_NO_PAD.decode(tokens[1].expose()).unwrap();
        let bare = Secret::new(URL_SAFE_NO_PAD.encode(&named[named.len() - TOKEN_BYTES..]));
        let family = Family {
            current_token: bare.hash(),
            ..family
        };
        let found = services
            .issuer()
            .current_successor(&family, &tokens[0])
            .await
            .unwrap();
        assert_eq!(found.as_ref().map(Secret::expose), Some(bare.expose()));
    }
}
