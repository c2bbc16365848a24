"""Fixtures for the archive plugin's tests: real files in tmp_path, the archive plugin alone under
fsmcp.testing's fixtures (``root``, ``outside``, ``server``: the SDK's real client in process)."""

from __future__ import annotations

import io
import tarfile
import zipfile

import fsmcp_archive.hooks
import pytest
from fsmcp.testing import host_for, tree_of

PLUGIN = ("archive", fsmcp_archive.hooks)


@pytest.fixture
def fsmcp_plugins():
    return [PLUGIN]


def make_host(*roots, limits: dict | None = None, **settings):
    return host_for(roots, [PLUGIN], plugins={"archive": limits or {}}, **settings)


@pytest.fixture
def server(server):
    """``async with server(*roots, limits={...}, **settings) as s``: fsmcp.testing's ``server``,
    ``limits`` the archive plugin's options."""

    def open_session(*roots, limits: dict | None = None, **settings):
        return server(*roots, plugins={"archive": limits or {}}, **settings)

    return open_session


def zip_bytes(members: list[tuple[str | zipfile.ZipInfo, bytes]], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return buf.getvalue()


def tar_bytes(members: list[tuple[tarfile.TarInfo, bytes | None]], mode: str = "w") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode, format=tarfile.PAX_FORMAT) as tf:
        for info, data in members:
            if data is not None:
                info.size = len(data)
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def tar_info(name: str, kind: bytes = tarfile.REGTYPE, linkname: str = "", mode: int = 0o644) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, linkname, mode
    return info


class Kit:
    """Archive builders and the tree snapshot, for tests (which cannot import this module)."""

    tree = staticmethod(tree_of)
    zip = staticmethod(zip_bytes)
    tar = staticmethod(tar_bytes)
    info = staticmethod(tar_info)
    host = staticmethod(make_host)


@pytest.fixture
def kit() -> type[Kit]:
    return Kit
