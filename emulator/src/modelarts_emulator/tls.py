# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A throw-away CA and a server certificate for 127.0.0.1/localhost, written to ``--tls-dir``.

Files: ``ca.pem`` (give it to clients as ``ca_bundle``), ``server.pem`` and ``server-key.pem``.
The CA key is not kept: nothing else should ever be signed by it. Existing files are reused while
they are valid for at least another day, so restarting the emulator does not invalidate a CA that a
client already trusts.
"""

import datetime
import ipaddress
import os
import ssl

CA_FILE = "ca.pem"
CERT_FILE = "server.pem"
KEY_FILE = "server-key.pem"


class TLSUnavailable(ValueError):
    """HTTPS was asked for, but the optional ``cryptography`` package is not installed."""


def _require_cryptography():
    try:
        import cryptography  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
    except ImportError:
        raise TLSUnavailable('--tls-dir needs the cryptography package: pip install "modelarts-emulator[tls]"') from None


def _reusable(directory):
    from cryptography import x509  # pylint: disable=import-outside-toplevel

    paths = [os.path.join(directory, name) for name in (CA_FILE, CERT_FILE, KEY_FILE)]
    if not all(os.path.exists(p) for p in paths):
        return False
    try:
        with open(paths[1], "rb") as handle:
            cert = x509.load_pem_x509_certificate(handle.read())
        with open(paths[0], "rb") as handle:
            x509.load_pem_x509_certificate(handle.read())
    except (ValueError, OSError):
        return False
    soon = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)
    return cert.not_valid_after_utc > soon


def ensure_certificates(directory):
    """Create (or reuse) the CA and server certificate in ``directory``; return (ca, cert, key) paths."""
    # pylint: disable=too-many-locals
    _require_cryptography()
    from cryptography import x509  # pylint: disable=import-outside-toplevel
    from cryptography.hazmat.primitives import hashes, serialization  # pylint: disable=import-outside-toplevel
    from cryptography.hazmat.primitives.asymmetric import ec  # pylint: disable=import-outside-toplevel
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID  # pylint: disable=import-outside-toplevel

    os.makedirs(directory, exist_ok=True)
    ca_path, cert_path, key_path = (os.path.join(directory, n) for n in (CA_FILE, CERT_FILE, KEY_FILE))
    if _reusable(directory):
        return ca_path, cert_path, key_path

    now = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=5)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name(
        [x509.NameAttribute(NameOID.COMMON_NAME, "modelarts-emulator test CA"), x509.NameAttribute(NameOID.ORGANIZATION_NAME, "modelarts.training")]
    )
    ca_ski = x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key())
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=365))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(ca_ski, critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=90))
        .add_extension(
            x509.SubjectAlternativeName(
                [
                    x509.DNSName("localhost"),
                    x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                    x509.IPAddress(ipaddress.ip_address("::1")),
                ]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=True,
                data_encipherment=False,
                key_agreement=True,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    _write(ca_path, ca_cert.public_bytes(serialization.Encoding.PEM), 0o644)
    _write(cert_path, cert.public_bytes(serialization.Encoding.PEM), 0o644)
    _write(key_path, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()), 0o600)
    return ca_path, cert_path, key_path


def _write(path, data, mode):
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.replace(tmp, path)


def server_context(cert_path, key_path):
    """Return a server-side SSLContext (TLS 1.2+) for the emulator."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert_path, key_path)
    return context
