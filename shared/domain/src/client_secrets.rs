//! A client's secrets: up to [`MAX_CLIENT_SECRETS`] at once, each with an id, a creation time, an
//! optional expiry and the time it was last used, so that an app rotates its secret without
//! downtime (add, deploy, revoke the old one; docs/decisions.md, Client secrets). Only SHA-256
//! digests are kept.
//!
//! Records written when a client had exactly one secret carry it as `secret_hash`; they read as
//! that one secret, under an id derived from its digest, and are rewritten in the new shape at
//! their first change (migration in place, no re-registration).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use subtle::{Choice, ConditionallySelectable};

use super::SecretId;
use crate::clock::UnixTime;
use crate::secrets::TokenHash;

/// How many secrets a client holds at most: enough for a rotation (old and new) with room for
/// several deployments in flight; expired secrets count until they are revoked.
pub const MAX_CLIENT_SECRETS: usize = 5;

/// `last_used` is written at most this often per secret, so that authenticating stays one
/// store read per request and an hourly write at most.
pub const LAST_USED_RESOLUTION_SECONDS: i64 = 3600;

/// One stored secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientSecret {
    pub hash: TokenHash,
    pub created: UnixTime,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<UnixTime>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_used: Option<UnixTime>,
}

impl ClientSecret {
    pub fn is_expired(&self, now: UnixTime) -> bool {
        self.expires.is_some_and(|expires| now >= expires)
    }

    fn use_is_worth_recording(&self, now: UnixTime) -> bool {
        self.last_used
            .is_none_or(|last| now - last >= LAST_USED_RESOLUTION_SECONDS)
    }
}

/// What `list` shows of a secret: never its digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ListedSecret {
    pub secret_id: SecretId,
    pub created: UnixTime,
    pub expires: Option<UnixTime>,
    pub last_used: Option<UnixTime>,
}

/// A client's set of secrets, with the version that conditional writes compare.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "StoredSecrets", into = "StoredSecrets")]
pub struct ClientSecrets {
    /// The one digest of a record written before clients had several secrets.
    legacy: Option<TokenHash>,
    entries: BTreeMap<SecretId, ClientSecret>,
    /// Bumped by every change of the set; 0 for a set never changed since the client's creation.
    version: u64,
}

/// The stored shape, flattened into the client's record: `secrets` (a map by secret id, so that
/// one secret's `last_used` can be written alone), `secrets_version`, and the earlier
/// `secret_hash`.
#[derive(Serialize, Deserialize)]
struct StoredSecrets {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    secret_hash: Option<TokenHash>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    secrets: BTreeMap<String, ClientSecret>,
    #[serde(default)]
    secrets_version: u64,
}

impl TryFrom<StoredSecrets> for ClientSecrets {
    type Error = String;

    fn try_from(stored: StoredSecrets) -> Result<Self, Self::Error> {
        let entries = stored
            .secrets
            .into_iter()
            .map(|(id, secret)| Ok((SecretId::parse(&id).map_err(|e| e.to_string())?, secret)))
            .collect::<Result<BTreeMap<_, _>, String>>()?;
        Ok(Self {
            legacy: stored.secret_hash.filter(|_| entries.is_empty()),
            entries,
            version: stored.secrets_version,
        })
    }
}

impl From<ClientSecrets> for StoredSecrets {
    fn from(secrets: ClientSecrets) -> Self {
        Self {
            secret_hash: secrets.legacy,
            secrets: secrets
                .entries
                .into_iter()
                .map(|(id, secret)| (id.to_string(), secret))
                .collect(),
            secrets_version: secrets.version,
        }
    }
}

/// The outcome of checking a presented secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecretCheck {
    /// It matches an unexpired secret; `record_use` when that secret's `last_used` is due.
    Valid { id: SecretId, record_use: bool },
    /// It matches a secret past its expiry.
    Expired,
    /// It matches none.
    Wrong,
}

/// Why a change of the set is refused. Nothing is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SecretsRefusal {
    #[error(
        "the client already has {MAX_CLIENT_SECRETS} secrets, the most it may hold; revoke one \
         first (expired secrets count until they are revoked)"
    )]
    TooMany,
    #[error("the client has no secret with that id")]
    UnknownSecret,
    #[error(
        "that is the client's last unexpired secret: add another one before revoking it, or the \
         client could no longer authenticate"
    )]
    LastSecret,
}

impl ClientSecrets {
    /// A client's first secret.
    pub fn first(
        id: SecretId,
        hash: TokenHash,
        created: UnixTime,
        expires: Option<UnixTime>,
    ) -> Self {
        let secret = ClientSecret {
            hash,
            created,
            expires,
            last_used: None,
        };
        Self {
            legacy: None,
            entries: BTreeMap::from([(id, secret)]),
            version: 0,
        }
    }

    /// No secret at all: no presented secret ever matches (a client known by its metadata
    /// document, which has none).
    pub fn none() -> Self {
        Self {
            legacy: None,
            entries: BTreeMap::new(),
            version: 0,
        }
    }

    /// One secret in the shape records had before clients had several (for tests of the
    /// migration, and fixtures that need no id).
    pub fn from_single_hash(hash: TokenHash) -> Self {
        Self {
            legacy: Some(hash),
            entries: BTreeMap::new(),
            version: 0,
        }
    }

    pub fn version(&self) -> u64 {
        self.version
    }

    /// Whether the record still has the single-secret shape (`secret_hash`).
    pub fn is_legacy(&self) -> bool {
        self.legacy.is_some()
    }

    pub fn len(&self) -> usize {
        self.entries.len() + usize::from(self.legacy.is_some())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every secret by id; the single secret of an earlier record dates from the client's
    /// creation, under an id derived from its digest (stable, so that it can be revoked).
    pub fn all(&self, client_created: UnixTime) -> BTreeMap<SecretId, ClientSecret> {
        let mut all = self.entries.clone();
        if let Some(hash) = &self.legacy {
            all.insert(
                legacy_secret_id(hash),
                ClientSecret {
                    hash: hash.clone(),
                    created: client_created,
                    expires: None,
                    last_used: None,
                },
            );
        }
        all
    }

    pub fn list(&self, client_created: UnixTime) -> Vec<ListedSecret> {
        let mut listed: Vec<ListedSecret> = self
            .all(client_created)
            .into_iter()
            .map(|(secret_id, secret)| ListedSecret {
                secret_id,
                created: secret.created,
                expires: secret.expires,
                last_used: secret.last_used,
            })
            .collect();
        listed.sort_by_key(|secret| (secret.created, secret.secret_id));
        listed
    }

    /// Checks `presented` against every stored digest, always as many comparisons as a full
    /// set holds and without stopping at a match, so that the time taken says nothing about
    /// which secret (if any) matched.
    pub fn check(&self, presented: &str, now: UnixTime, client_created: UnixTime) -> SecretCheck {
        let presented = TokenHash::of(presented);
        let all: Vec<(SecretId, ClientSecret)> = self.all(client_created).into_iter().collect();
        let unmatchable = TokenHash::of("");
        let mut found = Choice::from(0);
        let mut index = 0u32;
        for slot in 0..MAX_CLIENT_SECRETS.max(all.len()) {
            let stored = all
                .get(slot)
                .map_or(&unmatchable, |(_, secret)| &secret.hash);
            let real = Choice::from(u8::from(slot < all.len()));
            let matches = stored.ct_matches(&presented) & real;
            index.conditional_assign(&u32::try_from(slot).unwrap_or(u32::MAX), matches);
            found |= matches;
        }
        if !bool::from(found) {
            return SecretCheck::Wrong;
        }
        let (id, secret) = &all[index as usize];
        if secret.is_expired(now) {
            SecretCheck::Expired
        } else {
            SecretCheck::Valid {
                id: *id,
                record_use: secret.use_is_worth_recording(now),
            }
        }
    }

    /// The set with one more secret, or why not.
    pub fn with_added(
        &self,
        client_created: UnixTime,
        id: SecretId,
        secret: ClientSecret,
    ) -> Result<Self, SecretsRefusal> {
        let mut entries = self.all(client_created);
        if entries.len() >= MAX_CLIENT_SECRETS {
            return Err(SecretsRefusal::TooMany);
        }
        entries.insert(id, secret);
        Ok(self.next(entries))
    }

    /// The set without `id`, or why not: the last unexpired secret stays.
    pub fn without(
        &self,
        client_created: UnixTime,
        id: &SecretId,
        now: UnixTime,
    ) -> Result<Self, SecretsRefusal> {
        let mut entries = self.all(client_created);
        let removed = entries.remove(id).ok_or(SecretsRefusal::UnknownSecret)?;
        let others_live = entries.values().any(|secret| !secret.is_expired(now));
        if !removed.is_expired(now) && !others_live {
            return Err(SecretsRefusal::LastSecret);
        }
        Ok(self.next(entries))
    }

    /// The set with `id` used at `now`: how an earlier record is migrated at its first use.
    pub fn with_use_recorded(
        &self,
        client_created: UnixTime,
        id: &SecretId,
        now: UnixTime,
    ) -> Self {
        let mut entries = self.all(client_created);
        if let Some(secret) = entries.get_mut(id) {
            secret.last_used = Some(now);
        }
        self.next(entries)
    }

    /// Records a use in this copy (a cached record), as the store recorded it.
    pub fn note_use(&mut self, id: &SecretId, now: UnixTime) {
        if let Some(secret) = self.entries.get_mut(id) {
            secret.last_used = Some(now);
        }
    }

    fn next(&self, entries: BTreeMap<SecretId, ClientSecret>) -> Self {
        Self {
            legacy: None,
            entries,
            version: self.version + 1,
        }
    }
}

/// The id of an earlier record's single secret: derived from its digest (a digest of the
/// digest, so the id reveals nothing usable), hence the same on every read.
fn legacy_secret_id(hash: &TokenHash) -> SecretId {
    let derived = TokenHash::of(&format!("client-secret-id:{}", hash.to_hex()));
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&derived.as_bytes()[..16]);
    SecretId::new(uuid::Builder::from_random_bytes(bytes).into_uuid())
}

#[cfg(test)]
#[path = "client_secrets_tests.rs"]
mod tests;
