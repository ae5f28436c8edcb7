//! Company identity providers on SQLite: a row per IdP with the record as its JSON body, a row
//! per domain claim whose primary key (domain, company) is what keeps two IdPs of a company
//! from claiming one domain, a row per link keyed by (IdP, subject) so that a second link of a
//! subject is refused (an IdP is found by its issuer through an index on the body's
//! `issuer`), and the pending upstream requests taken by one `DELETE ... RETURNING`
//! whose `WHERE` holds the expiry, as DynamoDB's conditional delete does.

use async_trait::async_trait;
use rusqlite::{params, OptionalExtension, Transaction};

use super::{from_json, id_to_sql, map_err, to_json, SqliteStore};
use crate::clock::UnixTime;
use crate::domain::{
    FederationLink, IdentityProvider, IdpDomain, IdpId, PendingUpstreamRequest, PrincipalId,
    UpstreamSubject,
};
use crate::secrets::TokenHash;
use crate::{FederationStore, IdpInserted, Linked, StoreResult};

fn bodies<T: serde::de::DeserializeOwned>(
    conn: &rusqlite::Connection,
    sql: &str,
    key: String,
) -> StoreResult<Vec<T>> {
    let bodies: Vec<String> = conn
        .prepare_cached(sql)
        .and_then(|mut stmt| stmt.query_map(params![key], |row| row.get(0))?.collect())
        .map_err(map_err)?;
    bodies.iter().map(|body| from_json(body)).collect()
}

fn link_in(tx: &Transaction<'_>, idp: &str, subject: &str) -> StoreResult<Option<FederationLink>> {
    let body: Option<String> = tx
        .prepare_cached("SELECT body FROM federation_links WHERE idp_id = ?1 AND subject = ?2")
        .and_then(|mut stmt| {
            stmt.query_row(params![idp, subject], |row| row.get(0))
                .optional()
        })
        .map_err(map_err)?;
    body.map(|body| from_json(&body)).transpose()
}

#[async_trait]
impl FederationStore for SqliteStore {
    async fn put_identity_provider(&self, idp: &IdentityProvider) -> StoreResult<IdpInserted> {
        let (id, company, created_at, body) = (
            id_to_sql(&idp.id),
            id_to_sql(&idp.company_id),
            idp.created_at,
            to_json(idp)?,
        );
        let domains = idp.domains.as_slice().to_vec();
        // The writer is serialised, so what is read here is what the inserts meet; the primary
        // keys stay the backstop.
        self.write_tx(move |tx| {
            let exists = |sql: &str, params: &[&dyn rusqlite::ToSql]| {
                tx.prepare_cached(sql)
                    .and_then(|mut stmt| stmt.exists(params))
                    .map_err(map_err)
            };
            if exists("SELECT 1 FROM identity_providers WHERE idp_id = ?1", &[&id])? {
                return Ok(IdpInserted::IdTaken);
            }
            for domain in &domains {
                let sql = "SELECT 1 FROM idp_domains WHERE domain = ?1 AND company_id = ?2";
                if exists(sql, &[&domain.as_str(), &company])? {
                    return Ok(IdpInserted::DomainTaken(domain.clone()));
                }
            }
            tx.prepare_cached(
                "INSERT INTO identity_providers (idp_id, company_id, created_at, body) \
                 VALUES (?1, ?2, ?3, ?4)",
            )
            .and_then(|mut stmt| stmt.execute(params![id, company, created_at, body]))
            .map_err(map_err)?;
            for domain in &domains {
                tx.prepare_cached(
                    "INSERT INTO idp_domains (domain, company_id, idp_id) VALUES (?1, ?2, ?3)",
                )
                .and_then(|mut stmt| stmt.execute(params![domain.as_str(), company, id]))
                .map_err(map_err)?;
            }
            Ok(IdpInserted::Inserted)
        })
        .await
    }

    async fn get_identity_provider(&self, id: &IdpId) -> StoreResult<Option<IdentityProvider>> {
        self.get_body(
            "SELECT body FROM identity_providers WHERE idp_id = ?1",
            (id_to_sql(id),),
        )
        .await
    }

    async fn list_identity_providers(
        &self,
        company: &PrincipalId,
    ) -> StoreResult<Vec<IdentityProvider>> {
        let company = id_to_sql(company);
        self.read(move |conn| {
            bodies(
                conn,
                "SELECT body FROM identity_providers WHERE company_id = ?1 \
                 ORDER BY created_at, idp_id",
                company,
            )
        })
        .await
    }

    async fn replace_identity_provider(&self, idp: &IdentityProvider) -> StoreResult<bool> {
        let (id, body) = (id_to_sql(&idp.id), to_json(idp)?);
        self.write_tx(move |tx| {
            let changed = tx
                .prepare_cached("UPDATE identity_providers SET body = ?2 WHERE idp_id = ?1")
                .and_then(|mut stmt| stmt.execute(params![id, body]))
                .map_err(map_err)?;
            Ok(changed == 1)
        })
        .await
    }

    async fn identity_providers_for_domain(
        &self,
        domain: &IdpDomain,
    ) -> StoreResult<Vec<IdentityProvider>> {
        let domain = domain.as_str().to_owned();
        self.read(move |conn| {
            bodies(
                conn,
                "SELECT i.body FROM idp_domains d JOIN identity_providers i ON i.idp_id = d.idp_id \
                 WHERE d.domain = ?1 ORDER BY i.created_at, i.idp_id",
                domain,
            )
        })
        .await
    }

    async fn identity_providers_for_issuer(
        &self,
        issuer: &str,
    ) -> StoreResult<Vec<IdentityProvider>> {
        let issuer = issuer.to_owned();
        self.read(move |conn| {
            bodies(
                conn,
                "SELECT body FROM identity_providers \
                 WHERE json_extract(body, '$.issuer') = ?1 \
                 AND json_extract(body, '$.protocol') = 'oidc' \
                 AND json_extract(body, '$.id_jag') = 1 ORDER BY created_at, idp_id",
                issuer,
            )
        })
        .await
    }

    async fn delete_identity_provider(&self, id: &IdpId) -> StoreResult<Option<IdentityProvider>> {
        let id = id_to_sql(id);
        self.write_tx(move |tx| {
            let body: Option<String> = tx
                .prepare_cached("DELETE FROM identity_providers WHERE idp_id = ?1 RETURNING body")
                .and_then(|mut stmt| stmt.query_row(params![id], |row| row.get(0)).optional())
                .map_err(map_err)?;
            for sql in [
                "DELETE FROM idp_domains WHERE idp_id = ?1",
                "DELETE FROM federation_links WHERE idp_id = ?1",
            ] {
                tx.prepare_cached(sql)
                    .and_then(|mut stmt| stmt.execute(params![id]))
                    .map_err(map_err)?;
            }
            body.map(|body| from_json(&body)).transpose()
        })
        .await
    }

    async fn put_federation_link(&self, link: &FederationLink) -> StoreResult<Linked> {
        let (idp, subject, user, linked_at, body) = (
            id_to_sql(&link.idp_id),
            link.subject.key(),
            id_to_sql(&link.user_id),
            link.linked_at,
            to_json(link)?,
        );
        self.write_tx(move |tx| {
            let inserted = tx
                .prepare_cached(
                    "INSERT INTO federation_links (idp_id, subject, user_id, linked_at, body) \
                     VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (idp_id, subject) DO NOTHING",
                )
                .and_then(|mut stmt| stmt.execute(params![idp, subject, user, linked_at, body]))
                .map_err(map_err)?;
            if inserted == 1 {
                return Ok(Linked::Linked);
            }
            let existing = link_in(tx, &idp, &subject)?;
            existing.map(Linked::AlreadyLinked).ok_or_else(|| {
                crate::StoreError::internal("a refused link is not stored".to_owned())
            })
        })
        .await
    }

    async fn get_federation_link(
        &self,
        idp: &IdpId,
        subject: &UpstreamSubject,
    ) -> StoreResult<Option<FederationLink>> {
        self.get_body(
            "SELECT body FROM federation_links WHERE idp_id = ?1 AND subject = ?2",
            (id_to_sql(idp), subject.key()),
        )
        .await
    }

    async fn list_user_links(&self, user: &PrincipalId) -> StoreResult<Vec<FederationLink>> {
        let user = id_to_sql(user);
        self.read(move |conn| {
            bodies(
                conn,
                "SELECT body FROM federation_links WHERE user_id = ?1 \
                 ORDER BY linked_at, idp_id, subject",
                user,
            )
        })
        .await
    }

    async fn delete_federation_link(
        &self,
        idp: &IdpId,
        subject: &UpstreamSubject,
    ) -> StoreResult<Option<FederationLink>> {
        let (idp, subject) = (id_to_sql(idp), subject.key());
        self.write_tx(move |tx| {
            let body: Option<String> = tx
                .prepare_cached(
                    "DELETE FROM federation_links WHERE idp_id = ?1 AND subject = ?2 \
                     RETURNING body",
                )
                .and_then(|mut stmt| {
                    stmt.query_row(params![idp, subject], |row| row.get(0))
                        .optional()
                })
                .map_err(map_err)?;
            body.map(|body| from_json(&body)).transpose()
        })
        .await
    }

    async fn list_idp_links(&self, idp: &IdpId) -> StoreResult<Vec<FederationLink>> {
        let idp = id_to_sql(idp);
        self.read(move |conn| {
            bodies(
                conn,
                "SELECT body FROM federation_links WHERE idp_id = ?1 \
                 ORDER BY linked_at, subject",
                idp,
            )
        })
        .await
    }

    async fn delete_idp_links(&self, idp: &IdpId) -> StoreResult<usize> {
        self.execute(
            "DELETE FROM federation_links WHERE idp_id = ?1",
            (id_to_sql(idp),),
        )
        .await
    }

    async fn put_upstream_request(&self, request: &PendingUpstreamRequest) -> StoreResult<()> {
        let params = (
            request.state_hash.to_hex(),
            request.expires_at,
            to_json(request)?,
        );
        self.execute(
            "INSERT INTO upstream_requests (state_hash, expires_at, body) VALUES (?1, ?2, ?3)",
            params,
        )
        .await?;
        Ok(())
    }

    async fn get_upstream_request(
        &self,
        state_hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<PendingUpstreamRequest>> {
        let hash = state_hash.to_hex();
        self.read(move |conn| {
            let body: Option<String> = conn
                .prepare_cached(
                    "SELECT body FROM upstream_requests WHERE state_hash = ?1 AND expires_at > ?2",
                )
                .and_then(|mut stmt| {
                    stmt.query_row(params![hash, now], |row| row.get(0))
                        .optional()
                })
                .map_err(map_err)?;
            body.map(|body| from_json(&body)).transpose()
        })
        .await
    }

    async fn take_upstream_request(
        &self,
        state_hash: &TokenHash,
        now: UnixTime,
    ) -> StoreResult<Option<PendingUpstreamRequest>> {
        let hash = state_hash.to_hex();
        self.write_tx(move |tx| {
            let body: Option<String> = tx
                .prepare_cached(
                    "DELETE FROM upstream_requests WHERE state_hash = ?1 AND expires_at > ?2 \
                     RETURNING body",
                )
                .and_then(|mut stmt| {
                    stmt.query_row(params![hash, now], |row| row.get(0))
                        .optional()
                })
                .map_err(map_err)?;
            body.map(|body| from_json(&body)).transpose()
        })
        .await
    }
}
