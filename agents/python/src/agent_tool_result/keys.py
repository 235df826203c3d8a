"""Idempotency keys: one per logical action, kept across every retry of that action, and a
new one only for a new action (changed arguments, or the same arguments meant again)."""

from __future__ import annotations

import json
import uuid
from typing import Any


class IdempotencyKey(str):
    """A key of 1 to 255 printable ASCII characters, as the REST profile's ``Idempotency-Key``
    (an RFC 8941 string) and a guarantee tool's key argument take it."""

    __slots__ = ()

    def __new__(cls, value: str) -> IdempotencyKey:
        if not 1 <= len(value) <= 255 or not all(" " <= c <= "~" for c in value):
            raise ValueError("an idempotency key is 1 to 255 printable ASCII characters")
        return super().__new__(cls, value)

    @classmethod
    def new(cls) -> IdempotencyKey:
        """A fresh key, for a new logical action."""
        return cls(str(uuid.uuid4()))

    def header(self) -> str:
        """The ``Idempotency-Key`` field value: the key as an RFC 8941 string."""
        return '"' + self.replace("\\", "\\\\").replace('"', '\\"') + '"'


class Actions:
    """The keys of an agent's actions in flight: the same tool and arguments get the same key
    until the action is settled (its answer read and not to be retried), then a new one.

    >>> actions = Actions()
    >>> first = actions.key("send_sms", {"to": "+15550100"})
    >>> first == actions.key("send_sms", {"to": "+15550100"})  # a retry keeps its key
    True
    >>> actions.settle("send_sms", {"to": "+15550100"})
    >>> first == actions.key("send_sms", {"to": "+15550100"})  # a new action gets a new one
    False
    """

    def __init__(self) -> None:
        self._keys: dict[str, IdempotencyKey] = {}

    @staticmethod
    def _name(tool: str, arguments: Any) -> str:
        return tool + "\x00" + json.dumps(arguments, sort_keys=True, separators=(",", ":"))

    def key(self, tool: str, arguments: Any) -> IdempotencyKey:
        """The key of the action ``tool(arguments)``: the one it had, or a new one."""
        name = self._name(tool, arguments)
        if name not in self._keys:
            self._keys[name] = IdempotencyKey.new()
        return self._keys[name]

    def settle(self, tool: str, arguments: Any) -> None:
        """The action is done (or abandoned): the next call of it is a new action."""
        self._keys.pop(self._name(tool, arguments), None)
