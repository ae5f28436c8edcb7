//! A SAML IdP's metadata (SAML metadata §2.4.3), as an administrator adds it or it is refreshed:
//! its entity id, where its single sign-on and single logout services take the HTTP-Redirect
//! binding, its signing certificates, and whether it wants our requests signed. And ours, the
//! document the IdP imports: one service provider per connection.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

use super::xml::{self, attr, child, children, BINDING_POST, BINDING_REDIRECT, DSIG, METADATA};

/// What the IdP's metadata says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdpMetadata {
    pub entity_id: String,
    pub sso_redirect: String,
    pub slo_redirect: Option<SloEndpoint>,
    /// DER certificates whose keys may sign its responses and logout messages.
    pub signing_certificates: Vec<Vec<u8>>,
    pub wants_authn_requests_signed: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SloEndpoint {
    pub location: String,
    /// Where our `LogoutResponse`s go, when not to `location`.
    pub response_location: Option<String>,
}

/// Why a metadata document is refused, for the administrator.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidMetadata {
    #[error("not SAML metadata: {0}")]
    Unreadable(&'static str),
    #[error("no IDPSSODescriptor for SAML 2.0")]
    NoIdp,
    #[error("no entityID")]
    NoEntityId,
    #[error("no SingleSignOnService with the HTTP-Redirect binding")]
    NoRedirectSso,
    #[error("no signing certificate (KeyDescriptor with an X509Certificate)")]
    NoSigningCertificate,
    #[error("a certificate is not base64 DER")]
    BadCertificate,
    #[error("{0} is not an http(s) URL")]
    BadLocation(String),
}

pub fn parse_idp_metadata(text: &str) -> Result<IdpMetadata, InvalidMetadata> {
    let doc = xml::parse(text).map_err(|why| {
        InvalidMetadata::Unreadable(match why {
            xml::Unreadable::TooLarge => "larger than 256 KiB",
            xml::Unreadable::Dtd => "it has a DOCTYPE",
            xml::Unreadable::Malformed => "not well-formed XML",
        })
    })?;
    let root = doc.document_element().ok_or(InvalidMetadata::NoIdp)?;
    // An aggregate (`EntitiesDescriptor`) of one IdP, as some IdPs export, or the entity alone.
    let entity = if xml::is(&doc, root, METADATA, "EntityDescriptor") {
        root
    } else {
        xml::all(&doc, METADATA, "EntityDescriptor")
            .into_iter()
            .find(|entity| child(&doc, *entity, METADATA, "IDPSSODescriptor").is_some())
            .ok_or(InvalidMetadata::NoIdp)?
    };
    let entity_id = attr(&doc, entity, "entityID")
        .map(str::trim)
        .filter(|id| !id.is_empty())
        .ok_or(InvalidMetadata::NoEntityId)?
        .to_owned();
    let idp = children(&doc, entity, METADATA, "IDPSSODescriptor")
        .into_iter()
        .find(|idp| {
            attr(&doc, *idp, "protocolSupportEnumeration")
                .is_some_and(|protocols| protocols.split_whitespace().any(|p| p == xml::PROTOCOL))
        })
        .ok_or(InvalidMetadata::NoIdp)?;
    let location_of = |service: &str| -> Result<Option<(String, Option<String>)>, InvalidMetadata> {
        let found = children(&doc, idp, METADATA, service)
            .into_iter()
            .find(|node| attr(&doc, *node, "Binding") == Some(BINDING_REDIRECT));
        let Some(node) = found else {
            return Ok(None);
        };
        let location = checked_location(attr(&doc, node, "Location").unwrap_or_default())?;
        let response = attr(&doc, node, "ResponseLocation")
            .map(checked_location)
            .transpose()?;
        Ok(Some((location, response)))
    };
    let (sso_redirect, _) =
        location_of("SingleSignOnService")?.ok_or(InvalidMetadata::NoRedirectSso)?;
    let slo_redirect =
        location_of("SingleLogoutService")?.map(|(location, response_location)| SloEndpoint {
            location,
            response_location,
        });
    let mut signing_certificates = Vec::new();
    for key in children(&doc, idp, METADATA, "KeyDescriptor") {
        if attr(&doc, key, "use").is_some_and(|key_use| key_use != "signing") {
            continue;
        }
        for certificate in xml::all_under(&doc, key, DSIG, "X509Certificate") {
            let base64: String = xml::text(&doc, certificate)
                .chars()
                .filter(|c| !c.is_ascii_whitespace())
                .collect();
            let der = STANDARD
                .decode(base64)
                .map_err(|_| InvalidMetadata::BadCertificate)?;
            openssl::x509::X509::from_der(&der).map_err(|_| InvalidMetadata::BadCertificate)?;
            signing_certificates.push(der);
        }
    }
    if signing_certificates.is_empty() {
        return Err(InvalidMetadata::NoSigningCertificate);
    }
    let wants_authn_requests_signed = matches!(
        attr(&doc, idp, "WantAuthnRequestsSigned").map(str::trim),
        Some("true" | "1")
    );
    Ok(IdpMetadata {
        entity_id,
        sso_redirect,
        slo_redirect,
        signing_certificates,
        wants_authn_requests_signed,
    })
}

fn checked_location(location: &str) -> Result<String, InvalidMetadata> {
    let location = location.trim();
    match url::Url::parse(location) {
        Ok(url) if matches!(url.scheme(), "https" | "http") && url.host_str().is_some() => {
            Ok(location.to_owned())
        }
        _ => Err(InvalidMetadata::BadLocation(location.to_owned())),
    }
}

/// Our addresses for one connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpEndpoints {
    /// The metadata's own URL, which is our entity id.
    pub entity_id: String,
    pub acs: String,
    pub slo: String,
}

/// Our metadata for the IdP to import: the ACS (HTTP-POST), the single logout service
/// (HTTP-Redirect and HTTP-POST), both certificates, and what we require (signed requests from
/// us, signed assertions from it).
pub fn sp_metadata(
    endpoints: &SpEndpoints,
    signing_certificate: &str,
    encryption_certificate: &str,
) -> String {
    let entity_id = xml::escape(&endpoints.entity_id);
    let acs = xml::escape(&endpoints.acs);
    let slo = xml::escape(&endpoints.slo);
    let key = |key_use: &str, certificate: &str| {
        format!(
            "<md:KeyDescriptor use=\"{key_use}\"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>{}</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>",
            xml::escape(certificate)
        )
    };
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <md:EntityDescriptor xmlns:md=\"{METADATA}\" xmlns:ds=\"{DSIG}\" entityID=\"{entity_id}\">\
         <md:SPSSODescriptor AuthnRequestsSigned=\"true\" WantAssertionsSigned=\"true\" protocolSupportEnumeration=\"{protocol}\">\
         {signing}{encryption}\
         <md:SingleLogoutService Binding=\"{BINDING_REDIRECT}\" Location=\"{slo}\"/>\
         <md:SingleLogoutService Binding=\"{BINDING_POST}\" Location=\"{slo}\"/>\
         <md:NameIDFormat>{persistent}</md:NameIDFormat>\
         <md:NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</md:NameIDFormat>\
         <md:AssertionConsumerService Binding=\"{BINDING_POST}\" Location=\"{acs}\" index=\"0\" isDefault=\"true\"/>\
         </md:SPSSODescriptor></md:EntityDescriptor>\n",
        protocol = xml::PROTOCOL,
        signing = key("signing", signing_certificate),
        encryption = key("encryption", encryption_certificate),
        persistent = xml::NAMEID_PERSISTENT,
    )
}
