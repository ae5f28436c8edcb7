//! [`Store`]: one accessor per aggregate, so that a caller names the aggregate it uses
//! (`store.families().get_family(..)`) and a layer in front of a store (the read cache)
//! answers only the aggregates it changes.
//!
//! The aggregates are listed once, in the [`aggregates!`] call below; [`Store`], its
//! implementation for backends and for layers, and [`StoreLayer`] are generated from that list.

use super::{
    AuditStore, AuthTokenStore, AuthorizationCodeStore, BatchWrites, ClientStore, ConsentStore,
    DeviceAuthorizationStore, DirectoryStore, DocumentClientStore, FamilyStore, FederationStore,
    LegacyStore, LockoutStore, OtpStore, PasskeyStore, PrincipalStore, PushedAuthorizationStore,
    RateLimitStore, RegistrationTokenStore, ReplayStore, RevocationStore, SecondFactorStore,
    SessionStore,
};

/// Generates, from `accessor: Trait` pairs, the [`Store`] trait, its implementation for every
/// type that implements each aggregate (a backend), [`StoreLayer`] and [`Layered`].
macro_rules! aggregates {
    ($($(#[$doc:meta])* $accessor:ident: $aggregate:ident,)+) => {
        /// The whole store: every aggregate, each behind its accessor. A backend implements every
        /// aggregate trait on one type and is a `Store` by that alone; a layer in front of a store
        /// implements [`StoreLayer`] instead.
        pub trait Store: std::fmt::Debug + Send + Sync {
            $($(#[$doc])* fn $accessor(&self) -> &dyn $aggregate;)+
        }

        /// A backend answers every aggregate itself.
        impl<B> Store for B
        where
            B: $($aggregate +)+ std::fmt::Debug + Send + Sync,
        {
            $(fn $accessor(&self) -> &dyn $aggregate {
                self
            })+
        }

        /// A store in front of another one, [`behind`](StoreLayer::behind) it: every accessor
        /// answers the store behind, unless the layer overrides it to answer itself. Wrapped in
        /// [`Layered`], a layer is a [`Store`].
        pub trait StoreLayer: std::fmt::Debug + Send + Sync {
            fn behind(&self) -> &dyn Store;
            $(fn $accessor(&self) -> &dyn $aggregate {
                self.behind().$accessor()
            })+
        }

        impl<L: StoreLayer> Store for Layered<L> {
            $(fn $accessor(&self) -> &dyn $aggregate {
                self.0.$accessor()
            })+
        }
    };
}

/// A [`StoreLayer`] as a [`Store`]. (A second blanket implementation of [`Store`] for every layer
/// would overlap with the backends' one, hence the wrapper.)
#[derive(Debug)]
pub struct Layered<L>(pub L);

aggregates! {
    /// Registered OAuth applications.
    clients: ClientStore,
    /// The clients of client ID metadata documents, as fetched, until they expire.
    document_clients: DocumentClientStore,
    /// Users and companies, and which clients a company enabled.
    principals: PrincipalStore,
    /// Legacy apps, imported legacy tokens and their exchange links.
    legacy: LegacyStore,
    /// Company auth tokens.
    auth_tokens: AuthTokenStore,
    /// Token families with their refresh and access tokens.
    families: FamilyStore,
    /// Login attempt counters.
    lockout: LockoutStore,
    /// One-time passwords.
    otp: OtpStore,
    /// Authorization codes.
    authorization_codes: AuthorizationCodeStore,
    /// Device authorizations (RFC 8628).
    device_authorizations: DeviceAuthorizationStore,
    /// Pushed authorization requests (RFC 9126).
    pushed_authorizations: PushedAuthorizationStore,
    /// Revocation of access tokens and of a principal's connection with a client.
    revocation: RevocationStore,
    /// Rate-limit counters and blocks.
    rate_limits: RateLimitStore,
    /// Audit events.
    audit: AuditStore,
    /// Single use of JWT `jti`s (client assertions, DPoP proofs) until their expiry.
    replays: ReplayStore,
    /// Initial access tokens of dynamic client registration, as digests until their expiry.
    registration_tokens: RegistrationTokenStore,
    /// Sign-in sessions.
    sessions: SessionStore,
    /// What users approved on the consent page, per client.
    consents: ConsentStore,
    /// Users' authenticator apps and recovery codes.
    second_factors: SecondFactorStore,
    /// Users' passkeys and the state of passkey ceremonies.
    passkeys: PasskeyStore,
    /// A company's directory as its provisioning client keeps it: tokens, users, groups.
    directory: DirectoryStore,
    /// Company identity providers, the links of upstream subjects to users, and the sign-ins
    /// sent to an IdP.
    federation: FederationStore,
    /// Writes that span aggregates, committed as one.
    writes: BatchWrites,
}
