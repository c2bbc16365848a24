"""The hooks asked at every call, called directly: the same answers as pluggy's own call."""

from __future__ import annotations

import pluggy
import pytest

from fsmcp.run.runner import HotHook, chosen

spec = pluggy.HookspecMarker("hot")
impl = pluggy.HookimplMarker("hot")


class Specs:
    @spec(firstresult=True)
    def pick(self, x, y): ...

    @spec
    def gather(self, x, y): ...


def manager(*plugins: object) -> pluggy.PluginManager:
    pm = pluggy.PluginManager("hot")
    pm.add_hookspecs(Specs)
    for plugin in plugins:
        pm.register(plugin)
    return pm


class Plain:
    def __init__(self, name: str, answer=None):
        self.name, self.answer = name, answer

    @impl
    def pick(self, x):
        return None if self.answer is None else f"{self.name}:{self.answer}:{x}"

    @impl
    def gather(self, y):
        return None if self.answer is None else f"{self.name}:{y}"


class First:
    @impl(tryfirst=True)
    def pick(self, x, y):
        return f"first:{x}{y}"


class Wrapper:
    @impl(wrapper=True)
    def gather(self, x, y):
        result = yield
        return [*result, "wrapped"]


@pytest.mark.parametrize(
    "plugins",
    [
        [Plain("a", 1), Plain("b", 2)],
        [Plain("a"), Plain("b", 2), Plain("c")],
        [Plain("a", 1), First(), Plain("b", 2)],
        [Plain("a"), Plain("b")],
        [Plain("a", 1), Wrapper()],
        [],
    ],
)
def test_the_same_answers_as_pluggy_in_the_same_order(plugins):
    pm = manager(*plugins)
    for name in ("pick", "gather"):
        caller = getattr(pm.hook, name)
        assert HotHook(caller)(x=1, y=2) == caller(x=1, y=2)


def test_a_plugin_registered_or_removed_later_is_asked_or_not():
    pm = manager(Plain("a", 1))
    pick, gather = HotHook(pm.hook.pick), HotHook(pm.hook.gather)
    assert (pick(x=1, y=2), gather(x=1, y=2)) == ("a:1:1", ["a:2"])
    late = Plain("late", 9)
    pm.register(late)
    assert (pick(x=1, y=2), gather(x=1, y=2)) == ("late:9:1", ["late:2", "a:2"])
    pm.register(Wrapper())
    assert gather(x=1, y=2) == ["late:2", "a:2", "wrapped"]
    pm.unregister(late)
    assert pick(x=1, y=2) == "a:1:1"


def test_an_implementations_exception_comes_through_as_itself():
    class Broken:
        @impl
        def pick(self, x):
            raise KeyError("inside")

    with pytest.raises(KeyError, match="inside"):
        HotHook(manager(Broken()).hook.pick)(x=1, y=2)


class Format:
    """A formatter: answers for its own format only, and counts the calls it got."""

    def __init__(self, name: str):
        self.name, self.asked = name, 0

    @impl
    def pick(self, x, y):
        self.asked += 1
        return f"{self.name}:{y}" if x == self.name else None


class FirstFormat(Format):
    @impl(tryfirst=True)
    def pick(self, x, y):
        return super().pick(x, y)


def test_chosen_asks_only_the_implementation_that_answered_at_start():
    json, text, other = Format("json"), Format("text"), FirstFormat("other")
    pm = manager(json, text, other)
    pick = chosen(pm.hook.pick, x="text", y=0)
    before = (json.asked, text.asked, other.asked)
    assert [pick(x="text", y=i) for i in range(3)] == ["text:0", "text:1", "text:2"]
    assert (json.asked, text.asked, other.asked) == (before[0], before[1] + 3, before[2])
    assert [pm.hook.pick(x="text", y=i) for i in range(3)] == ["text:0", "text:1", "text:2"]


def test_chosen_asks_the_whole_hook_when_its_choice_declines_none_answers_or_a_wrapper_wraps():
    text, json = Format("text"), Format("json")
    pm = manager(json, text)
    pick = chosen(pm.hook.pick, x="text", y=0)
    assert pick is not pm.hook.pick
    assert pick(x="json", y=1) == "json:1"  # the chosen one declined: pluggy's whole call answers
    assert chosen(pm.hook.pick, x="none", y=0) is pm.hook.pick

    class Wrapping:
        @impl(hookwrapper=True)
        def pick(self, x, y):
            outcome = yield
            outcome.force_result(f"wrapped {outcome.get_result()}")

    pm.register(Wrapping())
    pick = chosen(pm.hook.pick, x="text", y=0)
    assert pick is pm.hook.pick and pick(x="text", y=5) == "wrapped text:5"
