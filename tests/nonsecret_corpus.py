"""Texts that hold no secret and must come through redaction unchanged.

Ordinary code that names passwords and tokens, git output with commit hashes, UUIDs, file
paths, base64-looking identifiers, CSS colours, versions, image digests, public keys, logs and
prose: what coding agents read and write all day. A rule that fires on any of these is a false
positive that would make the stored thread harder to read.
"""

from __future__ import annotations

NONSECRETS: list[str] = [
    # code that handles credentials without holding one
    "def login(user, password):\n    return check(user, password)",
    "    user.set_password(new_password)",
    "if not token:\n    raise AuthError('missing token')",
    "token = request.headers.get('Authorization')",
    "id = models.AutoField(primary_key=True)",
    "tokenizer = AutoTokenizer.from_pretrained('bert-base-uncased')",
    "response = client.messages.create(model=model, max_tokens=4096, messages=msgs)",
    "password = os.environ['DB_PASSWORD']",
    "api_key = get_secret('stripe')",
    "const token = localStorage.getItem('token');",
    "TOKEN_EXPIRY_SECONDS=3600",
    "for key, value in sorted(d.items(), key=lambda kv: kv[0]):",
    "KeyError: 'user_id'",
    "if (password.length < 12) { return 'too short'; }",
    "password: str = Field(min_length=12)",
    "def verify(token: str) -> bool:",
    "interface Props { apiKey: string; onSubmit: () => void }",
    "private_key_path = '~/.ssh/id_ed25519'",
    "let keyCount = Object.keys(obj).length;",
    "SELECT id, email FROM users WHERE password_hash IS NOT NULL;",
    "export PASSWORD_FILE=/run/secrets/db_password",
    "  - uses: actions/checkout@v4\n    with:\n      token: ${{ secrets.GITHUB_TOKEN }}",
    "jobs:\n  test:\n    secrets: inherit",
    "monkeypatch.setenv('HOME', str(tmp_path))",
    "SECRET_KEY_BASE is read from the environment in config/secrets.yml",
    # git and shell output
    "git log --oneline\n3f2a9c1 Fix flaky login test\n8b7e6d5 Merge branch 'main'",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8\nAuthor: Jane Doe <jane@example.com>",
    "diff --git a/src/auth.py b/src/auth.py\nindex 83db48f..bf269f4 100644",
    "git rev-parse HEAD -> 4b825dc642cb6eb9a060e54bf8d69288fbee4904",
    "git push -u origin main",
    "mkdir -p build/output && ssh -p 2222 deploy@host",
    "docker run -p 8080:80 -u 1000:1000 nginx:1.25",
    "echo $DOCKER_PASSWORD | docker login --username bob --password-stdin",
    "Use `--password-stdin` to pass the password from a file",
    "npm install lodash@4.17.21 --save-exact",
    "pip install 'requests>=2.31' --index-url https://pypi.org/simple",
    "ssh-keygen -t ed25519 -C 'dev@example.com'",
    "sha256sum: 2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae  app.tar.gz",
    "Run `make test` then `git commit -m 'Fix auth flow'`",
    "pytest tests/test_auth_middleware.py::test_expired_token_is_rejected -q",
    # identifiers, paths, hashes, versions
    "request_id=3fa85f64-5717-4562-b3fc-2c963f66afa6",
    "session_id: 550e8400-e29b-41d4-a716-446655440000",
    "/home/dev/project/src/auth/tokens.py",
    "see src/secrets/manager.py line 40",
    "tests/test_password_reset.py::test_expired_link",
    "bumped colony-tasks from 0.1.0 to 0.2.0-rc.1+build.5",
    "pin python@sha256:9b8c6e5f4d3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6"
    " in the Dockerfile",
    "docker image ls --digests shows sha256:a3ed95caeb02ffe68cdd9fd84406680ae93d633cb16422d00e8a"
    "7c22955b46d4",
    'const ICON = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6'
    'kgAAAABJRU5ErkJggg==";',
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB",
    "task-runner-configuration-file-name",
    "Asia/Tokyo timezone offset is +09:00",
    "AKIA prefix means a long-term AWS key",
    # markup, config, logs, prose
    "color: #1e90ff; background: #fff; border: 1px solid #c0ffee;",
    '{"name": "colony-tasks", "version": "0.1.0", "license": "Apache-2.0"}',
    'services:\n  db:\n    image: postgres:16\n    ports:\n      - "5432:5432"',
    '[tool.ruff]\nline-length = 100\nselect = ["E", "F"]',
    'export PATH="$HOME/.local/bin:$PATH"',
    "2024-05-01T12:00:00Z INFO request completed status=200 duration_ms=42",
    "Content-Type: application/json\nAccept-Encoding: gzip, deflate",
    "The cookie banner overlaps the footer on mobile",
    "Bearer tokens are validated in middleware.py",
    "https://github.com/acme/app/pull/42",
    "https://example.com:8443/path?page=2&sort=desc",
    "http://localhost:8080/api/v1/items?limit=50",
    "user@example.com wrote: looks good",
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEexample\n-----END PUBLIC KEY-----",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl dev@laptop",
    "The public key fingerprint is SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s",
    "fix the flaky login test in auth middleware",
    "the token bucket rate limiter needs tests",
    "password reset flow renders twice",
    "Use <b>bold</b> in the docs",
    "edited src/auth.py: verify the session expiry",
    "author: bob",
    "The <private_notes> element is not a private span",
]
