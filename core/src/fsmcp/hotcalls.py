"""The hooks every tool call asks, called without pluggy's general machinery.

The path policy and the path vetoes are asked for every path a call names, the result format
once a call: pluggy's call checks the arguments against the spec and runs a loop ready for
wrappers, together more than the default implementations cost. A :class:`HotHook` calls the
plain implementations itself, in pluggy's order and with its result rules (the first non-None
answer for a ``firstresult`` hook, else every non-None answer); it hands the call to pluggy
when an implementation is a wrapper, and notices a plugin registered or removed since.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pluggy import HookCaller


class HotHook:
    def __init__(self, caller: HookCaller):
        self._caller = caller
        self._first = bool(caller.spec and caller.spec.opts.get("firstresult"))
        self._impls: list[Any] = []
        self._plan: list[tuple[Any, tuple[str, ...]]] | None = None

    def __call__(self, **kwargs: Any) -> Any:
        impls = self._caller.get_hookimpls()
        if impls != self._impls:
            self._impls = impls
            plain = not any(i.hookwrapper or i.wrapper for i in impls)
            self._plan = [(i.function, tuple(i.argnames)) for i in reversed(impls)] if plain else None
        if self._plan is None:
            return self._caller(**kwargs)
        if self._first:
            for function, names in self._plan:
                answer = function(*[kwargs[n] for n in names])
                if answer is not None:
                    return answer
            return None
        answers = []
        for function, names in self._plan:
            answer = function(*[kwargs[n] for n in names])
            if answer is not None:
                answers.append(answer)
        return answers
