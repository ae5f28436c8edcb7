"""A company's SAML 2.0 identity provider for the integration tests, on pysaml2.

    python saml_idp.py --port PORT --dir STATE_DIR [--verbose]

It makes its own RSA key and certificate in STATE_DIR, listens on http://127.0.0.1:PORT, prints
`listening http://127.0.0.1:PORT` once it does, and knows the service providers that tests
register with POST /test/sp. Users sign in on its login page (or over the JSON shortcut
POST /test/login); POST /test/mode makes the next response a forgery of the named kind, so that
tests can show the service provider refuses it. Its interface is described in
tests/support/saml_idp.rs. SAML documents are printed (to stderr) only with --verbose.
"""

import argparse
import base64
import copy
import datetime
import hashlib
import html
import json
import logging
import os
import secrets
import shutil
import sys
import threading
import traceback
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, quote, urlencode, urlsplit

from cryptography import x509
from cryptography.utils import CryptographyDeprecationWarning
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from cryptography.x509.oid import NameOID
from lxml import etree

# pysaml2 names ciphers that cryptography has moved; the warning would only fill stderr.
warnings.filterwarnings("ignore", category=CryptographyDeprecationWarning)
from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT, samlp
from saml2.config import IdPConfig
from saml2.mdstore import InMemoryMetaData
from saml2.metadata import create_metadata_string
from saml2.s_utils import decode_base64_and_inflate, sid, success_status_factory
from saml2.saml import (
    NAME_FORMAT_BASIC,
    NAMEID_FORMAT_EMAILADDRESS,
    NAMEID_FORMAT_PERSISTENT,
    Attribute,
    AttributeStatement,
    AttributeValue,
    NameID,
)
from saml2.server import Server
from saml2.sigver import (
    RSA_OAEP_MGF1P,
    SIG_RSA_SHA1,
    SIG_RSA_SHA256,
    pre_encryption_part,
    pre_signature_part,
    signed_instance_factory,
)
from saml2.time_util import instant
from saml2.xmldsig import DIGEST_SHA1, DIGEST_SHA256

NS = {
    "samlp": "urn:oasis:names:tc:SAML:2.0:protocol",
    "saml": "urn:oasis:names:tc:SAML:2.0:assertion",
    "ds": "http://www.w3.org/2000/09/xmldsig#",
}
ASSERTION_TAG = "{urn:oasis:names:tc:SAML:2.0:assertion}Assertion"
PASSWORD = "urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport"
MFA = "https://refeds.org/profile/mfa"
RESPONDER = samlp.STATUS_RESPONDER
MALLORY = "mallory@acme.example"
OTHER_ACS = "https://other.example/acs"
AES256_GCM = "http://www.w3.org/2009/xmlenc11#aes256-gcm"
AES128_CBC = "http://www.w3.org/2001/04/xmlenc#aes128-cbc"
LIFETIME = datetime.timedelta(minutes=5)
MODES = {
    "signed", "signed_response", "response_only", "encrypted", "encrypted_cbc", "unsigned",
    "sha1", "tampered", "wrapped", "wrapped_same_id", "two_assertions", "comment", "expired",
    "not_yet_valid", "wrong_audience", "wrong_destination", "wrong_recipient", "dtd",
    "idp_failure",
}
HASHES = {
    "http://www.w3.org/2000/09/xmldsig#rsa-sha1": hashes.SHA1,
    "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256": hashes.SHA256,
    "http://www.w3.org/2001/04/xmldsig-more#rsa-sha384": hashes.SHA384,
    "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512": hashes.SHA512,
}

VERBOSE = False


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


def show(what, document):
    if VERBOSE:
        log(f"--- {what}\n{document}")


def name_id_of(username):
    return "p-" + hashlib.sha256(username.encode()).hexdigest()[:16]


def saml_time(moment):
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def make_key(state_dir, port):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"saml-idp-127.0.0.1-{port}")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=365))
        .sign(key, hashes.SHA256())
    )
    key_file = os.path.join(state_dir, "idp.key")
    cert_file = os.path.join(state_dir, "idp.crt")
    with open(key_file, "wb") as out:
        out.write(key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        ))
    with open(cert_file, "wb") as out:
        out.write(cert.public_bytes(serialization.Encoding.PEM))
    return key_file, cert_file


def make_server(base, state_dir, key_file, cert_file):
    xmlsec = shutil.which("xmlsec1")
    if not xmlsec:
        raise SystemExit("xmlsec1 not found: apt-get install xmlsec1")
    config = IdPConfig()
    config.load({
        "entityid": f"{base}/metadata",
        "xmlsec_binary": xmlsec,
        "key_file": key_file,
        "cert_file": cert_file,
        "signing_algorithm": SIG_RSA_SHA256,
        "digest_algorithm": DIGEST_SHA256,
        "metadata": {},
        "delete_tmpfiles": True,
        "service": {
            "idp": {
                "name": "Test SAML IdP",
                "endpoints": {
                    "single_sign_on_service": [(f"{base}/sso", BINDING_HTTP_REDIRECT)],
                    "single_logout_service": [(f"{base}/slo", BINDING_HTTP_REDIRECT)],
                },
                "want_authn_requests_signed": True,
                "name_id_format": [NAMEID_FORMAT_PERSISTENT, NAMEID_FORMAT_EMAILADDRESS],
                "policy": {
                    "default": {
                        "lifetime": {"minutes": 5},
                        "attribute_restrictions": None,
                        "name_form": NAME_FORMAT_BASIC,
                    },
                },
            },
        },
    })
    server = Server(config=config)
    metadata = create_metadata_string(None, config=config, sign=False).decode()
    # Requests' redirect signatures are checked here (over the query as sent, then as pysaml2
    # re-encodes it), so that a LogoutRequest with a bad one is still read and recorded.
    config._idp_want_authn_requests_signed = False
    return server, metadata


class Idp:
    def __init__(self, base, state_dir, server, metadata):
        self.base = base
        self.state_dir = state_dir
        self.server = server
        self.metadata_xml = metadata
        self.lock = threading.Lock()
        self.pending = {}
        self.sessions = {}
        self.records = []
        self.mode = "signed"

    # --- service providers -------------------------------------------------------------------

    def register_sp(self, xml):
        md = InMemoryMetaData(self.server.config.attribute_converters, xml)
        md.load()
        with self.lock:
            for entity_id in md.entity:
                self.server.metadata.metadata[entity_id] = md

    def known(self, entity_id):
        if entity_id not in self.server.metadata.metadata:
            raise Refused(f"unknown service provider {entity_id}")

    def sp_certs(self, entity_id, use):
        return [cert for _, cert in self.server.metadata.certs(entity_id, "spsso", use)]

    def sp_acs(self, entity_id):
        self.known(entity_id)
        services = self.server.metadata.assertion_consumer_service(entity_id, BINDING_HTTP_POST)
        if not services:
            raise Refused(f"no HTTP-POST assertion consumer service for {entity_id}")
        return services[0]["location"]

    def sp_slo(self, entity_id, response=False):
        self.known(entity_id)
        services = self.server.metadata.single_logout_service(entity_id, BINDING_HTTP_REDIRECT, "spsso")
        if not services:
            raise Refused(f"no HTTP-Redirect single logout service for {entity_id}")
        if response and services[0].get("response_location"):
            return services[0]["response_location"]
        return services[0]["location"]

    # --- redirect binding --------------------------------------------------------------------

    def redirect_signature_valid(self, raw_query, entity_id):
        """The redirect binding's signature, checked against the SP's signing certificates."""
        raw = dict(part.split("=", 1) for part in raw_query.split("&") if "=" in part)
        params = {k: v[0] for k, v in parse_qs(raw_query, keep_blank_values=True).items()}
        if "Signature" not in params or "SigAlg" not in params:
            return False
        kind = "SAMLRequest" if "SAMLRequest" in params else "SAMLResponse"
        signed = "&".join(f"{k}={raw[k]}" for k in (kind, "RelayState", "SigAlg") if k in raw)
        algorithm = HASHES.get(params["SigAlg"])
        if algorithm is None:
            return False
        try:
            signature = base64.b64decode(params["Signature"])
        except ValueError:
            return False
        for pem in self.sp_certs(entity_id, "signing"):
            cert = x509.load_der_x509_certificate(base64.b64decode("".join(pem.split())))
            for data in (signed.encode(), pysaml2_signed_string(params, kind)):
                try:
                    cert.public_key().verify(signature, data, padding.PKCS1v15(), algorithm())
                    return True
                except Exception:
                    pass
        return False

    def redirect_url(self, xml, location, kind, relay_state, sign):
        info = self.server.apply_binding(
            BINDING_HTTP_REDIRECT, xml, location, relay_state,
            response=(kind == "SAMLResponse"), sign=sign, sigalg=SIG_RSA_SHA256,
        )
        return dict(info["headers"])["Location"]

    # --- single sign-on ----------------------------------------------------------------------

    def authn_request(self, raw_query):
        params = {k: v[0] for k, v in parse_qs(raw_query, keep_blank_values=True).items()}
        if "SAMLRequest" not in params:
            raise Refused("no SAMLRequest")
        try:
            parsed = self.server.parse_authn_request(params["SAMLRequest"], BINDING_HTTP_REDIRECT)
        except Exception as error:
            raise Refused(f"authn request invalid: {type(error).__name__}: {brief(error)}") from error
        show("AuthnRequest", parsed.xmlstr)
        request = parsed.message
        sp = request.issuer.text.strip()
        self.known(sp)
        if not self.redirect_signature_valid(raw_query, sp):
            raise Refused("authn request signature invalid")
        locations = [s["location"] for s in self.server.metadata.assertion_consumer_service(sp, BINDING_HTTP_POST)]
        acs = request.assertion_consumer_service_url or self.sp_acs(sp)
        if acs not in locations:
            raise Refused(f"assertion consumer service {acs} is not in {sp}'s metadata")
        return {"id": request.id, "sp": sp, "acs": acs, "relay_state": params.get("RelayState", "")}

    def take_mode(self):
        with self.lock:
            mode, self.mode = self.mode, "signed"
        return mode

    def answer(self, pending, username, mfa, cancel, mode=None):
        mode = mode or self.take_mode()
        xml = self.response(pending["id"], pending["sp"], pending["acs"], username, mfa, cancel, mode)
        show(f"Response ({mode})", xml)
        return {
            "acs": pending["acs"],
            "SAMLResponse": base64.b64encode(xml.encode()).decode(),
            "RelayState": pending["relay_state"],
        }

    def assertion(self, in_response_to, sp, acs, username, mfa, now, suffix=""):
        name_id = NameID(format=NAMEID_FORMAT_PERSISTENT, text=name_id_of(username) + suffix)
        authn = {"class_ref": MFA if mfa else PASSWORD, "authn_instant": int(now.timestamp())}
        assertion = self.server.setup_assertion(
            authn, sp, in_response_to, acs, name_id, None, self.server._issuer(), None,
            {}, True, False,
        )
        assertion.issue_instant = saml_time(now)
        assertion.conditions.not_before = saml_time(now)
        assertion.conditions.not_on_or_after = saml_time(now + LIFETIME)
        confirmation = assertion.subject.subject_confirmation[0].subject_confirmation_data
        confirmation.not_on_or_after = saml_time(now + LIFETIME)
        if not in_response_to:
            confirmation.in_response_to = None
        value = AttributeValue()
        value.set_text(username + suffix)
        assertion.attribute_statement = [AttributeStatement(attribute=[
            Attribute(name="email", name_format=NAME_FORMAT_BASIC, attribute_value=[value]),
        ])]
        session_index = assertion.authn_statement[0].session_index
        with self.lock:
            self.sessions[name_id.text] = session_index
        return assertion

    def response(self, in_response_to, sp, acs, username, mfa, cancel, mode):
        now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
        response = samlp.Response(id=sid(), version="2.0", issue_instant=saml_time(now))
        response.issuer = self.server._issuer()
        response.in_response_to = in_response_to or None
        response.destination = OTHER_ACS if mode == "wrong_destination" else acs
        if cancel or mode == "idp_failure":
            response.status = samlp.Status(status_code=samlp.StatusCode(value=RESPONDER))
            return self.sign(response, [response] if mode in ("signed_response", "response_only") else [])
        response.status = success_status_factory()
        suffix = ".evil.example" if mode == "comment" else ""
        assertion = self.assertion(in_response_to, sp, acs, username, mfa, now, suffix)
        self.adjust(assertion, mode, now)
        response.assertion = [assertion]
        sha1 = mode == "sha1"
        if mode == "unsigned":
            return response.to_string().decode()
        if mode == "response_only":
            return self.sign(response, [response])
        if mode == "two_assertions":
            second = self.assertion(in_response_to, sp, acs, MALLORY, mfa, now)
            response.assertion = [assertion, second]
            return self.sign(response, [assertion, second])
        if mode in ("encrypted", "encrypted_cbc"):
            return self.encrypted(response, assertion, sp, AES256_GCM if mode == "encrypted" else AES128_CBC)
        signed = self.sign(response, [assertion, response] if mode == "signed_response" else [assertion], sha1)
        return forge(signed, mode, username)

    @staticmethod
    def adjust(assertion, mode, now):
        confirmation = assertion.subject.subject_confirmation[0].subject_confirmation_data
        if mode == "expired":
            assertion.conditions.not_before = saml_time(now - datetime.timedelta(minutes=20))
            assertion.conditions.not_on_or_after = saml_time(now - datetime.timedelta(minutes=10))
            confirmation.not_on_or_after = saml_time(now - datetime.timedelta(minutes=10))
        elif mode == "not_yet_valid":
            # Only NotBefore is wrong: the window after it is as long as a good one's.
            assertion.conditions.not_before = saml_time(now + datetime.timedelta(minutes=10))
            assertion.conditions.not_on_or_after = saml_time(now + datetime.timedelta(minutes=10) + LIFETIME)
        elif mode == "wrong_audience":
            assertion.conditions.audience_restriction[0].audience[0].text = "https://other.example/sp"
        elif mode == "wrong_recipient":
            confirmation.recipient = OTHER_ACS

    def sign(self, response, elements, sha1=False):
        """Signs `elements` (inner first) with pysaml2's xmlsec1 backend."""
        if not elements:
            return response.to_string().decode()
        sign_alg, digest_alg = (SIG_RSA_SHA1, DIGEST_SHA1) if sha1 else (SIG_RSA_SHA256, DIGEST_SHA256)
        to_sign = []
        for element in elements:
            element.signature = pre_signature_part(
                element.id, self.server.sec.my_cert, sign_alg=sign_alg, digest_alg=digest_alg
            )
            to_sign.append((element.c_namespace + ":" + element.c_tag, element.id))
        signed = signed_instance_factory(response, self.server.sec, to_sign)
        return signed.decode() if isinstance(signed, bytes) else signed

    def encrypted(self, response, assertion, sp, content_algorithm):
        certs = self.sp_certs(sp, "encryption")
        if not certs:
            raise Refused(f"{sp} has no encryption certificate")
        signed = self.sign(response, [assertion])
        root = etree.fromstring(signed.encode())
        element = root.find("saml:Assertion", NS)
        # Encrypted on its own, as the root of a document, so that the plaintext declares every
        # namespace it uses (an SP parses it out of context).
        standalone = etree.tostring(element, xml_declaration=True, encoding="UTF-8").decode()
        cert = "".join(certs[0].split())
        pem = "-----BEGIN CERTIFICATE-----\n" + "\n".join(
            cert[i:i + 64] for i in range(0, len(cert), 64)
        ) + "\n-----END CERTIFICATE-----\n"
        cert_file = os.path.join(self.state_dir, f"enc-{secrets.token_hex(8)}.pem")
        with open(cert_file, "w") as out:
            out.write(pem)
        try:
            template = pre_encryption_part(msg_enc=content_algorithm, key_enc=RSA_OAEP_MGF1P, encrypt_cert=cert)
            session_key = "aes-256" if content_algorithm == AES256_GCM else "aes-128"
            encrypted = self.server.sec.crypto.encrypt_assertion(
                standalone, cert_file, template, key_type=session_key, node_xpath="/*"
            )
            wrapper = etree.Element("{%s}EncryptedAssertion" % NS["saml"])
            wrapper.append(etree.fromstring(encrypted.encode()))
            element.addprevious(wrapper)
            root.remove(element)
            return etree.tostring(root, xml_declaration=True, encoding="UTF-8").decode()
        finally:
            os.unlink(cert_file)

    def idp_initiated(self, sp, username, mfa, mode):
        pending = {"id": None, "sp": sp, "acs": self.sp_acs(sp), "relay_state": ""}
        return self.answer(pending, username, mfa, False, mode)

    # --- single logout -----------------------------------------------------------------------

    def logout_url(self, sp, name_id, signed, destination):
        with self.lock:
            session_index = self.sessions.get(name_id)
        location = self.sp_slo(sp)
        _, request = self.server.create_logout_request(
            destination or location, sp,
            name_id=NameID(format=NAMEID_FORMAT_PERSISTENT, text=name_id),
            session_indexes=[session_index] if session_index else None, sign=False,
        )
        xml = request.to_string().decode()
        show("LogoutRequest", xml)
        return self.redirect_url(xml, location, "SAMLRequest", "", signed)

    def logout_post(self, sp, name_id, signed, destination):
        """The same LogoutRequest for the HTTP-POST binding: an enveloped XML Signature over the
        whole message (or none), the form's field base64 (not deflated)."""
        with self.lock:
            session_index = self.sessions.get(name_id)
        location = self.sp_slo(sp)
        _, request = self.server.create_logout_request(
            destination or location, sp,
            name_id=NameID(format=NAMEID_FORMAT_PERSISTENT, text=name_id),
            session_indexes=[session_index] if session_index else None, sign=False,
        )
        xml = self.sign(request, [request] if signed else [])
        show("LogoutRequest (POST)", xml)
        return {"url": location, "SAMLRequest": base64.b64encode(xml.encode()).decode(), "RelayState": ""}

    def slo(self, raw_query):
        params = {k: v[0] for k, v in parse_qs(raw_query, keep_blank_values=True).items()}
        if "SAMLRequest" in params:
            xml = decode_base64_and_inflate(params["SAMLRequest"]).decode()
            show("LogoutRequest (received)", xml)
            request = samlp.logout_request_from_string(xml)
            issuer = request.issuer.text.strip() if request.issuer is not None else None
            valid = issuer in self.server.metadata.metadata and self.redirect_signature_valid(raw_query, issuer)
            self.record({
                "kind": "logout_request",
                "signature_valid": valid,
                "name_id": request.name_id.text if request.name_id is not None else None,
                "session_index": [s.text for s in request.session_index],
                "issuer": issuer,
            })
            if not valid:
                return 400, "text/plain", "logout request signature invalid", None
            location = self.sp_slo(issuer, response=True)
            answer = samlp.LogoutResponse(
                id=sid(), version="2.0", issue_instant=instant(), issuer=self.server._issuer(),
                in_response_to=request.id, destination=location, status=success_status_factory(),
            )
            xml = answer.to_string().decode()
            show("LogoutResponse", xml)
            return 302, None, "", self.redirect_url(xml, location, "SAMLResponse", params.get("RelayState", ""), True)
        if "SAMLResponse" in params:
            xml = decode_base64_and_inflate(params["SAMLResponse"]).decode()
            show("LogoutResponse (received)", xml)
            answer = samlp.logout_response_from_string(xml)
            issuer = answer.issuer.text.strip() if answer.issuer is not None else None
            valid = issuer in self.server.metadata.metadata and self.redirect_signature_valid(raw_query, issuer)
            self.record({
                "kind": "logout_response",
                "signature_valid": valid,
                "status": answer.status.status_code.value if answer.status is not None else None,
                "in_response_to": answer.in_response_to,
            })
            return 200, "text/plain", "signed out at the IdP", None
        return 400, "text/plain", "no SAMLRequest or SAMLResponse", None

    def record(self, entry):
        with self.lock:
            self.records.append(entry)


def pysaml2_signed_string(params, kind):
    """The signed string as pysaml2's own check rebuilds it (values re-encoded)."""
    order = [kind, "RelayState", "SigAlg"]
    return "&".join(urlencode({k: params[k]}) for k in order if k in params).encode("ascii")


def forge(signed, mode, username):
    """The signed response changed after signing, as `mode` names."""
    if mode in ("signed", "signed_response", "sha1", "expired", "not_yet_valid", "wrong_audience",
                "wrong_destination", "wrong_recipient"):
        return signed
    if mode == "dtd":
        declaration, rest = signed.split("?>", 1) if signed.startswith("<?xml") else ("", signed)
        prolog = declaration + "?>\n" if declaration else ""
        rest = rest.lstrip()
        root_name = rest[1:].split(None, 1)[0]
        return f'{prolog}<!DOCTYPE {root_name} [<!ENTITY x "y">]>\n{rest}'
    root = etree.fromstring(signed.encode())
    assertion = root.find("saml:Assertion", NS)
    if mode == "tampered":
        set_subject(assertion, MALLORY)
    elif mode == "comment":
        for element, text in zip(subject_texts(assertion), (name_id_of(username), username)):
            element.text = text
            comment = etree.Comment("")
            comment.tail = ".evil.example"
            element.append(comment)
    elif mode in ("wrapped", "wrapped_same_id"):
        forged = copy.deepcopy(assertion)
        for signature in forged.findall("ds:Signature", NS):
            forged.remove(signature)
        set_subject(forged, MALLORY)
        if mode == "wrapped":
            forged.set("ID", sid())
        extensions = etree.Element("{%s}Extensions" % NS["samlp"])
        root.find("saml:Issuer", NS).addnext(extensions)
        anchor = root.find("ds:Signature", NS)
        if anchor is not None:
            anchor.addnext(extensions)
        assertion.addprevious(forged)
        extensions.append(assertion)
    else:
        raise ValueError(mode)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8").decode()


def subject_texts(assertion):
    name_id = assertion.find("saml:Subject/saml:NameID", NS)
    email = assertion.find("saml:AttributeStatement/saml:Attribute[@Name='email']/saml:AttributeValue", NS)
    return [name_id, email]


def set_subject(assertion, username):
    name_id, email = subject_texts(assertion)
    name_id.text = name_id_of(username)
    email.text = username


class Refused(Exception):
    pass


def brief(error):
    text = str(error)
    return text if VERBOSE or len(text) <= 200 else text[:200] + "..."


def login_page(key):
    return f"""<!DOCTYPE html>
<html><head><title>Sign in to the test IdP</title></head><body>
<h1>Sign in</h1>
<form method="post" action="/login">
<input type="hidden" name="key" value="{html.escape(key)}">
<label for="username">Email</label> <input type="text" name="username" id="username">
<label><input type="checkbox" name="mfa" id="mfa" value="on"> second factor</label>
<button type="submit" id="sign-in">Sign in</button>
<button type="submit" name="cancel" id="cancel" value="1">Cancel</button>
</form></body></html>
"""


def post_page(answer):
    return f"""<!DOCTYPE html>
<html><head><title>Back to the service</title></head><body>
<form method="post" action="{html.escape(answer['acs'])}">
<input type="hidden" name="SAMLResponse" value="{html.escape(answer['SAMLResponse'])}">
<input type="hidden" name="RelayState" value="{html.escape(answer['RelayState'])}">
<button type="submit">Continue</button>
</form>
<script>document.forms[0].submit()</script>
</body></html>
"""


class Handler(BaseHTTPRequestHandler):
    idp: Idp = None
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 - the stdlib's name
        if VERBOSE:
            log(format % args)

    def send(self, status, content_type=None, body="", location=None):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        if location:
            self.send_header("Location", location)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)

    def send_json(self, status, value):
        self.send(status, "application/json", json.dumps(value))

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def route(self, method):
        url = urlsplit(self.path)
        idp = self.idp
        try:
            handler = ROUTES.get((method, url.path))
            if handler is None:
                return self.send(404, "text/plain", "not found")
            return handler(self, idp, url.query)
        except Refused as refused:
            if url.path.startswith("/test/"):
                return self.send_json(400, {"error": str(refused)})
            return self.send(400, "text/plain", str(refused))
        except Exception as error:
            # pysaml2's exceptions may quote the documents; only --verbose shows them whole.
            log(f"{method} {url.path}: {type(error).__name__}: {brief(error)}")
            if VERBOSE:
                traceback.print_exc(file=sys.stderr)
            return self.send_json(500, {"error": f"{type(error).__name__}: {brief(error)}"})

    def do_GET(self):  # noqa: N802 - the stdlib's name
        self.route("GET")

    def do_POST(self):  # noqa: N802
        self.route("POST")

    def do_DELETE(self):  # noqa: N802
        self.route("DELETE")

    # --- routes ------------------------------------------------------------------------------

    def metadata(self, idp, _query):
        self.send(200, "application/samlmetadata+xml", idp.metadata_xml)

    def register(self, idp, _query):
        try:
            idp.register_sp(self.body().decode())
        except Exception as error:
            raise Refused(f"SP metadata not loaded: {type(error).__name__}: {brief(error)}") from error
        self.send(204)

    def set_mode(self, idp, _query):
        mode = json.loads(self.body())["mode"]
        if mode not in MODES:
            raise Refused(f"unknown mode {mode}")
        with idp.lock:
            idp.mode = mode
        self.send(204)

    def sso(self, idp, query):
        pending = idp.authn_request(query)
        key = secrets.token_urlsafe(16)
        with idp.lock:
            idp.pending[key] = pending
        self.send(200, "text/html; charset=utf-8", login_page(key))

    def login(self, idp, _query):
        form = {k: v[0] for k, v in parse_qs(self.body().decode(), keep_blank_values=True).items()}
        with idp.lock:
            pending = idp.pending.pop(form.get("key", ""), None)
        if pending is None:
            raise Refused("no pending authn request")
        cancel = "cancel" in form
        username = form.get("username", "")
        if not cancel and not username:
            raise Refused("no username")
        answer = idp.answer(pending, username, bool(form.get("mfa")), cancel)
        self.send(200, "text/html; charset=utf-8", post_page(answer))

    def test_login(self, idp, _query):
        body = json.loads(self.body())
        pending = idp.authn_request(urlsplit(body["url"]).query)
        cancel = bool(body.get("cancel", False))
        self.send_json(200, idp.answer(pending, body.get("username", ""), bool(body.get("mfa", False)), cancel))

    def test_idp_initiated(self, idp, _query):
        body = json.loads(self.body())
        mode = body.get("mode")
        if mode is not None and mode not in MODES:
            raise Refused(f"unknown mode {mode}")
        self.send_json(200, idp.idp_initiated(body["sp"], body["username"], bool(body.get("mfa", False)), mode))

    def test_logout(self, idp, _query):
        body = json.loads(self.body())
        name_id = body.get("name_id") or name_id_of(body["username"])
        signed, destination = body.get("signed", True), body.get("destination")
        if body.get("binding") == "post":
            self.send_json(200, idp.logout_post(body["sp"], name_id, signed, destination))
            return
        url = idp.logout_url(body["sp"], name_id, signed, destination)
        self.send_json(200, {"url": url})

    def slo(self, idp, query):
        status, content_type, body, location = idp.slo(query)
        self.send(status, content_type, body, location)

    def get_records(self, idp, _query):
        with idp.lock:
            records = list(idp.records)
        self.send_json(200, records)

    def clear_records(self, idp, _query):
        with idp.lock:
            idp.records.clear()
        self.send(204)


ROUTES = {
    ("GET", "/metadata"): Handler.metadata,
    ("POST", "/test/sp"): Handler.register,
    ("POST", "/test/mode"): Handler.set_mode,
    ("GET", "/sso"): Handler.sso,
    ("POST", "/login"): Handler.login,
    ("POST", "/test/login"): Handler.test_login,
    ("POST", "/test/idp-initiated"): Handler.test_idp_initiated,
    ("POST", "/test/logout"): Handler.test_logout,
    ("GET", "/slo"): Handler.slo,
    ("GET", "/test/records"): Handler.get_records,
    ("DELETE", "/test/records"): Handler.clear_records,
}


def main():
    global VERBOSE
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    VERBOSE = args.verbose
    # pysaml2 logs documents at several levels; without --verbose only its failures show.
    logging.basicConfig(stream=sys.stderr, level=logging.DEBUG if VERBOSE else logging.CRITICAL)
    os.makedirs(args.dir, exist_ok=True)
    base = f"http://127.0.0.1:{args.port}"
    key_file, cert_file = make_key(args.dir, args.port)
    server, metadata = make_server(base, args.dir, key_file, cert_file)
    Handler.idp = Idp(base, args.dir, server, metadata)
    httpd = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    httpd.daemon_threads = True
    print(f"listening {base}", flush=True)
    httpd.serve_forever()


if __name__ == "__main__":
    main()
