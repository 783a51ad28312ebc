"""SASL/SCRAM-SHA-512 over TLS with ACLs for a test broker, as MSK's SCRAM listener (port 9096) offers them.

`ScramTls` makes a self-signed CA and a server certificate for 127.0.0.1 when the broker starts (`write`), gives the
broker's settings for its `CLIENT` listener (SASL_SSL, SCRAM-SHA-512, PEM keystore), the StorageTool arguments that
add the SCRAM users to the cluster's metadata at format time (`--add-scram`, KRaft since 3.5), and the client
settings of a user. ACLs are Kafka's `StandardAuthorizer`; the admin user and `User:ANONYMOUS` (the broker's own
traffic on its plaintext `INTERNAL` and `CONTROLLER` listeners, on loopback) are super users, every other principal
may do only what an ACL allows (`allow.everyone.if.no.acl.found` stays false)."""

from __future__ import annotations

import base64
import datetime
import ipaddress
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from devtools.processes import LOOPBACK

MECHANISM = "SCRAM-SHA-512"
SCRAM_LOGIN = "org.apache.kafka.common.security.scram.ScramLoginModule"


@dataclass
class ScramTls:
    """`users`: name -> password, each added at format time; `admin` (one of them) is a super user."""

    users: dict[str, str]
    admin: str = "admin"
    ca_path: Path | None = field(default=None, init=False)
    _server_pem: tuple[str, str] = field(default=("", ""), init=False)

    def write(self, folder: Path) -> None:
        """Make the CA and the server's key and certificate; the CA's certificate is written to `ca_path`."""
        ca_key, ca_cert = _certificate("sink-engine test CA", None)
        key, cert = _certificate(LOOPBACK, (ca_key, ca_cert))
        self.ca_path = folder / "ca.pem"
        self.ca_path.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
        key_pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ).decode()
        self._server_pem = (key_pem, cert.public_bytes(serialization.Encoding.PEM).decode())

    def broker_settings(self) -> dict[str, str]:
        """server.properties entries (values may hold newlines: the writer escapes them)."""
        key_pem, cert_pem = self._server_pem
        assert key_pem, "write() first"
        return {
            "listener.security.protocol.map": "CLIENT:SASL_SSL,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "sasl.enabled.mechanisms": MECHANISM,
            f"listener.name.client.{MECHANISM.lower()}.sasl.jaas.config": f"{SCRAM_LOGIN} required;",
            "listener.name.client.ssl.keystore.type": "PEM",
            "listener.name.client.ssl.keystore.key": key_pem,
            "listener.name.client.ssl.keystore.certificate.chain": cert_pem,
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "super.users": f"User:ANONYMOUS;User:{self.admin}",
        }

    def format_arguments(self) -> list[str]:
        return [arg for name, pw in self.users.items() for arg in ("-S", f"{MECHANISM}=[name={name},password={pw}]")]

    def client_settings(self, user: str, password: str | None = None) -> dict[str, str]:
        """confluent-kafka settings logging in as `user` (with its password unless another is given)."""
        assert self.ca_path is not None, "write() first"
        return {
            "security.protocol": "SASL_SSL",
            "sasl.mechanisms": MECHANISM,
            "sasl.username": user,
            "sasl.password": self.users[user] if password is None else password,
            "ssl.ca.location": str(self.ca_path),
        }

    def jaas_config(self, user: str, password: str | None = None) -> str:
        """A Java client's `sasl.jaas.config` for `user`, as a connector JSON carries it."""
        return f'{SCRAM_LOGIN} required username="{user}" password="{password or self.users[user]}";'


def _certificate(name: str, issuer: tuple | None):
    """(key, certificate) for `name`: self-signed CA when `issuer` is None, else a server certificate for 127.0.0.1
    and localhost signed by the issuer's (key, certificate)."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer[1].subject if issuer else subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=issuer is None, path_length=None), critical=True)
    )
    if issuer is not None:
        names = [x509.IPAddress(ipaddress.ip_address(LOOPBACK)), x509.DNSName("localhost")]
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return key, builder.sign(issuer[0] if issuer else key, hashes.SHA256())


@dataclass
class OAuthBearerUnsecured:
    """A SASL_PLAINTEXT listener with OAUTHBEARER, its tokens checked by Kafka's default validator for that mechanism
    (`OAuthBearerUnsecuredValidatorCallbackHandler`): an unsigned JWS (`alg` none) with `sub` (the principal) and
    `exp` claims passes, any other token is refused. No authorizer: every principal may do anything. This is as far
    as a broker without AWS gets to MSK IAM: MSK validates its own tokens (a SigV4-presigned URL), no JWS."""

    admin: str = "admin"
    ca_path: Path | None = None

    def write(self, folder: Path) -> None:
        """Nothing to make: no TLS, no users."""

    def broker_settings(self) -> dict[str, str]:
        return {
            "listener.security.protocol.map": "CLIENT:SASL_PLAINTEXT,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "sasl.enabled.mechanisms": "OAUTHBEARER",
            "listener.name.client.oauthbearer.sasl.jaas.config": (
                f"org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
                f'unsecuredLoginStringClaim_sub="{self.admin}";'
            ),
        }

    def format_arguments(self) -> list[str]:
        return []

    def client_settings(self, user: str) -> dict[str, str]:
        """librdkafka's own unsecured JWS for `user`."""
        return {
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanisms": "OAUTHBEARER",
            "enable.sasl.oauthbearer.unsecure.jwt": "true",
            "sasl.oauthbearer.config": f"principal={user}",
        }


def unsecured_jws(principal: str, lifetime_s: int = 3600) -> tuple[str, float]:
    """(an unsigned JWS for `principal`, its expiry in seconds since the epoch): what the unsecured validator takes."""

    def part(value: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    expiry = time.time() + lifetime_s
    return f"{part({'alg': 'none'})}.{part({'sub': principal, 'exp': int(expiry)})}.", expiry
