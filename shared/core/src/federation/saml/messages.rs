//! The protocol messages we send (SAML core §3.4.1 `AuthnRequest`, §3.7 `LogoutRequest` and
//! `LogoutResponse`) and the logout messages we receive. Each carries only our own values,
//! escaped; each received one is read only after its binding's signature was checked.

use super::xml::{self, attr, child, escape, ASSERTION, BINDING_POST, NAMEID_PERSISTENT, PROTOCOL};

/// Who a message is from and to, and when.
pub struct Envelope<'a> {
    pub id: &'a str,
    pub issuer: &'a str,
    pub destination: &'a str,
    pub issued_at: i64,
}

fn opening(element: &str, envelope: &Envelope<'_>, extra: &str) -> String {
    format!(
        "<samlp:{element} xmlns:samlp=\"{PROTOCOL}\" xmlns:saml=\"{ASSERTION}\" ID=\"{}\" Version=\"2.0\" IssueInstant=\"{}\" Destination=\"{}\"{extra}><saml:Issuer>{}</saml:Issuer>",
        escape(envelope.id),
        xml::format_instant(envelope.issued_at),
        escape(envelope.destination),
        escape(envelope.issuer),
    )
}

/// A request for a persistent NameID, the answer to be posted to `acs`.
pub fn authn_request(envelope: &Envelope<'_>, acs: &str) -> String {
    let extra = format!(
        " AssertionConsumerServiceURL=\"{}\" ProtocolBinding=\"{BINDING_POST}\"",
        escape(acs)
    );
    format!(
        "{}<samlp:NameIDPolicy Format=\"{NAMEID_PERSISTENT}\" AllowCreate=\"true\"/></samlp:AuthnRequest>",
        opening("AuthnRequest", envelope, &extra)
    )
}

/// Who a session at the IdP is: the NameID (with its format) and the `SessionIndex` the
/// assertion named, as a `LogoutRequest` must repeat them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SessionAtIdp {
    pub name_id: String,
    #[serde(default)]
    pub name_id_format: Option<String>,
    #[serde(default)]
    pub session_index: Option<String>,
}

pub fn logout_request(envelope: &Envelope<'_>, session: &SessionAtIdp) -> String {
    let format = session
        .name_id_format
        .as_deref()
        .map(|format| format!(" Format=\"{}\"", escape(format)))
        .unwrap_or_default();
    let index = session
        .session_index
        .as_deref()
        .map(|index| format!("<samlp:SessionIndex>{}</samlp:SessionIndex>", escape(index)))
        .unwrap_or_default();
    format!(
        "{}<saml:NameID{format}>{}</saml:NameID>{index}</samlp:LogoutRequest>",
        opening("LogoutRequest", envelope, ""),
        escape(&session.name_id)
    )
}

pub fn logout_response(envelope: &Envelope<'_>, in_response_to: &str, status: &str) -> String {
    let extra = format!(" InResponseTo=\"{}\"", escape(in_response_to));
    format!(
        "{}<samlp:Status><samlp:StatusCode Value=\"{}\"/></samlp:Status></samlp:LogoutResponse>",
        opening("LogoutResponse", envelope, &extra),
        escape(status)
    )
}

/// An IdP's `LogoutRequest`, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogoutRequest {
    pub id: String,
    pub issuer: String,
    pub destination: Option<String>,
    pub name_id: String,
    pub session_indexes: Vec<String>,
    pub not_on_or_after: Option<i64>,
}

/// An IdP's `LogoutResponse`, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogoutResponse {
    pub issuer: String,
    pub destination: Option<String>,
    pub in_response_to: Option<String>,
    pub success: bool,
}

/// A logout message, or why it is none we can take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Logout {
    Request(LogoutRequest),
    Response(LogoutResponse),
}

pub fn read_logout(text: &str) -> Option<Logout> {
    let doc = xml::parse(text).ok()?;
    let root = doc.document_element()?;
    let issuer = child(&doc, root, ASSERTION, "Issuer").map(|node| xml::text(&doc, node))?;
    let destination = attr(&doc, root, "Destination").map(str::to_owned);
    if xml::is(&doc, root, PROTOCOL, "LogoutRequest") {
        let name_id = child(&doc, root, ASSERTION, "NameID").map(|node| xml::text(&doc, node))?;
        let session_indexes = xml::children(&doc, root, PROTOCOL, "SessionIndex")
            .into_iter()
            .map(|node| xml::text(&doc, node))
            .collect();
        return Some(Logout::Request(LogoutRequest {
            id: attr(&doc, root, "ID")?.to_owned(),
            issuer,
            destination,
            name_id,
            session_indexes,
            not_on_or_after: attr(&doc, root, "NotOnOrAfter").and_then(xml::instant),
        }));
    }
    if xml::is(&doc, root, PROTOCOL, "LogoutResponse") {
        let success = child(&doc, root, PROTOCOL, "Status")
            .and_then(|status| child(&doc, status, PROTOCOL, "StatusCode"))
            .and_then(|code| attr(&doc, code, "Value"))
            == Some(xml::STATUS_SUCCESS);
        return Some(Logout::Response(LogoutResponse {
            issuer,
            destination,
            in_response_to: attr(&doc, root, "InResponseTo").map(str::to_owned),
            success,
        }));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_we_send_is_escaped_and_reads_back() {
        let envelope = Envelope {
            id: "_abc",
            issuer: "https://sp.example/m?a=1&b=2",
            destination: "https://idp.example/slo",
            issued_at: 1_796_240_121,
        };
        let session = SessionAtIdp {
            name_id: "p-<1>".to_owned(),
            name_id_format: Some(NAMEID_PERSISTENT.to_owned()),
            session_index: Some("s1".to_owned()),
        };
        let request = logout_request(&envelope, &session);
        assert!(request.contains("a=1&amp;b=2"));
        let Some(Logout::Request(read)) = read_logout(&request) else {
            panic!("a logout request: {request}")
        };
        assert_eq!(read.name_id, "p-<1>");
        assert_eq!(read.session_indexes, ["s1"]);
        assert_eq!(read.issuer, "https://sp.example/m?a=1&b=2");
        let response = logout_response(&envelope, "_req", xml::STATUS_SUCCESS);
        let Some(Logout::Response(read)) = read_logout(&response) else {
            panic!("a logout response")
        };
        assert!(read.success);
        assert_eq!(read.in_response_to.as_deref(), Some("_req"));
        assert!(authn_request(&envelope, "https://sp.example/acs")
            .contains("AssertionConsumerServiceURL=\"https://sp.example/acs\""));
    }
}
