"""fsmcp.testing's fixtures (``root``, ``outside``, ``server``, ``call``) load this plugin alone."""

import pytest

from fsmcp_wordcount import hooks


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def fsmcp_plugins():
    return [("wordcount", hooks)]
