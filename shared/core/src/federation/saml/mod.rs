//! Company identity providers over SAML 2.0, the service-provider side (docs/decisions.md,
//! "Company identity providers: SAML"): one SP per connection, its entity id the URL of its
//! metadata, our `AuthnRequest`s and logout messages over HTTP-Redirect, the IdP's `Response`
//! over HTTP-POST at the assertion consumer service. What the library verifies and what we
//! check ourselves is in `response`.

mod keys;
mod messages;
mod metadata;
mod redirect;
mod response;
mod xml;

pub use keys::{make_key, MadeKey};
pub use messages::{Logout, LogoutRequest, LogoutResponse, SessionAtIdp};
pub use metadata::{parse_idp_metadata, sp_metadata, IdpMetadata, InvalidMetadata, SpEndpoints};
pub use redirect::{Carrier, RedirectRefusal};
pub use response::{Assertion, ResponseRefusal, CLOCK_SKEW_SECONDS};
pub use xml::STATUS_SUCCESS;

use super::oidc::UpstreamIdentity;
use super::sealing::{open_sp_key, SpKeyUse};
use crate::domain::{
    AuthMethod, Geolocation, IdentityProvider, IdpId, SamlConnection, UpstreamSubject,
};
use crate::errors::ServerError;
use crate::services::Services;
use crate::store::ReplayKey;

/// The attributes an email is read from, in this order, unless the connection names one.
pub const DEFAULT_EMAIL_ATTRIBUTES: [&str; 3] = [
    "email",
    "mail",
    "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress",
];

/// Our addresses for the connection `idp`.
pub fn endpoints(geolocation: &Geolocation, idp: &IdpId) -> SpEndpoints {
    let base = format!(
        "{}/federation/v0/saml/{idp}",
        geolocation.as_str().trim_end_matches('/')
    );
    SpEndpoints {
        entity_id: format!("{base}/metadata"),
        acs: format!("{base}/acs"),
        slo: format!("{base}/slo"),
    }
}

/// The connection's metadata as stored, read again. It was checked when it was stored, so a
/// failure now is ours.
pub fn idp_metadata(connection: &SamlConnection) -> Result<IdpMetadata, ServerError> {
    parse_idp_metadata(&connection.metadata)
        .map_err(|_| ServerError::internal("a stored SAML metadata document does not parse"))
}

/// A fresh message ID: an `xs:ID` (an NCName, so not starting with a digit) of 128 random bits.
pub fn message_id(services: &Services) -> String {
    let mut bytes = [0u8; 16];
    services.ctx.random.fill(&mut bytes);
    format!("_{}", hex::encode(bytes))
}

/// An `AuthnRequest` leaving for the IdP.
pub struct Departure {
    pub location: String,
    /// Its ID, which the response's `InResponseTo` must name.
    pub request_id: String,
}

/// A message of ours to `destination` over the HTTP-Redirect binding, signed with the
/// connection's signing key: `build` writes it from its envelope (a fresh ID, our entity id as
/// issuer). Where the browser goes, and the message's ID.
async fn signed_redirect(
    services: &Services,
    idp: &IdentityProvider,
    connection: &SamlConnection,
    destination: &str,
    (carrier, relay_state): (Carrier, Option<&str>),
    build: impl FnOnce(&messages::Envelope<'_>, &SpEndpoints) -> String,
) -> Result<(String, String), ServerError> {
    let ours = endpoints(services.geolocation(), &idp.id);
    let id = message_id(services);
    let envelope = messages::Envelope {
        id: &id,
        issuer: &ours.entity_id,
        destination,
        issued_at: services.ctx.clock.now(),
    };
    let xml = build(&envelope, &ours);
    let key = signing_key(services, idp, connection).await?;
    let location = redirect::encode(destination, carrier, &xml, relay_state, Some(&key))?;
    Ok((location, id))
}

/// Our `AuthnRequest` to `idp`, carrying `relay_state`; always signed (as our metadata says:
/// `AuthnRequestsSigned`), whether or not the IdP wants it.
pub async fn authn_request(
    services: &Services,
    idp: &IdentityProvider,
    connection: &SamlConnection,
    relay_state: &str,
) -> Result<Departure, ServerError> {
    let metadata = idp_metadata(connection)?;
    let (location, request_id) = signed_redirect(
        services,
        idp,
        connection,
        &metadata.sso_redirect,
        (Carrier::Request, Some(relay_state)),
        |envelope, ours| messages::authn_request(envelope, &ours.acs),
    )
    .await?;
    Ok(Departure {
        location,
        request_id,
    })
}

async fn signing_key(
    services: &Services,
    idp: &IdentityProvider,
    connection: &SamlConnection,
) -> Result<openssl::pkey::PKey<openssl::pkey::Private>, ServerError> {
    let der = open_sp_key(
        services,
        &idp.id,
        SpKeyUse::Signing,
        &connection.sp_signing_key,
    )
    .await?;
    keys::private_key(&der)
}

/// An assertion accepted but not yet remembered: [`first_use`] remembers it, once.
#[derive(Debug, Clone)]
pub struct AssertionUse {
    key: ReplayKey,
    until: i64,
}

/// A response that passed every check, and who it says signed in.
#[derive(Debug)]
pub struct Accepted {
    pub identity: UpstreamIdentity,
    pub assertion: AssertionUse,
}

/// Remembers the assertion until it could no longer be presented, in one conditional write:
/// `false` when it was accepted before.
pub async fn first_use(services: &Services, assertion: &AssertionUse) -> Result<bool, ServerError> {
    let now = services.ctx.clock.now();
    Ok(services
        .ctx
        .store
        .replays()
        .first_use(&assertion.key, assertion.until, now)
        .await?)
}

/// The IdP's `Response` checked (every rule of `response`), and who it says signed in. Nothing
/// is written: the caller remembers the assertion ([`first_use`]) once the sign-in is done, so
/// that a retry after a failure in between is not a replay.
pub async fn accept_response(
    services: &Services,
    idp: &IdentityProvider,
    connection: &SamlConnection,
    saml_response: &str,
    in_response_to: Option<&str>,
) -> Result<Result<Accepted, ResponseRefusal>, ServerError> {
    let metadata = idp_metadata(connection)?;
    let ours = endpoints(services.geolocation(), &idp.id);
    let encryption = open_sp_key(
        services,
        &idp.id,
        SpKeyUse::Encryption,
        &connection.sp_encryption_key,
    )
    .await?;
    let decryption_key_pem = keys::private_key_pem(&encryption)?;
    let now = services.ctx.clock.now();
    let expected = response::Expected {
        idp_entity_id: &metadata.entity_id,
        certificates: &metadata.signing_certificates,
        sp_entity_id: &ours.entity_id,
        acs: &ours.acs,
        in_response_to,
        decryption_key_pem: &decryption_key_pem,
        now,
    };
    let assertion = match response::read_response(saml_response, &expected) {
        Ok(assertion) => assertion,
        Err(refusal) => return Ok(Err(refusal)),
    };
    let used = AssertionUse {
        key: ReplayKey::new("saml-assertion", &idp.id.to_string(), &assertion.id),
        until: assertion.valid_until + CLOCK_SKEW_SECONDS,
    };
    let Ok(subject) = UpstreamSubject::new(&metadata.entity_id, &assertion.name_id) else {
        return Ok(Err(ResponseRefusal::MissingSubject));
    };
    let email_names: Vec<&str> = match &connection.email_attribute {
        Some(name) => vec![name.as_str()],
        None => DEFAULT_EMAIL_ATTRIBUTES.to_vec(),
    };
    let email = assertion
        .attribute(&email_names)
        .filter(|email| email.contains('@'))
        .map(str::to_owned);
    let session = SessionAtIdp {
        name_id: assertion.name_id.clone(),
        name_id_format: assertion.name_id_format.clone(),
        session_index: assertion.session_index.clone(),
    };
    let identity = UpstreamIdentity {
        subject,
        email,
        amr: amr_of(assertion.context_class.as_deref()),
        auth_time: assertion.authn_instant,
        id_token: serde_json::to_string(&session).expect("a session at the IdP serialises"),
    };
    Ok(Ok(Accepted {
        identity,
        assertion: used,
    }))
}

/// `AuthnContextClassRef` as RFC 8176 methods: the password classes `pwd`, the multi-factor
/// ones (REFEDS MFA, Entra's, SAML's two-factor and token classes) `mfa`; others none.
pub fn amr_of(class: Option<&str>) -> Vec<AuthMethod> {
    const PASSWORD: [&str; 2] = [
        "urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport",
        "urn:oasis:names:tc:SAML:2.0:ac:classes:Password",
    ];
    const MULTI_FACTOR: [&str; 6] = [
        "https://refeds.org/profile/mfa",
        "http://schemas.microsoft.com/claims/multipleauthn",
        "urn:oasis:names:tc:SAML:2.0:ac:classes:MobileTwoFactorContract",
        "urn:oasis:names:tc:SAML:2.0:ac:classes:MobileTwoFactorUnregistered",
        "urn:oasis:names:tc:SAML:2.0:ac:classes:TimeSyncToken",
        "urn:oasis:names:tc:SAML:2.0:ac:classes:Smartcard",
    ];
    match class {
        Some(class) if PASSWORD.contains(&class) => vec![AuthMethod::Pwd],
        Some(class) if MULTI_FACTOR.contains(&class) => vec![AuthMethod::Mfa],
        _ => Vec::new(),
    }
}

/// Where the browser goes to end its session at the IdP: a signed `LogoutRequest` for the
/// NameID and session index the sign-in's assertion named, carrying `relay_state`. `None` when
/// the IdP has no single logout service.
pub async fn logout_request(
    services: &Services,
    idp: &IdentityProvider,
    connection: &SamlConnection,
    session: &SessionAtIdp,
    relay_state: &str,
) -> Result<Option<String>, ServerError> {
    let Some(slo) = idp_metadata(connection)?.slo_redirect else {
        return Ok(None);
    };
    let (location, _) = signed_redirect(
        services,
        idp,
        connection,
        &slo.location,
        (Carrier::Request, Some(relay_state)),
        |envelope, _| messages::logout_request(envelope, session),
    )
    .await?;
    Ok(Some(location))
}

/// How a logout message came to our single logout service.
pub enum LogoutBinding<'a> {
    /// The raw query of the HTTP-Redirect binding: signed over the query.
    Redirect { query: &'a str },
    /// The HTTP-POST binding's form field (base64) and `RelayState`: an enveloped XML
    /// Signature over the whole message.
    Post {
        message: &'a str,
        relay_state: Option<&'a str>,
    },
}

/// A logout message the IdP sent to our single logout service: its signature checked against
/// the IdP's certificates, its issuer the IdP and its destination our service.
pub fn received_logout(
    services: &Services,
    idp: &IdentityProvider,
    connection: &SamlConnection,
    binding: LogoutBinding<'_>,
) -> Result<Result<(Logout, Option<String>), RedirectRefusal>, ServerError> {
    let metadata = idp_metadata(connection)?;
    let (logout, relay_state) = match binding {
        LogoutBinding::Redirect { query } => {
            let received = match redirect::decode(query, &metadata.signing_certificates) {
                Ok(received) => received,
                Err(refusal) => return Ok(Err(refusal)),
            };
            let logout = messages::read_logout(&received.xml).filter(|logout| {
                matches!(
                    (logout, received.carrier),
                    (Logout::Request(_), Carrier::Request)
                        | (Logout::Response(_), Carrier::Response)
                )
            });
            let Some(logout) = logout else {
                return Ok(Err(RedirectRefusal::Malformed));
            };
            (logout, received.relay_state)
        }
        LogoutBinding::Post {
            message,
            relay_state,
        } => match posted_logout(message, &metadata.signing_certificates) {
            Ok(logout) => (logout, relay_state.map(str::to_owned)),
            Err(refusal) => return Ok(Err(refusal)),
        },
    };
    let ours = endpoints(services.geolocation(), &idp.id);
    let (issuer, destination) = match &logout {
        Logout::Request(request) => (&request.issuer, &request.destination),
        Logout::Response(response) => (&response.issuer, &response.destination),
    };
    let addressed = destination.as_deref().is_none_or(|to| to == ours.slo);
    if *issuer != metadata.entity_id || !addressed {
        return Ok(Err(RedirectRefusal::Misaddressed));
    }
    Ok(Ok((logout, relay_state)))
}

/// A logout message posted (base64, not deflated): read only when its root is what an enveloped
/// signature by the IdP covers.
fn posted_logout(message: &str, certificates: &[Vec<u8>]) -> Result<Logout, RedirectRefusal> {
    use base64::engine::general_purpose::STANDARD;
    use base64::Engine as _;
    let compact: String = message
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    let text = STANDARD
        .decode(compact)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .ok_or(RedirectRefusal::Malformed)?;
    let doc = xml::parse(&text).map_err(|why| match why {
        xml::Unreadable::TooLarge => RedirectRefusal::TooLarge,
        _ => RedirectRefusal::Malformed,
    })?;
    let root = doc.document_element().ok_or(RedirectRefusal::Malformed)?;
    let signature =
        xml::child(&doc, root, xml::DSIG, "Signature").ok_or(RedirectRefusal::Unsigned)?;
    response::covered_by(&doc, signature, root, certificates).map_err(|refusal| match refusal {
        ResponseRefusal::WeakAlgorithm => RedirectRefusal::WeakAlgorithm,
        _ => RedirectRefusal::BadSignature,
    })?;
    messages::read_logout(&text).ok_or(RedirectRefusal::Malformed)
}

/// Our signed `LogoutResponse` to the IdP's `LogoutRequest` `request_id`: where the browser
/// goes with it.
pub async fn logout_response(
    services: &Services,
    idp: &IdentityProvider,
    connection: &SamlConnection,
    request_id: &str,
    relay_state: Option<&str>,
) -> Result<Option<String>, ServerError> {
    let Some(slo) = idp_metadata(connection)?.slo_redirect else {
        return Ok(None);
    };
    let destination = slo.response_location.unwrap_or(slo.location);
    let (location, _) = signed_redirect(
        services,
        idp,
        connection,
        &destination,
        (Carrier::Response, relay_state),
        |envelope, _| messages::logout_response(envelope, request_id, STATUS_SUCCESS),
    )
    .await?;
    Ok(Some(location))
}

/// Our metadata for the connection.
pub fn metadata_of(
    services: &Services,
    idp: &IdentityProvider,
    connection: &SamlConnection,
) -> String {
    sp_metadata(
        &endpoints(services.geolocation(), &idp.id),
        &connection.sp_signing_certificate,
        &connection.sp_encryption_certificate,
    )
}
