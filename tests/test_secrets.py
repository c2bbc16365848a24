"""The secrets policy against every way in, through the real server over stdio.

Each test runs with the policy on and off: off, the secret leaks (or the change happens), which
proves the test can see the leak; on, the call is refused with ACCESS_DENIED and the policy's
sentence, or the file is left out and the result says so. docs/security.md's table names these
tests, row by row.
"""

from __future__ import annotations

import base64
import io
import json
import re
import tarfile
import unicodedata
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from fsmcp.testing import ToolCalls, serve_stdio, text_of

pytestmark = pytest.mark.anyio

MARK = "MARK-7f3c"
MARK_NAME = MARK.replace("-", "_")  # the marker where a name cannot hold "-"
SENTENCE = "protected by the secrets policy"
NFD_NAME = unicodedata.normalize("NFD", "clé.pem")
FULLWIDTH_ENV = "\uff0e\uff45\uff4e\uff56"  # ．ｅｎｖ
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / ".aws").mkdir()
    (root / ".env").write_text(f"TOKEN={MARK}-env\n")
    (root / ".env.example").write_text("TOKEN=changeme\n")
    (root / "sub" / ".ENV").write_text(f"TOKEN={MARK}-upper\n")
    (root / FULLWIDTH_ENV).write_text(f"TOKEN={MARK}-fullwidth\n")
    (root / NFD_NAME).write_text(f"{MARK}-nfd\n")
    (root / "id_rsa").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{MARK}-key\n")
    (root / "id_rsa.pub").write_text("ssh-ed25519 AAAA public\n")
    (root / ".aws" / "credentials").write_text(f"aws_secret_access_key={MARK}-aws\n")
    (root / ".env.png").write_bytes(PNG)
    (root / ".env.py").write_text(f"def {MARK_NAME}_function():\n    return 1\n")
    (root / ".env.ipynb").write_text(json.dumps({
        "cells": [{"cell_type": "code", "source": f"print('{MARK}-cell')", "metadata": {}, "outputs": [], "execution_count": None}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    }))  # fmt: skip
    (root / "notes.txt").symlink_to(".env")
    (root / "keys").symlink_to(".aws")
    (root / "README.md").write_text("public readme\n")
    return root


@asynccontextmanager
async def server(root: Path, policy: str, *args: str):
    extra = ["--disable", "secrets"] if policy == "off" else []
    async with serve_stdio(str(root), *extra, *args) as client:
        yield ToolCalls(client)


def leaked(texts: list[str]) -> bool:
    return any(MARK in t or MARK_NAME in t for t in texts)


async def refused_or_leaked(root: Path, policy: str, tool: str, **args) -> str:
    """On: ACCESS_DENIED with the sentence and no marker. Off: success showing the marker."""
    async with server(root, policy) as s:
        result = await s.client.call_tool(tool, args)
    text = text_of(result)
    if policy == "on":
        assert result.is_error and text.startswith("ACCESS_DENIED: ") and SENTENCE in text, text
        assert not leaked([text])
    else:
        assert not result.is_error and leaked([text]), text
    return text


POLICY = pytest.mark.parametrize("policy", ["on", "off"])


# -- reads ------------------------------------------------------------------------------------


@POLICY
async def test_read_file(root, policy):
    await refused_or_leaked(root, policy, "read_file", path=".env")


@POLICY
async def test_read_file_lines(root, policy):
    await refused_or_leaked(root, policy, "read_file", path=".env", startLine=1, endLine=1)


@POLICY
async def test_read_file_bytes(root, policy):
    await refused_or_leaked(root, policy, "read_file", path=".env", offset=6, length=20)


@POLICY
async def test_read_file_media(root, policy):
    async with server(root, policy) as s:
        result = await s.client.call_tool("read_file", {"path": ".env.png"})
    if policy == "on":
        assert result.is_error and SENTENCE in result.content[0].text
    else:
        assert not result.is_error and any(block.type == "image" for block in result.content)


@POLICY
async def test_read_file_through_a_link_to_the_file(root, policy):
    await refused_or_leaked(root, policy, "read_file", path="notes.txt")


@POLICY
async def test_read_file_through_a_link_to_its_directory(root, policy):
    await refused_or_leaked(root, policy, "read_file", path="keys/credentials")


@POLICY
async def test_read_file_of_a_link_named_like_a_secret(root, policy):
    (root / "id_ed25519").symlink_to("README.md")
    async with server(root, policy) as s:
        is_error, text = await s.call("read_file", path="id_ed25519")
    assert (is_error and SENTENCE in text) if policy == "on" else text == "public readme\n"


@POLICY
@pytest.mark.parametrize("name", ["sub/.ENV", FULLWIDTH_ENV, ".Env", "ID_RSA"])
async def test_read_file_case_and_unicode_spellings(root, policy, name):
    if name in (".Env", "ID_RSA"):  # another spelling of an existing file, made as a link to it
        (root / name).symlink_to(".env" if name == ".Env" else "id_rsa")
    await refused_or_leaked(root, policy, "read_file", path=name)


@POLICY
async def test_read_file_nfd_name_of_an_added_glob(root, policy):
    # The operator's glob is written composed (NFC); the file's name is decomposed (NFD).
    config = root.parent / "fsmcp.toml"
    config.write_text('[plugins.secrets]\nadd = ["clé.*"]\nremove = ["*.pem"]\n')
    async with server(root, policy, "--config", str(config)) as s:
        is_error, text = await s.call("read_file", path=NFD_NAME)
    assert (is_error and SENTENCE in text) if policy == "on" else MARK in text


@POLICY
async def test_read_multiple_files(root, policy):
    async with server(root, policy) as s:
        text = await s.ok("read_multiple_files", paths=[".env", "README.md", "id_rsa"])
    assert "public readme" in text
    if policy == "on":
        assert MARK not in text and text.count(SENTENCE) == 2
    else:
        assert f"{MARK}-env" in text and f"{MARK}-key" in text


@POLICY
async def test_get_file_info(root, policy):
    async with server(root, policy) as s:
        is_error, text = await s.call("get_file_info", path=".env")
    assert (is_error and SENTENCE in text) if policy == "on" else (not is_error and "size: " in text)


@POLICY
async def test_outline_and_read_symbol(root, policy):
    await refused_or_leaked(root, policy, "outline", path=".env.py")
    await refused_or_leaked(root, policy, "read_symbol", path=".env.py", name=f"{MARK_NAME}_function")


@POLICY
async def test_read_notebook(root, policy):
    await refused_or_leaked(root, policy, "read_notebook", path=".env.ipynb")


@POLICY
async def test_edit_notebook(root, policy):
    async with server(root, policy) as s:
        is_error, text = await s.call("edit_notebook", path=".env.ipynb", edits=[{"op": "insert", "source": "planted = 1"}])
    planted = "planted" in (root / ".env.ipynb").read_text()
    assert (is_error and SENTENCE in text and not planted) if policy == "on" else (not is_error and planted)


@POLICY
async def test_watch_file(root, policy):
    async with server(root, policy) as s:
        is_error, text = await s.call("watch_file", path=".env")
    assert (is_error and SENTENCE in text) if policy == "on" else not is_error


# -- changes ----------------------------------------------------------------------------------


async def changed(root: Path, policy: str, tool: str, check, **args) -> None:
    """On: refused, ``check()`` False (nothing changed). Off: done, ``check()`` True."""
    async with server(root, policy) as s:
        is_error, text = await s.call(tool, **args)
    if policy == "on":
        assert is_error and text.startswith("ACCESS_DENIED: ") and SENTENCE in text, text
        assert not check() and MARK not in text
    else:
        assert not is_error and check(), text


@POLICY
async def test_write_file_over_a_secret(root, policy):
    await changed(root, policy, "write_file", lambda: (root / ".env").read_text() == "X=1\n", path=".env", content="X=1\n")


@POLICY
async def test_write_file_plants_a_key(root, policy):
    await changed(root, policy, "write_file", lambda: (root / "deploy.key").exists(), path="deploy.key", content="k")


@POLICY
async def test_write_files(root, policy):
    await changed(
        root, policy, "write_files", lambda: (root / "a.pem").exists(),
        files=[{"path": "ok.txt", "content": "ok"}, {"path": "a.pem", "content": "k"}],
    )  # fmt: skip


@POLICY
async def test_append_file(root, policy):
    await changed(root, policy, "append_file", lambda: "X=1" in (root / ".env").read_text(), path=".env", content="X=1\n")


@POLICY
async def test_edit_file(root, policy):
    await changed(
        root, policy, "edit_file", lambda: "TOKEN=new" in (root / ".env").read_text(),
        path=".env", edits=[{"oldText": "TOKEN=", "newText": "TOKEN=new"}],
    )  # fmt: skip


@POLICY
async def test_edit_files(root, policy):
    (root / "config.txt").write_text("TOKEN=\n")
    async with server(root, policy) as s:
        text = await s.ok("edit_files", paths=[".env", "config.txt"], edits=[{"oldText": "TOKEN=", "newText": "TOKEN=new"}])
    # Each file stands alone (atomic: false): the protected one fails inline, the other is edited.
    assert (root / "config.txt").read_text() == "TOKEN=new\n"
    if policy == "on":
        assert f".env: [error ACCESS_DENIED]" in text and SENTENCE in text and not leaked([text])
        assert (root / ".env").read_text() == f"TOKEN={MARK}-env\n"
    else:
        assert "TOKEN=new" in (root / ".env").read_text()


@POLICY
async def test_patch_apply(root, policy):
    patch = f"--- a/.env\n+++ b/.env\n@@ -1 +1 @@\n-TOKEN={MARK}-env\n+TOKEN=patched\n"
    await changed(root, policy, "patch_apply", lambda: "patched" in (root / ".env").read_text(), patch=patch)


@POLICY
async def test_move_file_out_of_a_secret_name(root, policy):
    await changed(root, policy, "move_file", lambda: (root / "plain.txt").exists(), source=".env", destination="plain.txt")


@POLICY
async def test_copy_file_out_of_a_secret_name(root, policy):
    await changed(root, policy, "copy_file", lambda: (root / "plain.txt").exists(), source=".env", destination="plain.txt")


@POLICY
async def test_move_file_into_a_secret_name(root, policy):
    await changed(root, policy, "move_file", lambda: (root / "README.pem").exists(), source="README.md", destination="README.pem")


@POLICY
async def test_move_directory_holding_a_secret_to_where_it_is_none(root, policy):
    await changed(root, policy, "move_file", lambda: (root / "aws" / "credentials").exists(), source=".aws", destination="aws")


@POLICY
async def test_copy_directory_holding_a_secret_to_where_it_is_none(root, policy):
    await changed(root, policy, "copy_file", lambda: (root / "aws" / "credentials").exists(), source=".aws", destination="aws")


async def test_a_directory_whose_secrets_keep_their_names_moves(root):
    async with server(root, "on") as s:
        await s.ok("move_file", source="sub", destination="moved")
        _, text = await s.call("read_file", path="moved/.ENV")
    assert (root / "moved" / ".ENV").exists() and SENTENCE in text and MARK not in text


@POLICY
async def test_delete_file(root, policy):
    await changed(root, policy, "delete_file", lambda: not (root / ".env").exists(), path=".env")


@POLICY
async def test_batch_operations(root, policy):
    async with server(root, policy) as s:
        is_error, text = await s.call(
            "batch_operations",
            operations=[{"tool": "read_file", "arguments": {"path": "README.md"}}, {"tool": "read_file", "arguments": {"path": ".env"}}],
        )
    if policy == "on":
        assert SENTENCE in text and MARK not in text and "public readme" in text
    else:
        assert MARK in text


# -- searches, listings, archives ------------------------------------------------------------


@POLICY
@pytest.mark.parametrize("how", [{"directory": "."}, {"globs": ["**/*"]}, {"directory": ".", "includeIgnored": True}, {"directory": ".", "caseInsensitive": True, "contextLines": 2}])
async def test_grep_files(root, policy, how):
    async with server(root, policy) as s:
        text = await s.ok("grep_files", regex="MARK", **how)
    assert leaked([text]) == (policy == "off"), text


@POLICY
async def test_grep_files_naming_a_secret(root, policy):
    async with server(root, policy) as s:
        is_error, text = await s.call("grep_files", regex="MARK", globs=[".env"])
    assert (is_error and SENTENCE in text and MARK not in text) if policy == "on" else MARK in text


@POLICY
async def test_grep_files_through_a_linked_directory(root, policy):
    async with server(root, policy) as s:
        text = await s.ok("grep_files", regex="MARK", directory="keys")
    assert leaked([text]) == (policy == "off"), text


@pytest.mark.parametrize("policy", ["on", "off"])
async def test_listings_show_names_never_contents(root, policy):
    async with server(root, policy) as s:
        listing = await s.ok("list_directory", path=".")
        tree = await s.ok("directory_tree", path=".")
        found = await s.ok("search_files", nameContains="env")
        globbed = await s.ok("glob_search", globs=["**/.env*"])
    for text in (listing, tree, found, globbed):
        assert ".env" in text and MARK not in text


@POLICY
async def test_compress_files(root, policy):
    async with server(root, policy) as s:
        text = await s.ok("compress_files", paths=["."], output="out/all.tar")
    archived = (root / "out" / "all.tar").read_bytes()
    if policy == "on":
        assert MARK.encode() not in archived and "protected (the secrets policy)" in text
        with tarfile.open(root / "out" / "all.tar") as tar:
            names = tar.getnames()
        assert "root/README.md" in names and "root/.env.example" in names and not any(n.endswith("/.env") for n in names)
    else:
        assert MARK.encode() in archived


@POLICY
async def test_compress_files_naming_a_secret(root, policy):
    async with server(root, policy) as s:
        is_error, text = await s.call("compress_files", paths=[".env"], output="env.tar")
    assert (is_error and SENTENCE in text) if policy == "on" else (not is_error and (root / "env.tar").exists())


def _tar_with(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@POLICY
async def test_extract_archive(root, policy):
    (root / "in.tar").write_bytes(_tar_with({".env": b"PLANTED=1\n", "k/id_ed25519": b"key", "k/id_ed25519.pub": b"pub", "ok.txt": b"ok"}))
    async with server(root, policy) as s:
        text = await s.ok("extract_archive", archive="in.tar", destination="ex")
    assert (root / "ex" / "ok.txt").exists() and (root / "ex" / "k" / "id_ed25519.pub").exists()
    if policy == "on":
        assert not (root / "ex" / ".env").exists() and not (root / "ex" / "k" / "id_ed25519").exists()
        assert text.count("protected (the secrets policy)") == 2
    else:
        assert (root / "ex" / ".env").exists() and (root / "ex" / "k" / "id_ed25519").exists()


# -- the operator's switches ----------------------------------------------------------------


async def test_per_root_off_and_allow_write(root, tmp_path):
    fixtures = tmp_path / "fixtures"
    fixtures.mkdir()
    (fixtures / "test.key").write_text(f"{MARK}-fixture\n")
    config = tmp_path / "fsmcp.toml"
    config.write_text(f'[plugins.secrets]\nallow_write = true\n\n[plugins.secrets.roots."{fixtures}"]\nenabled = false\n')
    async with serve_stdio(str(root), str(fixtures), "--config", str(config)) as client:
        s = ToolCalls(client)
        assert MARK in await s.ok("read_file", path=str(fixtures / "test.key"))
        await s.ok("write_file", path=".env", content="NEW=1\n")
        assert SENTENCE in await s.fail("read_file", "ACCESS_DENIED", path=".env")
        assert SENTENCE in await s.fail("move_file", "ACCESS_DENIED", source=".env", destination="plain.txt")
    assert (root / ".env").read_text() == "NEW=1\n" and not (root / "plain.txt").exists()


# -- end to end -----------------------------------------------------------------------------

SECRET_FILES = (
    ".env", ".env.local", "app/.env.production", "tls/server.pem", "tls/server.key", "tls/bundle.p12", "tls/bundle.pfx",
    "java/store.jks", "java/release.keystore", "home/.ssh/id_rsa", "home/.ssh/id_dsa", "home/.ssh/id_ecdsa",
    "home/.ssh/id_ed25519", "home/.gnupg/private-keys-v1.d/key.asc", "home/.netrc", "home/_netrc", "home/.npmrc",
    "home/.pypirc", "home/.git-credentials", "home/.pgpass", "web/.htpasswd", "home/.vault-token",
    "home/.aws/credentials", "home/.docker/config.json", "home/.kube/config", "home/.config/gcloud/credentials.db",
    "home/.config/gcloud/access_tokens.db", "home/.config/gcloud/application_default_credentials.json",
    "home/.config/gcloud/legacy_credentials/me@example.com/adc.json", "vault/passwords.kdbx",
)


def seed_every_secret(top: Path) -> dict[str, str]:
    markers = {}
    for n, rel in enumerate(SECRET_FILES):
        markers[rel] = f"{MARK}-{n:02d}"
        (top / rel).parent.mkdir(parents=True, exist_ok=True)
        (top / rel).write_text(f"secret {markers[rel]} here\n")
    (top / "home" / ".ssh" / "id_ed25519.pub").write_text("ssh-ed25519 AAAA public\n")
    (top / "README.md").write_text("public\n")
    return markers


PROGRAM_CALLS: list[tuple[str, dict]] = [
    ("run_command", {"command": "grep", "args": ["-r", "-i", "secret", "."]}),
    ("run_command", {"command": "grep", "args": ["-r", "-i", "secret", "link-to-home/"]}),
    ("run_command", {"command": "cat", "args": ["link-to-env"]}),
    ("run_command", {"command": "rg", "args": ["-uu", "-i", "--follow", "secret"]}),
    ("run_shell", {"command": "cat link-to-env link-to-home/.aws/credentials; grep -ri secret .; find . -type f -exec cat {} +"}),
]
"""Programs the server starts: whatever they name, walk or follow, a protected file reads as empty."""


@POLICY
async def test_end_to_end_no_tool_output_holds_any_secret(tmp_path, policy):
    top = tmp_path / "world"
    top.mkdir()
    markers = seed_every_secret(top)
    (top / "link-to-env").symlink_to(".env")
    (top / "link-to-home").symlink_to("home")
    patch = f"--- a/.env\n+++ b/.env\n@@ -1 +1 @@\n-secret {markers['.env']} here\n+gone\n"
    config = tmp_path / "fsmcp.toml"
    config.write_text("[plugins.shell]\nallow_shell = true\n")
    async with server(top, policy, "--config", str(config)) as s:
        for rel in [*SECRET_FILES, "link-to-env", "link-to-home/.aws/credentials"]:
            await s.call("read_file", path=rel)
            await s.call("read_file", path=rel, offset=0, length=64)
            await s.call("read_file", path=rel, encoding="base64")
            await s.call("get_file_info", path=rel)
            await s.call("outline", path=rel)
            await s.call("edit_file", path=rel, edits=[{"oldText": "secret", "newText": "x"}], dryRun=True)
        await s.call("read_multiple_files", paths=list(SECRET_FILES))
        await s.call("batch_operations", operations=[{"tool": "read_file", "arguments": {"path": rel}} for rel in SECRET_FILES[:10]])
        await s.call("patch_apply", patch=patch, dryRun=True)
        for how in ({"directory": "."}, {"globs": ["**/*"]}, {"directory": ".", "includeIgnored": True, "contextLines": 3}):
            await s.call("grep_files", regex="secret|MARK", caseInsensitive=True, **how)
        await s.call("grep_files", regex="secret", directory="link-to-home")
        await s.call("search_files", nameContains="e")
        await s.call("glob_search", globs=["**/*"])
        await s.call("list_directory", path=".", recursive=True)
        await s.call("directory_tree", path=".")
        await s.call("compress_files", paths=["."], output="out/all.tar")
        await s.call("list_archive", archive="out/all.tar")
        await s.call("read_file", path="out/all.tar", encoding="base64")
        await s.call("extract_archive", archive="out/all.tar", destination="restored")
        await s.call("grep_files", regex="secret", directory="restored")
        await s.call("copy_file", source="home", destination="home-copy")
        await s.call("grep_files", regex="secret", directory="home-copy")
        await s.call("watch_file", path=".", recursive=True)
        await s.call("list_changes")
        for tool, arguments in PROGRAM_CALLS:
            await s.call(tool, **arguments)
    said = "\n".join([*s.texts, *(_decoded(t) for t in s.texts)])
    found = sorted(rel for rel, marker in markers.items() if marker in said)
    if policy == "on":
        assert found == []
        assert (top / "out" / "all.tar").exists() and MARK.encode() not in (top / "out" / "all.tar").read_bytes()
    else:
        assert found == sorted(SECRET_FILES)


def _decoded(text: str) -> str:
    """What base64 runs in ``text`` (a read with encoding base64) hold, as Latin-1."""
    out = []
    for run in re.findall(r"[A-Za-z0-9+/]{16,}={0,2}", text):
        try:
            out.append(base64.b64decode(run + "=" * (-len(run) % 4)).decode("latin-1"))
        except ValueError:
            pass
    return "\n".join(out)
