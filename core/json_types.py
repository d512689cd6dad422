"""Names for JSON-shaped data: what ``json.loads`` returns and ``json.dumps`` takes (stored meta and traces, HTTP
payloads of the remote backends, evaluation reports and rows). Such data is read by key and checked where it is
used, so its values stay untyped here, in one place, rather than in every signature that passes it on.
A leaf module: it imports nothing of Shelfwise, and all of the core may import it."""

from __future__ import annotations

from typing import Any, TypeAlias

JSONObject: TypeAlias = dict[str, Any]  # one JSON object (a row, a payload, a report)
JSONValue: TypeAlias = Any  # any JSON value (an object, a list, a string, a number, true/false, null)

__all__ = ["JSONObject", "JSONValue"]
