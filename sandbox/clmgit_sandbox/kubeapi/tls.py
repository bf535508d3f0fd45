"""The emulator's TLS: a certificate authority made per server, and a server certificate it signs.

kubectl (like every client-go program) sends a bearer token only over TLS, so the emulator
serves HTTPS, and the kubeconfig it writes carries the CA's certificate. Keys are P-256 (made
in a millisecond) and live in memory and in a private temporary directory only as long as
`ssl` needs to load them.

The same port also answers plain HTTP: the first byte of a connection tells a TLS handshake
(0x16) from a request line, so tests that reach the emulator by URL and token without a CA keep
working over `http_url`.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import ssl
import tempfile
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

#: The first byte of a TLS record carrying a handshake.
TLS_HANDSHAKE = 0x16


@dataclass(frozen=True)
class Credentials:
    """PEM bytes: the CA certificate (for clients) and the server's certificate and key."""

    ca_pem: bytes
    cert_pem: bytes
    key_pem: bytes


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def generate(host: str = "127.0.0.1") -> Credentials:
    """A fresh CA and a server certificate for `host` and `localhost`, valid for a year."""
    now = dt.datetime.now(dt.UTC) - dt.timedelta(minutes=5)
    until = now + dt.timedelta(days=365)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name("clmgit-sandbox-ca")
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(until)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, key_cert_sign=True, crl_sign=True,
                content_commitment=False, key_encipherment=False, data_encipherment=False,
                key_agreement=False, encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    names: list[x509.GeneralName] = [x509.DNSName("localhost")]
    names.append(x509.IPAddress(ipaddress.ip_address(host)))
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name("clmgit-sandbox-apiserver"))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(until)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    return Credentials(
        ca_pem=ca_cert.public_bytes(serialization.Encoding.PEM),
        cert_pem=cert.public_bytes(serialization.Encoding.PEM),
        key_pem=key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
    )


def server_context(credentials: Credentials) -> ssl.SSLContext:
    """A server-side context with the certificate loaded; HTTP/1.1 only (no ALPN h2)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    with tempfile.TemporaryDirectory(prefix="clmgit-tls-") as folder:
        cert, key = os.path.join(folder, "tls.crt"), os.path.join(folder, "tls.key")
        for path, data in ((cert, credentials.cert_pem), (key, credentials.key_pem)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
        context.load_cert_chain(cert, key)
    context.set_alpn_protocols(["http/1.1"])
    return context
