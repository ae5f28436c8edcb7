//! Company identity providers: found by id, by company, by domain and (those that accept
//! identity assertions) by issuer; a domain claimed once per
//! company; removal taking the claims and the links with it; a link written once and never
//! moved, by one of racing first sign-ins; a pending upstream request taken once, only before
//! it expires, by one of racing takes.

use super::records::*;
use crate::domain::{
    FederationLink, IdentityProvider, IdpDomain, IdpDomains, IdpId, IdpProtocol, LinkBy,
    OidcConnection, PendingUpstreamRequest, PrincipalId, SamlConnection, SealedSecret,
    TokenEndpointAuth, UpstreamSubject, UPSTREAM_REQUEST_TTL_SECONDS,
};
use crate::random::{OsRandom, RandomExt};
use crate::store::prelude::*;
use crate::store::{IdpInserted, Linked};

fn id() -> PrincipalId {
    PrincipalId::new(OsRandom.uuid())
}

/// A domain no other test claims.
fn domain() -> String {
    format!("d{}.example", OsRandom.uuid().simple())
}

fn oidc(company: PrincipalId, domains: &[String], created_at: i64) -> IdentityProvider {
    IdentityProvider {
        id: IdpId::new(OsRandom.uuid()),
        company_id: company,
        name: "Sign in with Acme \u{e9}".to_owned(),
        protocol: IdpProtocol::Oidc(OidcConnection {
            issuer: "https://idp.example/tenant".to_owned(),
            client_id: "our-client".to_owned(),
            client_secret: SealedSecret::new("c2VhbGVk"),
            scopes: vec!["openid".to_owned(), "email".to_owned()],
            token_endpoint_auth: TokenEndpointAuth::ClientSecretPost,
        }),
        domains: IdpDomains::parse(domains).expect("domains"),
        link_by: LinkBy::None,
        jit: false,
        trust_mfa: true,
        id_jag: true,
        created_at,
    }
}

fn saml(company: PrincipalId, domains: &[String], created_at: i64) -> IdentityProvider {
    IdentityProvider {
        protocol: IdpProtocol::Saml(SamlConnection {
            entity_id: "urn:idp:acme".to_owned(),
            metadata: "<EntityDescriptor entityID=\"urn:idp:acme\"/>".to_owned(),
            metadata_url: Some("https://idp.example/metadata".to_owned()),
            allow_idp_initiated: true,
            email_attribute: None,
            sp_signing_key: SealedSecret::new("sealed-signing-key"),
            sp_signing_certificate: "MIIB".to_owned(),
            sp_encryption_key: SealedSecret::new("sealed-encryption-key"),
            sp_encryption_certificate: "MIIC".to_owned(),
        }),
        ..oidc(company, domains, created_at)
    }
}

fn link(idp: &IdentityProvider, subject: &str, user: PrincipalId, at: i64) -> FederationLink {
    FederationLink {
        idp_id: idp.id,
        subject: UpstreamSubject::new("https://idp.example/tenant", subject).expect("subject"),
        user_id: user,
        company_id: idp.company_id,
        linked_at: at,
    }
}

fn parsed(name: &str) -> IdpDomain {
    IdpDomain::parse(name).expect("domain")
}

pub async fn identity_providers_are_found_by_id_company_and_domain(store: &dyn Store) {
    let (now, federation) = (now(), store.federation());
    let (company, other) = (id(), id());
    let (shared, own) = (domain(), domain());
    let second = saml(company, std::slice::from_ref(&own), now + 1);
    let first = oidc(company, &[shared.clone(), own.clone() + ".sub"], now);
    let elsewhere = oidc(other, std::slice::from_ref(&shared), now + 2);
    for idp in [&second, &first, &elsewhere] {
        assert_eq!(
            federation.put_identity_provider(idp).await.expect("put"),
            IdpInserted::Inserted
        );
    }
    assert_eq!(
        federation.put_identity_provider(&first).await.unwrap(),
        IdpInserted::IdTaken
    );
    assert_eq!(
        federation.get_identity_provider(&first.id).await.unwrap(),
        Some(first.clone())
    );
    assert_eq!(
        federation.get_identity_provider(&second.id).await.unwrap(),
        Some(second.clone()),
        "a SAML IdP reads back whole"
    );
    let unknown = IdpId::new(OsRandom.uuid());
    assert_eq!(
        federation.get_identity_provider(&unknown).await.unwrap(),
        None
    );
    assert_eq!(
        federation.list_identity_providers(&company).await.unwrap(),
        vec![first.clone(), second.clone()],
        "oldest first, only the company's"
    );
    assert_eq!(
        federation
            .identity_providers_for_domain(&parsed(&shared))
            .await
            .unwrap(),
        vec![first.clone(), elsewhere],
        "two companies may claim one domain"
    );
    assert_eq!(
        federation
            .identity_providers_for_domain(&parsed(&own))
            .await
            .unwrap(),
        vec![second]
    );
    assert_eq!(
        federation
            .identity_providers_for_domain(&parsed(&domain()))
            .await
            .unwrap(),
        vec![]
    );
}

/// The OpenID Connect IdPs of one issuer that accept identity assertions, of every company,
/// oldest first; neither a SAML IdP nor one without `id_jag`; none once removed.
pub async fn assertion_issuers_are_found_by_issuer(store: &dyn Store) {
    let (now, federation) = (now(), store.federation());
    let issuer = format!("https://idp{}.example/tenant", OsRandom.uuid().simple());
    let of_issuer = |idp: IdentityProvider| {
        let IdpProtocol::Oidc(mut oidc) = idp.protocol.clone() else {
            unreachable!("an OIDC IdP")
        };
        oidc.issuer.clone_from(&issuer);
        IdentityProvider {
            protocol: IdpProtocol::Oidc(oidc),
            ..idp
        }
    };
    let first = of_issuer(oidc(id(), &[], now));
    let second = of_issuer(oidc(id(), &[], now + 1));
    let without = IdentityProvider {
        id_jag: false,
        ..of_issuer(oidc(id(), &[], now + 2))
    };
    let other_issuer = oidc(id(), &[], now + 3);
    let of_saml = saml(id(), &[], now + 4);
    for idp in [&second, &first, &without, &other_issuer, &of_saml] {
        assert_eq!(
            federation.put_identity_provider(idp).await.expect("put"),
            IdpInserted::Inserted
        );
    }
    assert_eq!(
        federation
            .identity_providers_for_issuer(&issuer)
            .await
            .unwrap(),
        vec![first.clone(), second.clone()],
        "oldest first, only those that accept assertions"
    );
    let renamed = IdentityProvider {
        name: "Renamed".to_owned(),
        ..first.clone()
    };
    assert!(federation
        .replace_identity_provider(&renamed)
        .await
        .unwrap());
    assert_eq!(
        federation
            .identity_providers_for_issuer(&issuer)
            .await
            .unwrap(),
        vec![renamed, second.clone()],
        "a replacement reads anew under the issuer too"
    );
    federation
        .delete_identity_provider(&first.id)
        .await
        .unwrap();
    assert_eq!(
        federation
            .identity_providers_for_issuer(&issuer)
            .await
            .unwrap(),
        vec![second],
        "a removed IdP is no issuer any more"
    );
    let unknown = format!("https://idp{}.example", OsRandom.uuid().simple());
    assert_eq!(
        federation
            .identity_providers_for_issuer(&unknown)
            .await
            .unwrap(),
        vec![]
    );
}

pub async fn a_replaced_identity_provider_reads_anew_everywhere(store: &dyn Store) {
    let (now, federation) = (now(), store.federation());
    let company = id();
    let own = domain();
    let idp = saml(company, std::slice::from_ref(&own), now);
    let never_stored = saml(company, &[], now);
    assert!(!federation
        .replace_identity_provider(&never_stored)
        .await
        .unwrap());
    assert_eq!(
        federation
            .get_identity_provider(&never_stored.id)
            .await
            .unwrap(),
        None
    );
    federation.put_identity_provider(&idp).await.expect("put");
    let mut refreshed = idp.clone();
    if let IdpProtocol::Saml(connection) = &mut refreshed.protocol {
        "<EntityDescriptor entityID=\"urn:idp:acme\">new</EntityDescriptor>"
            .clone_into(&mut connection.metadata);
    }
    assert!(federation
        .replace_identity_provider(&refreshed)
        .await
        .unwrap());
    assert_eq!(
        federation.get_identity_provider(&idp.id).await.unwrap(),
        Some(refreshed.clone())
    );
    assert_eq!(
        federation.list_identity_providers(&company).await.unwrap(),
        vec![refreshed.clone()]
    );
    assert_eq!(
        federation
            .identity_providers_for_domain(&parsed(&own))
            .await
            .unwrap(),
        vec![refreshed],
        "the domain's copy is the new one too"
    );
}

pub async fn a_company_claims_a_domain_for_one_identity_provider_only(store: &dyn Store) {
    let (now, federation) = (now(), store.federation());
    let company = id();
    let (taken, free) = (domain(), domain());
    let first = oidc(company, std::slice::from_ref(&taken), now);
    assert_eq!(
        federation.put_identity_provider(&first).await.unwrap(),
        IdpInserted::Inserted
    );
    let second = saml(company, &[free.clone(), taken.clone()], now + 1);
    assert_eq!(
        federation.put_identity_provider(&second).await.unwrap(),
        IdpInserted::DomainTaken(parsed(&taken))
    );
    assert_eq!(
        federation.get_identity_provider(&second.id).await.unwrap(),
        None,
        "a refused IdP writes nothing"
    );
    assert_eq!(
        federation
            .identity_providers_for_domain(&parsed(&free))
            .await
            .unwrap(),
        vec![],
        "nor any of its other claims"
    );
    assert_eq!(
        federation.list_identity_providers(&company).await.unwrap(),
        vec![first]
    );
}

pub async fn removing_an_identity_provider_removes_its_claims_and_links(store: &dyn Store) {
    let (now, federation) = (now(), store.federation());
    let (company, user) = (id(), id());
    let name = domain();
    let idp = oidc(company, std::slice::from_ref(&name), now);
    let kept = saml(company, &[domain()], now);
    federation.put_identity_provider(&idp).await.unwrap();
    federation.put_identity_provider(&kept).await.unwrap();
    let (gone, stays) = (
        link(&idp, "sub-1", user, now),
        link(&kept, "sub-1", user, now),
    );
    federation.put_federation_link(&gone).await.unwrap();
    federation.put_federation_link(&stays).await.unwrap();
    federation
        .put_federation_link(&link(&idp, "sub-2", id(), now))
        .await
        .unwrap();

    assert_eq!(
        federation.delete_identity_provider(&idp.id).await.unwrap(),
        Some(idp.clone())
    );
    assert_eq!(
        federation.get_identity_provider(&idp.id).await.unwrap(),
        None
    );
    assert_eq!(
        federation.list_identity_providers(&company).await.unwrap(),
        vec![kept]
    );
    assert_eq!(
        federation
            .identity_providers_for_domain(&parsed(&name))
            .await
            .unwrap(),
        vec![]
    );
    assert_eq!(
        federation
            .get_federation_link(&idp.id, &gone.subject)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        federation.list_user_links(&user).await.unwrap(),
        vec![stays]
    );
    assert_eq!(
        federation.delete_identity_provider(&idp.id).await.unwrap(),
        None
    );
    let again = oidc(company, &[name], now + 1);
    assert_eq!(
        federation.put_identity_provider(&again).await.unwrap(),
        IdpInserted::Inserted,
        "the removed IdP's domain is free again"
    );
}

pub async fn a_link_is_written_once_and_never_moves(store: &dyn Store) {
    let (now, federation) = (now(), store.federation());
    let (user, thief) = (id(), id());
    let idp = oidc(id(), &[domain()], now);
    let other_idp = saml(idp.company_id, &[domain()], now);
    let later = link(&idp, "persistent 7", user, now + 1);
    let first = link(&other_idp, "persistent 7", user, now);
    assert_eq!(
        federation.put_federation_link(&later).await.expect("put"),
        Linked::Linked
    );
    assert_eq!(
        federation.put_federation_link(&first).await.unwrap(),
        Linked::Linked,
        "the same subject at another IdP is another link"
    );
    assert_eq!(
        federation
            .put_federation_link(&link(&idp, "persistent 7", thief, now + 5))
            .await
            .unwrap(),
        Linked::AlreadyLinked(later.clone()),
        "a link never moves"
    );
    assert_eq!(
        federation
            .get_federation_link(&idp.id, &later.subject)
            .await
            .unwrap(),
        Some(later.clone())
    );
    assert_eq!(federation.list_user_links(&thief).await.unwrap(), vec![]);
    assert_eq!(
        federation.list_user_links(&user).await.unwrap(),
        vec![first.clone(), later.clone()],
        "oldest first"
    );
    assert_eq!(
        federation
            .delete_federation_link(&idp.id, &later.subject)
            .await
            .unwrap(),
        Some(later.clone())
    );
    assert_eq!(
        federation
            .delete_federation_link(&idp.id, &later.subject)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        federation.list_user_links(&user).await.unwrap(),
        vec![first]
    );
    let moved = link(&idp, "persistent 7", thief, now + 6);
    assert_eq!(
        federation.put_federation_link(&moved).await.unwrap(),
        Linked::Linked,
        "once removed, the subject may be linked anew"
    );
    federation
        .put_federation_link(&link(&idp, "another", user, now))
        .await
        .unwrap();
    assert_eq!(federation.delete_idp_links(&idp.id).await.unwrap(), 2);
    assert_eq!(federation.list_user_links(&thief).await.unwrap(), vec![]);
    assert_eq!(
        federation.list_user_links(&user).await.unwrap().len(),
        1,
        "the other IdP's link stays"
    );
}

pub async fn an_identity_providers_links_are_listed_oldest_first(store: &dyn Store) {
    let (now, federation) = (now(), store.federation());
    let (first_user, second_user) = (id(), id());
    let idp = oidc(id(), &[domain()], now);
    let other_idp = saml(idp.company_id, &[domain()], now);
    let later = link(&idp, "sub-b", first_user, now + 2);
    let first = link(&idp, "sub-a", second_user, now);
    let elsewhere = link(&other_idp, "sub-c", first_user, now + 1);
    for each in [&later, &first, &elsewhere] {
        assert_eq!(
            federation.put_federation_link(each).await.unwrap(),
            Linked::Linked
        );
    }
    assert_eq!(
        federation.list_idp_links(&idp.id).await.unwrap(),
        vec![first, later],
        "its own links only, oldest first"
    );
    assert_eq!(
        federation.list_idp_links(&id_of_none()).await.unwrap(),
        vec![],
        "an IdP without links"
    );
    assert_eq!(federation.delete_idp_links(&idp.id).await.unwrap(), 2);
    assert_eq!(federation.list_idp_links(&idp.id).await.unwrap(), vec![]);
    assert_eq!(
        federation.list_idp_links(&other_idp.id).await.unwrap(),
        vec![elsewhere]
    );
}

fn id_of_none() -> IdpId {
    IdpId::new(OsRandom.uuid())
}

pub async fn concurrent_first_links_of_a_subject_have_one_winner(store: &dyn Store) {
    let now = now();
    let idp = oidc(id(), &[domain()], now);
    let links: Vec<FederationLink> = (0..10).map(|_| link(&idp, "racer", id(), now)).collect();
    let puts = links
        .iter()
        .map(|link| store.federation().put_federation_link(link));
    let outcomes: Vec<Linked> = futures::future::join_all(puts)
        .await
        .into_iter()
        .map(|outcome| outcome.expect("put_federation_link"))
        .collect();
    let winners: Vec<&FederationLink> = links
        .iter()
        .zip(&outcomes)
        .filter(|(_, outcome)| **outcome == Linked::Linked)
        .map(|(link, _)| link)
        .collect();
    assert_eq!(winners.len(), 1, "{outcomes:?}");
    for outcome in &outcomes {
        if let Linked::AlreadyLinked(existing) = outcome {
            assert_eq!(
                existing, winners[0],
                "every loser is told the winner's link"
            );
        }
    }
}

fn upstream_request(now: i64) -> PendingUpstreamRequest {
    PendingUpstreamRequest {
        state_hash: random_hash(),
        idp_id: IdpId::new(OsRandom.uuid()),
        nonce: "n-0S6_WzA2Mj".to_owned(),
        pkce_verifier: SealedSecret::new("c2VhbGVkIHZlcmlmaWVy"),
        continuation: SealedSecret::new("c2VhbGVkIGNvbnRpbnVhdGlvbg"),
        created_at: now,
        expires_at: now + UPSTREAM_REQUEST_TTL_SECONDS,
    }
}

pub async fn an_upstream_request_is_taken_once_before_it_expires(store: &dyn Store) {
    let (now, federation) = (now(), store.federation());
    let live = upstream_request(now);
    federation.put_upstream_request(&live).await.expect("put");
    for _ in 0..2 {
        let read = federation.get_upstream_request(&live.state_hash, now).await;
        assert_eq!(
            read.unwrap(),
            Some(live.clone()),
            "a read leaves it in place"
        );
    }
    let at_expiry = federation.get_upstream_request(&live.state_hash, live.expires_at);
    assert_eq!(
        at_expiry.await.unwrap(),
        None,
        "read as expired at its expiry"
    );
    let unknown = federation.get_upstream_request(&random_hash(), now).await;
    assert_eq!(unknown.unwrap(), None);
    assert_eq!(
        federation
            .take_upstream_request(&random_hash(), now)
            .await
            .unwrap(),
        None,
        "unknown"
    );
    assert_eq!(
        federation
            .take_upstream_request(&live.state_hash, now + 1)
            .await
            .unwrap(),
        Some(live.clone())
    );
    assert_eq!(
        federation
            .take_upstream_request(&live.state_hash, now + 1)
            .await
            .unwrap(),
        None,
        "used"
    );
    let gone = federation
        .get_upstream_request(&live.state_hash, now + 1)
        .await;
    assert_eq!(gone.unwrap(), None, "a taken one reads as gone");
    let expired = upstream_request(now);
    federation.put_upstream_request(&expired).await.unwrap();
    assert_eq!(
        federation
            .take_upstream_request(&expired.state_hash, expired.expires_at)
            .await
            .unwrap(),
        None,
        "expired at its expiry, even while the item lingers"
    );
}

pub async fn concurrent_takes_of_an_upstream_request_have_one_winner(store: &dyn Store) {
    let now = now();
    let record = upstream_request(now);
    store
        .federation()
        .put_upstream_request(&record)
        .await
        .unwrap();
    let takes = (0..16).map(|_| {
        store
            .federation()
            .take_upstream_request(&record.state_hash, now)
    });
    let winners = futures::future::join_all(takes)
        .await
        .into_iter()
        .filter_map(|taken| taken.expect("take_upstream_request"))
        .collect::<Vec<_>>();
    assert_eq!(winners, vec![record]);
}
