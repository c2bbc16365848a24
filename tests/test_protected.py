"""The protected-names matcher, the fsmcp_protected_globs hook and the secrets plugin's options."""

from __future__ import annotations

import subprocess
import sys
import types as pytypes
import unicodedata

import pytest

from fsmcp import Access, Refusal, hookimpl
from fsmcp.builtin.secrets import DEFAULT_GLOBS
from fsmcp.run.host import HostError
from fsmcp.paths.protected import ProtectedNames
from fsmcp.testing import host_for

DEFAULTS = ProtectedNames(DEFAULT_GLOBS)


@pytest.mark.parametrize(
    "relpath",
    [
        ".env", "app/.env", ".env.local", "deploy/.env.production", "server.pem", "tls/server.KEY", "id_rsa",
        "home/.ssh/id_ed25519", "id_ecdsa_sk", ".netrc", "_netrc", ".npmrc", ".pypirc", ".aws/credentials",
        "me/.aws/credentials", ".docker/config.json", ".kube/config", "vault.kdbx", ".git-credentials",
        "cert.p12", ".gnupg/private-keys-v1.d/x.key", ".gnupg/pubring.kbx",
        # Case and Unicode spellings of the same names.
        ".ENV", ".Env", "ＩＤ_ＲＳＡ", "\uff0e\uff45\uff4e\uff56", ".AWS/Credentials", unicodedata.normalize("NFD", "clé.pem"),
    ],
)
def test_default_globs_protect(relpath):
    assert DEFAULTS.matches(relpath)


@pytest.mark.parametrize(
    "relpath",
    [".env.example", "a/.env.sample", ".env.template", "id_rsa.pub", "id_ed25519.pub", ".envrc", "env", "README.md",
     ".aws/config", "docs/.kube/notes.md", "keys.txt", "credentials"],
)
def test_default_globs_leave_alone(relpath):
    assert not DEFAULTS.matches(relpath)


def test_gitignore_rules_anchor_negate_and_cover_directories():
    names = ProtectedNames(["/top.txt", "conf/*.yaml", "vault", "*.log", "!keep.log"])
    assert names.matches("top.txt") and not names.matches("sub/top.txt")
    assert names.matches("conf/a.yaml") and not names.matches("x/conf/a.yaml") and not names.matches("conf/d/a.yaml")
    assert names.matches("vault/deep/file.txt") and names.matches("a/vault")
    assert names.matches("x.log") and not names.matches("sub/keep.log")
    assert not ProtectedNames([]) and not ProtectedNames(["!x"]).matches("x")
    composed = ProtectedNames([unicodedata.normalize("NFC", "clé.txt")])
    assert composed.matches(unicodedata.normalize("NFD", "CLÉ.txt"))


def test_rg_globs_exclude_what_is_protected_and_never_whitelist():
    names = ProtectedNames([".env", "!.env.example", "conf/*.yaml", "**/.aws/credentials"])
    assert names.rg_globs() == ["--iglob", "!.env", "--iglob", "!/conf/*.yaml", "--iglob", "!**/.aws/credentials"]


def test_rg_globs_leave_out_a_rule_a_later_one_re_includes_part_of():
    # ripgrep would never search .env.example under "!.env.*": that rule is not passed.
    names = ProtectedNames([".env", ".env.*", "!.env.example", "id_rsa*", "*.pem", "!id_rsa*.pub", "*.log", "!keep[0-9].log", "x\\*y", "!x?y"])
    assert names.rg_globs() == ["--iglob", "!.env", "--iglob", "!*.pem"]


def test_the_host_combines_every_plugins_globs_per_root(root, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    extra = pytypes.SimpleNamespace()

    @hookimpl
    def fsmcp_protected_globs(root: str) -> list[str]:
        return ["*.secret"] if root == str(other.resolve()) else []

    extra.fsmcp_protected_globs = fsmcp_protected_globs
    host = host_for([root, other], [("extra", extra)])
    assert host.path_policy.protected(other.resolve()).matches("x.secret") and host.path_policy.protected(other.resolve()).matches(".env")
    assert not host.path_policy.protected(root.resolve()).matches("x.secret") and host.path_policy.protected(root.resolve()).matches("a/.env")
    assert host.path_policy.is_protected(other.resolve() / "d" / "x.secret") and not host.path_policy.is_protected(root.resolve() / "a.txt")
    assert host.path_policy.protected(root.resolve()) is host.path_policy.protected(root.resolve())


def test_options_add_remove_and_per_root(root, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    options = {"add": ["*.secret"], "remove": ["*.key"], "roots": {str(other): {"enabled": False}}}
    host = host_for([root, other], plugins={"secrets": options})
    mine = host.path_policy.protected(root.resolve())
    assert mine.matches("a.secret") and not mine.matches("a.key") and mine.matches(".env")
    assert not host.path_policy.protected(other.resolve())


def test_a_root_inherits_and_extends_the_global_options(root, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    options = {"add": ["*.secret"], "roots": {str(other): {"add": ["*.tfstate"], "remove": [".npmrc"]}}}
    host = host_for([root, other], plugins={"secrets": options})
    theirs = host.path_policy.protected(other.resolve())
    assert theirs.matches("a.secret") and theirs.matches("a.tfstate") and not theirs.matches(".npmrc")
    assert not host.path_policy.protected(root.resolve()).matches("a.tfstate")


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"remove": ["*.nope"]}, "no default glob"),
        ({"add": "*.x"}, "add must be a list of globs"),
        ({"allow_write": "yes"}, "allow_write must be true or false"),
        ({"colour": 1}, "unknown option"),
        ({"roots": {"/nowhere": {}}}, "names no root"),
        ({"roots": {"relative": {}}}, "names no root"),
        ({"roots": {"ROOT": {"frobnicate": True}}}, "unknown option"),
    ],
)
def test_wrong_options_stop_the_start(root, options, problem):
    if "roots" in options and "ROOT" in options["roots"]:
        options = {"roots": {str(root): options["roots"]["ROOT"]}}
    with pytest.raises(HostError, match=problem):
        host_for([root], plugins={"secrets": options})


def test_wrong_options_exit_2_and_fsmcp_plugins_shows_the_policy(root, tmp_path):
    config = tmp_path / "fsmcp.toml"
    config.write_text('[plugins.secrets]\nremove = ["*.nope"]\n')
    run = subprocess.run([sys.executable, "-m", "fsmcp", "plugins", "--config", str(config), str(root)], capture_output=True, text=True)
    assert run.returncode == 2 and "[plugins.secrets]" in run.stderr
    shown = subprocess.run([sys.executable, "-m", "fsmcp", "plugins", str(root)], capture_output=True, text=True, check=True).stdout
    assert any(line.split()[:3] == ["secrets", "built", "in"] and line.endswith("default") for line in shown.splitlines())
    config.write_text('disable = ["secrets"]\n')
    shown = subprocess.run([sys.executable, "-m", "fsmcp", "plugins", "--config", str(config), str(root)], capture_output=True, text=True, check=True).stdout
    assert any(line.startswith("secrets") and line.endswith("disabled") for line in shown.splitlines())


def test_a_refused_read_may_be_put_to_the_user_a_refused_change_not(root):
    (root / ".env").write_text("TOKEN=1\n")
    host = host_for([root])
    secrets = host.pm.get_plugin("secrets")
    env = str(root.resolve() / ".env")
    read = secrets.fsmcp_check_path(path=host.roots.confine(".env", Access.READ), access=Access.READ, named=env)
    write = secrets.fsmcp_check_path(path=host.roots.confine(".env", Access.WRITE), access=Access.WRITE, named=env)
    assert isinstance(read, Refusal) and read.ask == f"The agent wants to read {env}" and "secrets policy" in read
    assert isinstance(write, Refusal) and write.ask is None and "[plugins.secrets]" in write
