//! `tokenctl companies idps add --saml` and `companies idps refresh`: a SAML IdP's metadata,
//! from a file or fetched from its URL under the outbound rules, checked before anything is
//! written; our two keys for the connection made and sealed; every change audited.

use super::idps::{checked_name, has_control, insert_idp};
use super::{not_found, AdminError};
use crate::audit;
use crate::domain::audit::AuditKind;
use crate::domain::{
    IdentityProvider, IdpDomains, IdpId, IdpProtocol, LinkBy, PrincipalId, PrincipalType,
    SamlConnection,
};
use crate::federation::saml::{self, SpEndpoints};
use crate::federation::{seal_sp_key, SpKeyUse};
use crate::random::RandomExt;
use crate::services::Services;

/// Where the IdP's metadata comes from.
pub enum MetadataSource {
    /// The document itself (`--metadata-file`).
    Document(String),
    /// Its URL (`--metadata-url`), fetched now and at each refresh.
    Url(String),
}

/// `companies idps add --saml`, as given on the command line: each flag one the contract
/// spells, independent of the others.
#[allow(clippy::struct_excessive_bools)]
pub struct NewSamlIdp {
    pub company_id: PrincipalId,
    pub name: String,
    pub metadata: MetadataSource,
    pub domains: Vec<String>,
    pub allow_idp_initiated: bool,
    pub email_attribute: Option<String>,
    pub link_by: LinkBy,
    pub jit: bool,
    pub trust_mfa: bool,
    pub id_jag: bool,
}

/// The metadata document and the URL it came from, checked.
async fn read_metadata(
    services: &Services,
    source: MetadataSource,
) -> Result<(String, saml::IdpMetadata, Option<String>), AdminError> {
    let (document, url) = match source {
        MetadataSource::Document(document) => (document, None),
        MetadataSource::Url(url) => {
            let fetched = services
                .upstream
                .fetcher()
                .get(
                    &url,
                    "application/samlmetadata+xml, application/xml, text/xml",
                )
                .await
                .map_err(|error| AdminError::Invalid(format!("--metadata-url {url}: {error}")))?;
            if !fetched.status.is_success() {
                return Err(AdminError::Invalid(format!(
                    "--metadata-url {url}: answered {}",
                    fetched.status
                )));
            }
            let document = String::from_utf8(fetched.body)
                .map_err(|_| AdminError::Invalid(format!("--metadata-url {url}: not UTF-8")))?;
            (document, Some(url))
        }
    };
    let metadata = saml::parse_idp_metadata(&document)
        .map_err(|error| AdminError::Invalid(format!("the IdP's metadata: {error}")))?;
    Ok((document, metadata, url))
}

/// `companies idps add --saml`: the IdP as stored and our addresses to give it.
pub async fn add_saml_idp(
    services: &Services,
    new: NewSamlIdp,
) -> Result<(IdentityProvider, SpEndpoints), AdminError> {
    let ctx = &services.ctx;
    let name = checked_name(&new.name)?.to_owned();
    let email_attribute = new
        .email_attribute
        .map(|attribute| attribute.trim().to_owned())
        .filter(|attribute| !attribute.is_empty());
    if email_attribute.as_deref().is_some_and(has_control) {
        return Err(AdminError::Invalid(
            "--email-attribute must be printable".into(),
        ));
    }
    let domains = IdpDomains::parse(&new.domains)
        .map_err(|error| AdminError::Invalid(format!("--domains: {error}")))?;
    ctx.store
        .principals()
        .get_company(&new.company_id)
        .await?
        .ok_or_else(|| not_found("company", new.company_id))?;
    let (document, metadata, metadata_url) = read_metadata(services, new.metadata).await?;
    let id = IdpId::new(ctx.random.uuid());
    let endpoints = saml::endpoints(services.geolocation(), &id);
    let signing = saml::make_key(&endpoints.entity_id)?;
    let encryption = saml::make_key(&endpoints.entity_id)?;
    let idp = IdentityProvider {
        id,
        company_id: new.company_id,
        name,
        protocol: IdpProtocol::Saml(SamlConnection {
            entity_id: metadata.entity_id,
            metadata: document,
            metadata_url,
            allow_idp_initiated: new.allow_idp_initiated,
            email_attribute,
            sp_signing_key: seal_sp_key(services, &id, SpKeyUse::Signing, &signing.pkcs8_der)
                .await?,
            sp_signing_certificate: signing.certificate,
            sp_encryption_key: seal_sp_key(
                services,
                &id,
                SpKeyUse::Encryption,
                &encryption.pkcs8_der,
            )
            .await?,
            sp_encryption_certificate: encryption.certificate,
        }),
        domains,
        link_by: new.link_by,
        jit: new.jit,
        trust_mfa: new.trust_mfa,
        id_jag: new.id_jag,
        created_at: ctx.clock.now(),
    };
    insert_idp(ctx, &idp).await?;
    Ok((idp, endpoints))
}

/// `companies idps refresh`: the SAML IdP's metadata read again, from `document` or else its
/// URL; from now on only its certificates and endpoints count. Our keys stay.
pub async fn refresh_saml_idp(
    services: &Services,
    id: &IdpId,
    document: Option<String>,
) -> Result<IdentityProvider, AdminError> {
    let ctx = &services.ctx;
    let federation = ctx.store.federation();
    let mut idp = federation
        .get_identity_provider(id)
        .await?
        .ok_or_else(|| not_found("identity provider", id))?;
    let IdpProtocol::Saml(connection) = &mut idp.protocol else {
        return Err(AdminError::Invalid(
            "only a SAML identity provider has metadata to refresh".into(),
        ));
    };
    let source = match (document, &connection.metadata_url) {
        (Some(document), _) => MetadataSource::Document(document),
        (None, Some(url)) => MetadataSource::Url(url.clone()),
        (None, None) => {
            return Err(AdminError::Invalid(
                "this IdP was added from a file: give --metadata-file".into(),
            ))
        }
    };
    let (document, metadata, _) = read_metadata(services, source).await?;
    if metadata.entity_id != connection.entity_id {
        return Err(AdminError::Invalid(format!(
            "the metadata is of entity {}, not of this IdP ({})",
            metadata.entity_id, connection.entity_id
        )));
    }
    connection.metadata = document;
    if !federation.replace_identity_provider(&idp).await? {
        return Err(not_found("identity provider", id));
    }
    let event = audit::event(ctx, AuditKind::CompanyIdpRefreshed { idp_id: *id })
        .principal(PrincipalType::Company, idp.company_id);
    audit::record(ctx, event).await;
    Ok(idp)
}
