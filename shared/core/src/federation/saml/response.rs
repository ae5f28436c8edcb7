//! The IdP's `Response` at our assertion consumer service (SAML profiles §4.1.4), taken only
//! when every rule holds. The XML Signature itself is the library's (`bergshamra`, keys from the
//! IdP's metadata only, references only to the signature's own ancestors, every digest
//! computed); what is ours: the signature must cover exactly the one assertion that is then
//! read (found by node, not by a second lookup of its ID), SHA-1 is refused by name, and the
//! protocol's conditions (status, issuer, destination, recipient, audience, times, the request
//! it answers) are checked on that assertion.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use bergshamra::{DsigContext, EncContext, KeysManager, VerifyResult};
use uppsala::{Document, NodeId};

use super::xml::{self, attr, child, children, Unreadable, ASSERTION, DSIG, PROTOCOL};

/// Clock skew allowed either way on every time condition.
pub const CLOCK_SKEW_SECONDS: i64 = 120;

const BEARER: &str = "urn:oasis:names:tc:SAML:2.0:cm:bearer";

/// What the response is checked against.
pub struct Expected<'a> {
    pub idp_entity_id: &'a str,
    /// DER certificates of the IdP's metadata.
    pub certificates: &'a [Vec<u8>],
    pub sp_entity_id: &'a str,
    pub acs: &'a str,
    /// Our `AuthnRequest`'s ID; `None` for an IdP-initiated (unsolicited) response.
    pub in_response_to: Option<&'a str>,
    /// Our encryption key (PKCS#8 PEM), for an `EncryptedAssertion`.
    pub decryption_key_pem: &'a [u8],
    pub now: i64,
}

/// The assertion as read, once everything held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assertion {
    pub id: String,
    pub name_id: String,
    pub name_id_format: Option<String>,
    pub session_index: Option<String>,
    pub authn_instant: Option<i64>,
    pub context_class: Option<String>,
    /// Each attribute's name and values, in document order.
    pub attributes: Vec<(String, Vec<String>)>,
    /// Until when the assertion could be presented: its ID is remembered so long.
    pub valid_until: i64,
}

impl Assertion {
    /// The first value of the first attribute of these names, in their order.
    pub fn attribute(&self, names: &[&str]) -> Option<&str> {
        names.iter().find_map(|name| {
            self.attributes
                .iter()
                .find(|(attribute, _)| attribute == name)
                .and_then(|(_, values)| values.first())
                .map(String::as_str)
        })
    }
}

/// Why a response is refused: each is a `federation.refused` reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseRefusal {
    Unreadable(Unreadable),
    /// The IdP's status is not `Success` (the user cancelled, or it refused).
    IdpFailure,
    Unsigned,
    BadSignature,
    WeakAlgorithm,
    /// Not exactly one assertion where it belongs, or one the signature does not cover.
    Wrapped,
    NotDecryptable,
    WrongIssuer,
    WrongDestination,
    WrongRecipient,
    WrongAudience,
    Expired,
    NotYetValid,
    /// `InResponseTo` names another request (or any, for an unsolicited response, or none for
    /// a solicited one).
    WrongRequest,
    MissingSubject,
    /// This assertion was accepted before.
    Replayed,
}

impl ResponseRefusal {
    pub fn reason(self) -> &'static str {
        match self {
            Self::Unreadable(Unreadable::TooLarge) => "too_large",
            Self::Unreadable(Unreadable::Dtd) => "dtd",
            Self::Unreadable(Unreadable::Malformed) => "malformed",
            Self::IdpFailure => "idp_refused",
            Self::Unsigned => "unsigned",
            Self::BadSignature => "bad_signature",
            Self::WeakAlgorithm => "weak_algorithm",
            Self::Wrapped => "signature_wrapping",
            Self::NotDecryptable => "not_decryptable",
            Self::WrongIssuer => "wrong_issuer",
            Self::WrongDestination => "wrong_destination",
            Self::WrongRecipient => "wrong_recipient",
            Self::WrongAudience => "wrong_audience",
            Self::Expired => "expired",
            Self::NotYetValid => "not_yet_valid",
            Self::WrongRequest => "wrong_request",
            Self::MissingSubject => "no_subject",
            Self::Replayed => "replayed",
        }
    }
}

type Checked<T> = Result<T, ResponseRefusal>;

/// The `SAMLResponse` form field (base64) read and checked.
pub fn read_response(encoded: &str, expected: &Expected<'_>) -> Checked<Assertion> {
    let compact: String = encoded
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    if compact.len() > xml::MAX_DOCUMENT_BYTES * 4 / 3 + 4 {
        return Err(ResponseRefusal::Unreadable(Unreadable::TooLarge));
    }
    let bytes = STANDARD
        .decode(compact)
        .map_err(|_| ResponseRefusal::Unreadable(Unreadable::Malformed))?;
    let text =
        String::from_utf8(bytes).map_err(|_| ResponseRefusal::Unreadable(Unreadable::Malformed))?;
    let doc = xml::parse(&text).map_err(ResponseRefusal::Unreadable)?;
    let root = doc
        .document_element()
        .filter(|root| xml::is(&doc, *root, PROTOCOL, "Response"))
        .ok_or(ResponseRefusal::Unreadable(Unreadable::Malformed))?;
    let success = child(&doc, root, PROTOCOL, "Status")
        .and_then(|status| child(&doc, status, PROTOCOL, "StatusCode"))
        .and_then(|code| attr(&doc, code, "Value"))
        == Some(xml::STATUS_SUCCESS);
    if !success {
        return Err(ResponseRefusal::IdpFailure);
    }
    if attr(&doc, root, "Destination") != Some(expected.acs) {
        return Err(ResponseRefusal::WrongDestination);
    }
    if let Some(issuer) = child(&doc, root, ASSERTION, "Issuer") {
        if xml::text(&doc, issuer) != expected.idp_entity_id {
            return Err(ResponseRefusal::WrongIssuer);
        }
    }
    if attr(&doc, root, "InResponseTo") != expected.in_response_to {
        return Err(ResponseRefusal::WrongRequest);
    }
    let response_signed = match child(&doc, root, DSIG, "Signature") {
        Some(signature) => {
            covered_by(&doc, signature, root, expected.certificates)?;
            true
        }
        None => false,
    };
    // Exactly one assertion, plain or encrypted, as a child of the Response: none in
    // `Extensions`, in an `Advice`, or beside it.
    let plain = xml::all(&doc, ASSERTION, "Assertion");
    let encrypted = xml::all(&doc, ASSERTION, "EncryptedAssertion");
    if plain.len() + encrypted.len() != 1 {
        return Err(ResponseRefusal::Wrapped);
    }
    if let Some(only) = plain.first() {
        if doc.parent(*only) != Some(root) {
            return Err(ResponseRefusal::Wrapped);
        }
        return checked_assertion(&doc, *only, response_signed, expected);
    }
    let wrapper = encrypted[0];
    if doc.parent(wrapper) != Some(root) {
        return Err(ResponseRefusal::Wrapped);
    }
    let decrypted = decrypt(&text, expected.decryption_key_pem)?;
    let doc = xml::parse(&decrypted).map_err(ResponseRefusal::Unreadable)?;
    let root = doc
        .document_element()
        .ok_or(ResponseRefusal::NotDecryptable)?;
    let assertions = xml::all(&doc, ASSERTION, "Assertion");
    let [assertion] = assertions.as_slice() else {
        return Err(ResponseRefusal::Wrapped);
    };
    let in_wrapper = doc
        .parent(*assertion)
        .filter(|parent| xml::is(&doc, *parent, ASSERTION, "EncryptedAssertion"))
        .and_then(|wrapper| doc.parent(wrapper));
    if in_wrapper != Some(root) {
        return Err(ResponseRefusal::Wrapped);
    }
    checked_assertion(&doc, *assertion, response_signed, expected)
}

fn decrypt(text: &str, key_pem: &[u8]) -> Checked<String> {
    let key = bergshamra::keys::loader::load_rsa_private_pem(key_pem)
        .map_err(|_| ResponseRefusal::NotDecryptable)?;
    let mut keys = KeysManager::new();
    keys.add_key(key);
    // A `CipherReference` would make us fetch a URI the document names.
    let context = EncContext::new(keys).with_disable_cipher_reference(true);
    bergshamra::decrypt(&context, text).map_err(|_| ResponseRefusal::NotDecryptable)
}

/// Refuses unless `signature` is a valid signature, by a key of `certificates`, with RSA and
/// SHA-256 or stronger, whose one reference is `target` (same-document).
pub(super) fn covered_by(
    doc: &Document<'_>,
    signature: NodeId,
    target: NodeId,
    certificates: &[Vec<u8>],
) -> Checked<()> {
    check_algorithms(doc, signature)?;
    let mut keys = KeysManager::new();
    for certificate in certificates {
        let key = bergshamra::keys::loader::load_x509_cert_der(certificate)
            .map_err(|_| ResponseRefusal::BadSignature)?;
        keys.add_key(key);
    }
    // `ID` is among the library's ID attributes already (with `Id`, `id`, `AssertionID`).
    let context = DsigContext::new(keys)
        .with_trusted_keys_only(true)
        .with_strict_verification(true)
        .with_require_reference_digests(true);
    // A document-level failure (two elements with one ID among them) refuses the whole.
    let results = bergshamra::dsig::verify::verify_all_document(&context, doc)
        .map_err(|_| ResponseRefusal::Wrapped)?;
    let this = results.iter().find_map(|result| match result {
        VerifyResult::Valid {
            signature_node,
            references,
            ..
        } if *signature_node == signature => Some(references),
        _ => None,
    });
    let Some(references) = this else {
        return Err(ResponseRefusal::BadSignature);
    };
    let covers_target = references.len() == 1
        && references[0].digest_verified
        && references[0].uri.starts_with('#')
        && references[0].resolved_node == Some(target);
    if !covers_target {
        return Err(ResponseRefusal::Wrapped);
    }
    Ok(())
}

const STRONG_SIGNATURES: [&str; 6] = [
    "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
    "http://www.w3.org/2001/04/xmldsig-more#rsa-sha384",
    "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512",
    "http://www.w3.org/2007/05/xmldsig-more#sha256-rsa-MGF1",
    "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256",
    "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384",
];
const STRONG_DIGESTS: [&str; 3] = [
    "http://www.w3.org/2001/04/xmlenc#sha256",
    "http://www.w3.org/2001/04/xmldsig-more#sha384",
    "http://www.w3.org/2001/04/xmlenc#sha512",
];

fn check_algorithms(doc: &Document<'_>, signature: NodeId) -> Checked<()> {
    let signed_info =
        child(doc, signature, DSIG, "SignedInfo").ok_or(ResponseRefusal::BadSignature)?;
    let method = child(doc, signed_info, DSIG, "SignatureMethod")
        .and_then(|method| attr(doc, method, "Algorithm"))
        .ok_or(ResponseRefusal::BadSignature)?;
    if !STRONG_SIGNATURES.contains(&method) {
        return Err(ResponseRefusal::WeakAlgorithm);
    }
    for reference in children(doc, signed_info, DSIG, "Reference") {
        let digest = child(doc, reference, DSIG, "DigestMethod")
            .and_then(|method| attr(doc, method, "Algorithm"))
            .ok_or(ResponseRefusal::BadSignature)?;
        if !STRONG_DIGESTS.contains(&digest) {
            return Err(ResponseRefusal::WeakAlgorithm);
        }
    }
    Ok(())
}

fn checked_assertion(
    doc: &Document<'_>,
    assertion: NodeId,
    response_signed: bool,
    expected: &Expected<'_>,
) -> Checked<Assertion> {
    match child(doc, assertion, DSIG, "Signature") {
        Some(signature) => covered_by(doc, signature, assertion, expected.certificates)?,
        None if response_signed => {}
        None => return Err(ResponseRefusal::Unsigned),
    }
    let issuer = child(doc, assertion, ASSERTION, "Issuer").map(|node| xml::text(doc, node));
    if issuer.as_deref() != Some(expected.idp_entity_id) {
        return Err(ResponseRefusal::WrongIssuer);
    }
    let now = expected.now;
    let subject =
        child(doc, assertion, ASSERTION, "Subject").ok_or(ResponseRefusal::MissingSubject)?;
    let name_id_node =
        child(doc, subject, ASSERTION, "NameID").ok_or(ResponseRefusal::MissingSubject)?;
    let name_id = xml::text(doc, name_id_node);
    if name_id.is_empty() {
        return Err(ResponseRefusal::MissingSubject);
    }
    let confirmation_until = bearer_confirmation(doc, subject, expected)?;
    let conditions_until = conditions(doc, assertion, expected)?;
    let valid_until =
        conditions_until.map_or(confirmation_until, |until| until.min(confirmation_until));
    if valid_until + CLOCK_SKEW_SECONDS <= now {
        return Err(ResponseRefusal::Expired);
    }
    let authn = child(doc, assertion, ASSERTION, "AuthnStatement");
    let context_class = authn
        .and_then(|statement| child(doc, statement, ASSERTION, "AuthnContext"))
        .and_then(|context| child(doc, context, ASSERTION, "AuthnContextClassRef"))
        .map(|class| xml::text(doc, class));
    let mut attributes = Vec::new();
    for statement in children(doc, assertion, ASSERTION, "AttributeStatement") {
        for attribute in children(doc, statement, ASSERTION, "Attribute") {
            let Some(name) = attr(doc, attribute, "Name") else {
                continue;
            };
            let values = children(doc, attribute, ASSERTION, "AttributeValue")
                .into_iter()
                .map(|value| xml::text(doc, value))
                .collect();
            attributes.push((name.to_owned(), values));
        }
    }
    Ok(Assertion {
        id: attr(doc, assertion, "ID")
            .ok_or(ResponseRefusal::Unreadable(Unreadable::Malformed))?
            .to_owned(),
        name_id,
        name_id_format: attr(doc, name_id_node, "Format").map(str::to_owned),
        session_index: authn
            .and_then(|statement| attr(doc, statement, "SessionIndex"))
            .map(str::to_owned),
        authn_instant: authn
            .and_then(|statement| attr(doc, statement, "AuthnInstant"))
            .and_then(xml::instant),
        context_class,
        attributes,
        valid_until,
    })
}

/// A bearer confirmation for us (SAML profiles §4.1.4.2): its `Recipient` our ACS, its
/// `InResponseTo` our request, its `NotOnOrAfter` (required) not passed. Answers that.
fn bearer_confirmation(
    doc: &Document<'_>,
    subject: NodeId,
    expected: &Expected<'_>,
) -> Checked<i64> {
    let mut refusal = ResponseRefusal::WrongRecipient;
    for confirmation in children(doc, subject, ASSERTION, "SubjectConfirmation") {
        if attr(doc, confirmation, "Method") != Some(BEARER) {
            continue;
        }
        let Some(data) = child(doc, confirmation, ASSERTION, "SubjectConfirmationData") else {
            continue;
        };
        if attr(doc, data, "Recipient") != Some(expected.acs) {
            refusal = ResponseRefusal::WrongRecipient;
            continue;
        }
        if attr(doc, data, "InResponseTo") != expected.in_response_to {
            refusal = ResponseRefusal::WrongRequest;
            continue;
        }
        if attr(doc, data, "NotBefore")
            .and_then(xml::instant)
            .is_some_and(|not_before| not_before - CLOCK_SKEW_SECONDS > expected.now)
        {
            refusal = ResponseRefusal::NotYetValid;
            continue;
        }
        let Some(until) = attr(doc, data, "NotOnOrAfter").and_then(xml::instant) else {
            refusal = ResponseRefusal::Expired;
            continue;
        };
        if until + CLOCK_SKEW_SECONDS <= expected.now {
            refusal = ResponseRefusal::Expired;
            continue;
        }
        return Ok(until);
    }
    Err(refusal)
}

/// The assertion's `Conditions`: its window (with skew) and every `AudienceRestriction` naming
/// us (at least one required). Answers its `NotOnOrAfter`, if any.
fn conditions(
    doc: &Document<'_>,
    assertion: NodeId,
    expected: &Expected<'_>,
) -> Checked<Option<i64>> {
    let conditions =
        child(doc, assertion, ASSERTION, "Conditions").ok_or(ResponseRefusal::WrongAudience)?;
    if attr(doc, conditions, "NotBefore")
        .and_then(xml::instant)
        .is_some_and(|not_before| not_before - CLOCK_SKEW_SECONDS > expected.now)
    {
        return Err(ResponseRefusal::NotYetValid);
    }
    let until = attr(doc, conditions, "NotOnOrAfter").and_then(xml::instant);
    if until.is_some_and(|until| until + CLOCK_SKEW_SECONDS <= expected.now) {
        return Err(ResponseRefusal::Expired);
    }
    let restrictions = children(doc, conditions, ASSERTION, "AudienceRestriction");
    let for_us = |restriction: &NodeId| {
        children(doc, *restriction, ASSERTION, "Audience")
            .into_iter()
            .any(|audience| xml::text(doc, audience) == expected.sp_entity_id)
    };
    if restrictions.is_empty() || !restrictions.iter().all(for_us) {
        return Err(ResponseRefusal::WrongAudience);
    }
    Ok(until)
}
