# Copyright: (c) 2026, modelarts.training contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""A throw-away CA and a server certificate for 127.0.0.1/localhost, written to ``--tls-dir``.

Files: ``ca.pem`` (give it to clients as ``ca_bundle``), ``server.pem`` and ``server-key.pem``, and
``.modelarts-emulator`` (the SHA-256 of the three, as this emulator wrote them).  The CA key is not kept:
nothing else should ever be signed by it.

The emulator writes only its own files: the directory is created private (0700) or, when it exists, must
be a directory (not a symbolic link) owned by the user and writable by no one else; every file is written
under a fresh random name in it and renamed into place, so nothing planted there is written through.
Certificates are reused - so that restarting the emulator does not invalidate a CA a client already
trusts - only when the marker names them byte for byte (certificates the emulator did not create are
replaced by new ones) and while they are valid for at least another day.
"""

import datetime
import hashlib
import ipaddress
import json
import os
import ssl
import stat
import tempfile

CA_FILE = "ca.pem"
CERT_FILE = "server.pem"
KEY_FILE = "server-key.pem"
MARKER_FILE = ".modelarts-emulator"


class TLSUnavailable(ValueError):
    """HTTPS was asked for, but the optional ``cryptography`` package is not installed."""


def _require_cryptography():
    try:
        import cryptography  # noqa: F401  pylint: disable=import-outside-toplevel,unused-import
    except ImportError:
        raise TLSUnavailable('--tls-dir needs the cryptography package: pip install "modelarts-emulator[tls]"') from None


def check_private_directory(directory):
    """Create ``directory`` (mode 0700) or check the one there: a real directory, the user's own, that no one else can write
    to. Raises ValueError naming what is wrong: a directory another user can write to may hold anything by the time it is read."""
    directory = os.path.abspath(directory)
    parent = os.path.dirname(directory)
    if not os.path.isdir(parent):
        os.makedirs(parent, exist_ok=True)
    try:
        os.mkdir(directory, 0o700)
    except FileExistsError:
        pass
    info = os.lstat(directory)
    if stat.S_ISLNK(info.st_mode):
        raise ValueError("--tls-dir %s is a symbolic link; give a directory of your own (for example one made by mktemp -d)" % directory)
    if not stat.S_ISDIR(info.st_mode):
        raise ValueError("--tls-dir %s is not a directory" % directory)
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise ValueError(
            "--tls-dir %s belongs to another user (uid %d); give a directory of your own (for example one made by mktemp -d)" % (directory, info.st_uid)
        )
    if info.st_mode & 0o022:
        raise ValueError(
            "--tls-dir %s can be written by other users (mode %s); give a private directory (chmod 700, or one made by mktemp -d)"
            % (directory, oct(stat.S_IMODE(info.st_mode)))
        )
    return directory


def _read_own(path):
    """The bytes of a regular file at ``path``, never through a symbolic link; None when there is none."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None
        return handle.read(1024 * 1024)


def _fingerprints(contents):
    return dict((name, hashlib.sha256(data).hexdigest()) for name, data in contents.items())


def _reusable(directory):
    """Whether the certificates in ``directory`` are the ones this emulator wrote there (as its marker says) and valid for another day."""
    from cryptography import x509  # pylint: disable=import-outside-toplevel

    contents = dict((name, _read_own(os.path.join(directory, name))) for name in (CA_FILE, CERT_FILE, KEY_FILE))
    marker = _read_own(os.path.join(directory, MARKER_FILE))
    if marker is None or any(data is None for data in contents.values()):
        return False
    try:
        if json.loads(marker.decode("utf-8")) != _fingerprints(contents):
            return False
        cert = x509.load_pem_x509_certificate(contents[CERT_FILE])
        x509.load_pem_x509_certificate(contents[CA_FILE])
    except ValueError:
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

    directory = check_private_directory(directory)
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
    contents = {
        CA_FILE: ca_cert.public_bytes(serialization.Encoding.PEM),
        CERT_FILE: cert.public_bytes(serialization.Encoding.PEM),
        KEY_FILE: key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()),
    }
    # The marker goes first: certificates without their marker line are never reused, whatever happens between the writes.
    write_file_atomically(os.path.join(directory, MARKER_FILE), json.dumps(_fingerprints(contents), sort_keys=True).encode("ascii"), 0o644)
    write_file_atomically(key_path, contents[KEY_FILE], 0o600)
    write_file_atomically(cert_path, contents[CERT_FILE], 0o644)
    write_file_atomically(ca_path, contents[CA_FILE], 0o644)
    return ca_path, cert_path, key_path


def write_file_atomically(path, data, mode):
    """Write ``data`` to ``path``: under a fresh random name in the same directory (created exclusively, so nothing planted
    there is written through), then renamed into place (a rename replaces a symbolic link at ``path``, never its target)."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=".modelarts-emulator-")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise


def server_context(cert_path, key_path):
    """Return a server-side SSLContext (TLS 1.2+) for the emulator."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert_path, key_path)
    return context
