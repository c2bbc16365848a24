import pytest


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(autouse=True)
def _state_home(tmp_path_factory, monkeypatch):
    # The server's state (the change journal) goes to a tmp dir, for the servers tests start too:
    # no test writes to the user's real ~/.local/state.
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
