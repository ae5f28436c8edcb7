//! `companies idps add --saml` and `companies idps refresh`: a SAML IdP's metadata from a file
//! (a real pysaml2 IdP's), what is printed (our entity id, ACS and metadata URL; never a key),
//! what is stored (our keys sealed), a refresh from a file, and the refusals: a metadata URL on
//! a loopback address the deployment does not allow, another entity's metadata, an OpenID
//! Connect IdP, a file that is not SAML metadata.

use token_domain::{IdpId, IdpProtocol};

use super::idps::company;
use super::output::str_field;
use super::target::{Target, HOME};
use crate::support::saml_idp::SamlIdp;

pub async fn add_show_refresh(t: &Target) {
    let idp = SamlIdp::start().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("idp-metadata.xml");
    std::fs::write(&file, idp.metadata().await).unwrap();
    let file = file.to_str().unwrap();
    let acme = company(t, "Acme");
    let added = t.json(&[
        "companies",
        "idps",
        "add",
        &acme,
        "--saml",
        "--metadata-file",
        file,
        "--name",
        "Sign in with Acme",
        "--domains",
        "acme.example",
        "--allow-idp-initiated",
        "--email-attribute",
        "mail",
    ]);
    let id = str_field(&added, "idp_id").to_owned();
    let base = format!("{HOME}/federation/v0/saml/{id}");
    assert_eq!(added["sp_entity_id"], format!("{base}/metadata"));
    assert_eq!(added["sp_metadata_url"], format!("{base}/metadata"));
    assert_eq!(added["acs_url"], format!("{base}/acs"));

    let shown = t.json(&["companies", "idps", "show", &id]);
    assert_eq!(shown["protocol"], "saml");
    assert_eq!(shown["entity_id"], idp.entity_id());
    assert_eq!(shown["allow_idp_initiated"], true);
    assert_eq!(shown["email_attribute"], "mail");
    let printed = shown.to_string();
    assert!(
        !printed.contains("sp_signing_key") && !printed.contains("PRIVATE"),
        "{printed}"
    );

    let stored = t
        .store
        .federation()
        .get_identity_provider(&IdpId::parse(&id).unwrap())
        .await
        .unwrap()
        .unwrap();
    let IdpProtocol::Saml(connection) = &stored.protocol else {
        panic!("a SAML IdP")
    };
    assert!(!connection.sp_signing_certificate.is_empty());
    assert_ne!(
        connection.sp_signing_certificate, connection.sp_encryption_certificate,
        "two keys"
    );
    assert!(
        !connection.sp_signing_key.as_str().contains("MII"),
        "sealed, not DER"
    );

    let refreshed = t.json(&["companies", "idps", "refresh", &id, "--metadata-file", file]);
    assert_eq!(refreshed["refreshed"], true);
    // Added from a file: a refresh needs one.
    t.fails(&["companies", "idps", "refresh", &id], 2);

    let other = SamlIdp::start().await;
    let other_file = dir.path().join("other.xml");
    std::fs::write(&other_file, other.metadata().await).unwrap();
    let reason = t.fails(
        &[
            "companies",
            "idps",
            "refresh",
            &id,
            "--metadata-file",
            other_file.to_str().unwrap(),
        ],
        2,
    );
    assert!(reason.contains("not of this IdP"), "{reason}");

    let not_metadata = dir.path().join("not.xml");
    std::fs::write(
        &not_metadata,
        "<!DOCTYPE x [<!ENTITY e SYSTEM \"file:///etc/passwd\">]><x>&e;</x>",
    )
    .unwrap();
    let reason = t.fails(
        &[
            "companies",
            "idps",
            "add",
            &acme,
            "--saml",
            "--metadata-file",
            not_metadata.to_str().unwrap(),
            "--name",
            "Bad",
        ],
        2,
    );
    assert!(reason.contains("DOCTYPE"), "{reason}");
    // The IdP on a loopback address the deployment does not allow: never fetched.
    let url = idp.entity_id();
    let reason = t.fails(
        &[
            "companies",
            "idps",
            "add",
            &acme,
            "--saml",
            "--metadata-url",
            &url,
            "--name",
            "Local",
        ],
        2,
    );
    assert!(reason.contains("--metadata-url"), "{reason}");
    t.fails(
        &[
            "companies",
            "idps",
            "add",
            &acme,
            "--saml",
            "--name",
            "No metadata",
        ],
        2,
    );
}
