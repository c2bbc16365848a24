"""The hooks every tool call asks, called without pluggy's general machinery.

The path policy and the path vetoes are asked for every path a call names, the call's wrappers
and the result format once a call: pluggy's call checks the arguments against the spec and runs a loop ready for
wrappers, together more than the default implementations cost. A :class:`HotHook` calls the
plain implementations itself, in pluggy's order and with its result rules (the first non-None
answer for a ``firstresult`` hook, else every non-None answer); it hands the call to pluggy
when an implementation is a wrapper, and notices a plugin registered or removed since.
:func:`chosen` goes further for a hook whose answering implementation is settled at start
(the result format): that one implementation is called alone.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pluggy import HookCaller


class HotHook:
    def __init__(self, caller: HookCaller):
        self._caller = caller
        self._first = bool(caller.spec and caller.spec.opts.get("firstresult"))
        self._known: tuple[list[Any], list[tuple[Any, Any]] | None] = ([], None)
        """The implementations last seen, and how to call them (None: through pluggy); one
        value, so that a thread never pairs one list with another's plan."""

    def __call__(self, **kwargs: Any) -> Any:
        impls = self._caller.get_hookimpls()
        seen, plan = self._known
        if impls != seen:
            plain = not any(i.hookwrapper or i.wrapper for i in impls)
            plan = [(i.function, _arguments(i.argnames)) for i in reversed(impls)] if plain else None
            self._known = impls, plan
        if plan is None:
            return self._caller(**kwargs)
        answers = []
        for function, arguments in plan:
            answer = function(*arguments(kwargs))
            if answer is not None:
                if self._first:
                    return answer
                answers.append(answer)
        return None if self._first else answers


def chosen(caller: HookCaller, **probe: Any) -> Callable[..., Any]:
    """``caller``, a ``firstresult`` hook whose contract settles at start which implementation
    answers (the result format: the formatter the ``format`` setting names answers, the others
    return None), as the implementation that answers ``probe`` first, called alone. Should it
    ever return None, the whole hook answers that call; so does every call when a wrapper is
    among the implementations, or none answers the probe."""
    impls = caller.get_hookimpls()
    if any(i.hookwrapper or i.wrapper for i in impls):
        return caller
    for impl in reversed(impls):
        function, arguments = impl.function, _arguments(impl.argnames)
        if function(*arguments(probe)) is not None:

            def answer(**kwargs: Any) -> Any:
                out = function(*arguments(kwargs))
                return out if out is not None else caller(**kwargs)

            return answer
    return caller


def _arguments(names: tuple[str, ...] | list[str]) -> Any:
    """What takes an implementation's positional arguments out of the call's keywords, as a tuple."""
    if len(names) == 1:
        name = names[0]
        return lambda kwargs: (kwargs[name],)
    return itemgetter(*names) if names else lambda kwargs: ()
