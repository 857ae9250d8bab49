"""A throwaway PostgreSQL server for tests and benchmarks: Debian's binaries, a temp folder,
an unprivileged user, a free port on 127.0.0.1, password authentication.

``PgServer.find()`` returns None when the binaries are absent (``make postgres`` installs them);
tests then skip with that reason.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile

PASSWORD = "team-s3cret-pw"
USER = "colony"


def pg_bin() -> str | None:
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4])
    )
    if found:
        return os.path.dirname(found[-1])
    path = shutil.which("pg_ctl")
    return os.path.dirname(path) if path else None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PgServer:
    """``start()``, ``stop()``, ``url(db)``, ``create_database(name)``; as root it runs the
    server as the ``postgres`` system user (initdb refuses root)."""

    def __init__(self, bindir: str) -> None:
        self.bindir = bindir
        self.root = tempfile.mkdtemp(prefix="colony-pg-")
        self.data = os.path.join(self.root, "data")
        self.port = free_port()
        self._reusable = set()
        self.run_as: dict[str, str] = {}
        if os.geteuid() == 0:
            self.run_as = {"user": "postgres", "group": "postgres"}
            shutil.chown(self.root, "postgres", "postgres")
        os.chmod(self.root, 0o755)
        pwfile = os.path.join(self.root, "pw")
        with open(pwfile, "w") as handle:
            handle.write(PASSWORD + "\n")
        if self.run_as:
            shutil.chown(pwfile, "postgres", "postgres")
        self._run(
            "initdb",
            "-D",
            self.data,
            "-U",
            USER,
            "--pwfile",
            pwfile,
            "--auth=scram-sha-256",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
        )
        os.unlink(pwfile)
        with open(os.path.join(self.data, "postgresql.conf"), "a") as handle:
            handle.write(
                f"listen_addresses = '127.0.0.1'\nport = {self.port}\n"
                f"unix_socket_directories = '{self.root}'\nfsync = off\n"
                "synchronous_commit = off\nfull_page_writes = off\nmax_connections = 200\n"
            )

    @classmethod
    def find(cls) -> str | None:
        return pg_bin()

    def _run(self, tool: str, *args: str) -> None:
        subprocess.run(
            [os.path.join(self.bindir, tool), *args],
            check=True,
            capture_output=True,
            cwd=self.root,
            **self.run_as,  # type: ignore[arg-type]
        )

    def start(self) -> None:
        self._run("pg_ctl", "-D", self.data, "-l", os.path.join(self.root, "log"), "-w", "start")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", self.data, "-m", mode, "-w", "stop")

    def url(self, database: str = "postgres", password: str = PASSWORD) -> str:
        return f"postgresql://{USER}:{password}@127.0.0.1:{self.port}/{database}"

    template: str | None = None
    _reusable: set[str] = set()

    def create_database(self, name: str) -> str:
        """A new database (a copy of ``self.template`` when set) and its URL."""
        import pg8000.dbapi

        sql = f'CREATE DATABASE "{name}"'
        if self.template:
            sql += f' TEMPLATE "{self.template}" STRATEGY FILE_COPY'
        conn = pg8000.dbapi.connect(
            user=USER, password=PASSWORD, host="127.0.0.1", port=self.port, database="postgres"
        )
        conn.autocommit = True
        try:
            conn.cursor().execute(sql)
        finally:
            conn.close()
        return self.url(name)

    def reset_database(self, name: str) -> str:
        """An empty store again: every table but the migration record truncated, ids restarted
        (~30 ms; a new database costs ~700 ms). Created from the template on first use."""
        import pg8000.dbapi

        if name not in self._reusable:
            self._reusable.add(name)
            return self.create_database(name)
        conn = pg8000.dbapi.connect(
            user=USER, password=PASSWORD, host="127.0.0.1", port=self.port, database=name
        )
        conn.autocommit = True
        try:
            cursor = conn.cursor()
            cursor.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
                " AND tablename != 'schema_migrations'"
            )
            tables = ", ".join(f'"{r[0]}"' for r in cursor.fetchall())
            cursor.execute(f"TRUNCATE {tables} RESTART IDENTITY CASCADE")
        finally:
            conn.close()
        return self.url(name)

    def destroy(self) -> None:
        try:
            self.stop("immediate")
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(self.root, ignore_errors=True)


# -- TLS, as the README's team setup asks for ------------------------------------------------


def make_certificates(folder: str) -> dict[str, str]:
    """A throwaway CA and a server certificate for 127.0.0.1 and localhost signed by it, made
    with the ``openssl`` binary (nothing downloads). Paths by name: ca, cert, key."""
    openssl = shutil.which("openssl")
    if openssl is None:
        raise FileNotFoundError("openssl")
    os.makedirs(folder, exist_ok=True)
    path = {n: os.path.join(folder, n) for n in ("ca.crt", "ca.key", "server.crt", "server.key")}
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

    def run(*args: str) -> None:
        subprocess.run([openssl, *args], check=True, capture_output=True, cwd=folder)

    run(
        "req", "-x509", *ec, "-keyout", path["ca.key"], "-out", path["ca.crt"], "-days", "2",
        "-subj", "/CN=colony-tasks test CA",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign",
    )  # fmt: skip
    csr = os.path.join(folder, "server.csr")
    run("req", *ec, "-keyout", path["server.key"], "-out", csr, "-subj", "/CN=127.0.0.1")
    ext = os.path.join(folder, "server.ext")
    with open(ext, "w") as handle:
        handle.write(
            "subjectAltName = IP:127.0.0.1, DNS:localhost\nbasicConstraints = CA:FALSE\n"
            "keyUsage = critical, digitalSignature, keyEncipherment\n"
            "extendedKeyUsage = serverAuth\n"
        )
    run(
        "x509", "-req", "-in", csr, "-CA", path["ca.crt"], "-CAkey", path["ca.key"],
        "-CAcreateserial", "-out", path["server.crt"], "-days", "2", "-extfile", ext,
    )  # fmt: skip
    return {"ca": path["ca.crt"], "cert": path["server.crt"], "key": path["server.key"]}


def require_tls(server: PgServer, cert: str, key: str) -> None:
    """Turn TLS on and accept TCP connections only over it (``hostssl`` lines alone, SCRAM
    passwords); the unix socket stays for the administrator. Call before ``start()``."""
    tls = os.path.join(server.root, "tls")
    os.makedirs(tls, exist_ok=True)
    for source in (cert, key):
        target = os.path.join(tls, os.path.basename(source))
        shutil.copyfile(source, target)
        os.chmod(target, 0o600)
        if server.run_as:
            shutil.chown(target, "postgres", "postgres")
    with open(os.path.join(server.data, "postgresql.conf"), "a") as handle:
        handle.write(
            f"ssl = on\nssl_cert_file = '{os.path.join(tls, os.path.basename(cert))}'\n"
            f"ssl_key_file = '{os.path.join(tls, os.path.basename(key))}'\n"
        )
    with open(os.path.join(server.data, "pg_hba.conf"), "w") as handle:
        handle.write("local all all scram-sha-256\nhostssl all all 127.0.0.1/32 scram-sha-256\n")


def psql(server: PgServer, sql: str, database: str = "postgres") -> subprocess.CompletedProcess:
    """Run ``sql`` (psql meta-commands such as ``\\c`` included) as the administrator over the
    unix socket, stopping at the first error."""
    return subprocess.run(
        [os.path.join(server.bindir, "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1",
         "-h", server.root, "-p", str(server.port), "-U", USER, "-d", database],
        input=sql, text=True, capture_output=True, env={**os.environ, "PGPASSWORD": PASSWORD},
    )  # fmt: skip
