"""What a front end may start before it has imported the rest of Shelfwise: light on purpose (the standard library
only, at import), so that the work it starts runs while the rest is imported.

``preload_library_encoder(db, requested)``: the sentence encoder a question on the library at ``db`` will be
embedded with starts loading on a thread of its own (``core/models/encoders/preload.py``); the question takes it
when it is the file it asks for, else loads its own as before.
"""

from __future__ import annotations

from shelfwise.core.models.encoders.preload import preload_library_encoder

__all__ = ["preload_library_encoder"]
