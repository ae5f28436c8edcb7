//! Reading and writing the SAML documents we handle. Parsed with every DTD refused (so no entity
//! is declared, expanded or fetched), at most [`MAX_DOCUMENT_BYTES`]; elements matched by
//! namespace and local name; attributes only unprefixed (a `foo:Destination` is not the
//! `Destination`); an element's text read as canonicalisation signs it, every text node of it
//! joined, so a comment inside a NameID changes nothing of what is read.

use uppsala::{Document, NodeId, Parser};

/// The largest document accepted: a response with a few certificates and attributes is under
/// 20 KiB.
pub const MAX_DOCUMENT_BYTES: usize = 256 * 1024;

pub const PROTOCOL: &str = "urn:oasis:names:tc:SAML:2.0:protocol";
pub const ASSERTION: &str = "urn:oasis:names:tc:SAML:2.0:assertion";
pub const METADATA: &str = "urn:oasis:names:tc:SAML:2.0:metadata";
pub const DSIG: &str = "http://www.w3.org/2000/09/xmldsig#";

pub const BINDING_REDIRECT: &str = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect";
pub const BINDING_POST: &str = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST";
pub const STATUS_SUCCESS: &str = "urn:oasis:names:tc:SAML:2.0:status:Success";
pub const NAMEID_PERSISTENT: &str = "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent";

/// Why a document could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unreadable {
    TooLarge,
    /// A `DOCTYPE` (and so any entity declaration).
    Dtd,
    Malformed,
}

pub fn parse(text: &str) -> Result<Document<'_>, Unreadable> {
    if text.len() > MAX_DOCUMENT_BYTES {
        return Err(Unreadable::TooLarge);
    }
    if text.contains("<!DOCTYPE") || text.contains("<!ENTITY") {
        return Err(Unreadable::Dtd);
    }
    Parser::new()
        .with_forbid_dtd(true)
        .parse(text)
        .map_err(|_| Unreadable::Malformed)
}

pub fn is(doc: &Document<'_>, node: NodeId, namespace: &str, local: &str) -> bool {
    doc.element(node)
        .is_some_and(|element| element.matches_name_ns(namespace, local))
}

/// An unprefixed attribute's value.
pub fn attr<'d>(doc: &'d Document<'_>, node: NodeId, name: &str) -> Option<&'d str> {
    doc.element(node)?
        .attributes
        .iter()
        .find(|attribute| {
            attribute.name.namespace_uri.is_none() && *attribute.name.local_name == *name
        })
        .map(|attribute| &*attribute.value)
}

pub fn child(doc: &Document<'_>, node: NodeId, namespace: &str, local: &str) -> Option<NodeId> {
    doc.first_child_element_by_name_ns(node, namespace, local)
}

pub fn children(doc: &Document<'_>, node: NodeId, namespace: &str, local: &str) -> Vec<NodeId> {
    doc.child_elements_by_name_ns(node, namespace, local)
}

/// Every element of that name anywhere in the document.
pub fn all(doc: &Document<'_>, namespace: &str, local: &str) -> Vec<NodeId> {
    doc.get_elements_by_tag_name_ns(namespace, local)
}

/// Every element of that name under `node` (at any depth).
pub fn all_under(doc: &Document<'_>, node: NodeId, namespace: &str, local: &str) -> Vec<NodeId> {
    let mut found = Vec::new();
    let mut pending = vec![node];
    while let Some(next) = pending.pop() {
        for item in doc.children_iter(next) {
            if is(doc, item, namespace, local) {
                found.push(item);
            }
            pending.push(item);
        }
    }
    found
}

/// The element's text, every text node joined (comments are not text), trimmed.
pub fn text(doc: &Document<'_>, node: NodeId) -> String {
    doc.text_content_deep(node).trim().to_owned()
}

/// `text` escaped for an attribute value or element content.
pub fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&apos;"),
            other => escaped.push(other),
        }
    }
    escaped
}

/// An `xs:dateTime` (always UTC in SAML 2.0 core §1.3.3) as Unix seconds.
pub fn instant(text: &str) -> Option<i64> {
    let parsed =
        time::OffsetDateTime::parse(text.trim(), &time::format_description::well_known::Rfc3339)
            .ok()?;
    Some(parsed.unix_timestamp())
}

/// Unix seconds as SAML's `xs:dateTime`, UTC, whole seconds.
pub fn format_instant(at: i64) -> String {
    let time =
        time::OffsetDateTime::from_unix_timestamp(at).unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        time.year(),
        u8::from(time.month()),
        time.day(),
        time.hour(),
        time.minute(),
        time.second()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_with_a_dtd_or_too_large_are_never_parsed() {
        let dtd = r#"<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>"#;
        assert_eq!(parse(dtd).err(), Some(Unreadable::Dtd));
        let large = format!("<r>{}</r>", "a".repeat(MAX_DOCUMENT_BYTES));
        assert_eq!(parse(&large).err(), Some(Unreadable::TooLarge));
        assert_eq!(parse("<r>").err(), Some(Unreadable::Malformed));
    }

    #[test]
    fn a_comment_inside_text_changes_nothing_of_what_is_read() {
        let doc = parse("<r>alice@acme.example<!---->.evil.example</r>").unwrap();
        let root = doc.document_element().unwrap();
        assert_eq!(text(&doc, root), "alice@acme.example.evil.example");
    }

    #[test]
    fn prefixed_attributes_are_not_the_unprefixed_ones() {
        let doc = parse(r#"<r xmlns:f="urn:f" f:Destination="https://evil.example" Destination="https://sp.example"/>"#)
            .unwrap();
        let root = doc.document_element().unwrap();
        assert_eq!(attr(&doc, root, "Destination"), Some("https://sp.example"));
        let only_prefixed = parse(r#"<r xmlns:f="urn:f" f:Destination="x"/>"#).unwrap();
        let root = only_prefixed.document_element().unwrap();
        assert_eq!(attr(&only_prefixed, root, "Destination"), None);
    }

    #[test]
    fn instants_read_and_write_utc() {
        assert_eq!(instant("2026-12-02T19:35:21Z"), Some(1_796_240_121));
        assert_eq!(instant("2026-12-02T19:35:21.123Z"), Some(1_796_240_121));
        assert_eq!(format_instant(1_796_240_121), "2026-12-02T19:35:21Z");
        assert_eq!(instant("yesterday"), None);
    }
}
