"""Does the local KMS sign like AWS KMS? `infra/kms-local.sh check` runs this against it.

Creates an ECC_NIST_P256 SIGN_VERIFY key, signs a JWT-like signing input with ECDSA_SHA_256,
and verifies the DER signature with `cryptography` against the key's GetPublicKey, so the
emulator is not checked against itself. Prints one JSON object; exits 1 if a RAW signature does
not verify or a tampered message does. DIGEST signing is reported, not required: moto 5.2.5
hashes the digest again (see infra/kms-local.sh).
"""

import hashlib
import json
import sys

import boto3
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import load_der_public_key

SIGNING_INPUT = b"eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJrbXMtbG9jYWwtY2hlY2sifQ"


def verifies(public_key, signature, message):
    try:
        public_key.verify(signature, message, ec.ECDSA(hashes.SHA256()))
        return True
    except InvalidSignature:
        return False


def main(endpoint):
    kms = boto3.client(
        "kms",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )
    key = kms.create_key(KeySpec="ECC_NIST_P256", KeyUsage="SIGN_VERIFY")["KeyMetadata"]
    public_key = load_der_public_key(kms.get_public_key(KeyId=key["KeyId"])["PublicKey"])

    def sign(message, message_type):
        return kms.sign(
            KeyId=key["KeyId"],
            Message=message,
            MessageType=message_type,
            SigningAlgorithm="ECDSA_SHA_256",
        )["Signature"]

    raw = sign(SIGNING_INPUT, "RAW")
    digest = sign(hashlib.sha256(SIGNING_INPUT).digest(), "DIGEST")
    report = {
        "endpoint": endpoint,
        "key_spec": key["KeySpec"],
        "signing_algorithms": key.get("SigningAlgorithms"),
        "curve": public_key.curve.name,
        "raw_signature_verifies": verifies(public_key, raw, SIGNING_INPUT),
        "raw_tampered_message_verifies": verifies(public_key, raw, SIGNING_INPUT + b"x"),
        "digest_signature_verifies": verifies(public_key, digest, SIGNING_INPUT),
    }
    print(json.dumps(report, indent=2))
    ok = report["raw_signature_verifies"] and not report["raw_tampered_message_verifies"]
    return 0 if ok and public_key.curve.name == "secp256r1" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
