//! The public JWK Set (RFC 7517) as served at the JWK Set endpoints.

use serde::Serialize;
use utoipa::ToSchema;

/// RFC 7517 JWK Set: the public signing keys (ES256, P-256), newest first.
#[derive(Debug, Serialize, ToSchema)]
pub struct JwkSet {
    pub keys: Vec<PublicJwk>,
}

/// One public key (RFC 7518 §6.2.1): the curve point, never private material.
#[derive(Debug, Serialize, ToSchema)]
pub struct PublicJwk {
    /// `EC`.
    pub kty: &'static str,
    /// `P-256`.
    pub crv: &'static str,
    /// The point's x coordinate, base64url.
    pub x: String,
    /// The point's y coordinate, base64url.
    pub y: String,
    /// The RFC 7638 thumbprint, which tokens name in their `kid` header.
    pub kid: String,
    /// `sig`.
    #[serde(rename = "use")]
    pub use_: &'static str,
    /// `ES256`.
    pub alg: &'static str,
}
