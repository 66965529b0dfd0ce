"""The module-level imports of compiled code, read the slow way (``dis.get_instructions``,
which decodes every version's jumps itself): what ``precompile.imports_of`` must agree with."""

from __future__ import annotations

import dis
import inspect
from types import CodeType
from typing import Any


def by_dis(code: CodeType) -> list[tuple[str, int, list[str]]]:
    """``(name, level, fromlist)`` of each import of ``code`` and its class bodies, those
    under ``if TYPE_CHECKING:`` left out."""
    found: list[tuple[str, int, list[str]]] = []
    todo = [code]
    while todo:
        co = todo.pop()
        last: list[Any] = []
        until = -1
        for ins in dis.get_instructions(co):
            if ins.opname == "EXTENDED_ARG":
                continue
            if (ins.opname == "IMPORT_NAME" and ins.offset >= until and len(last) == 2
                    and all(i.opname == "LOAD_CONST" for i in last)):
                names = last[1].argval if isinstance(last[1].argval, tuple) else ()
                found.append((ins.argval, last[0].argval,
                              [n for n in names if n != "*"]))
            elif ("IF_FALSE" in ins.opname and last and last[-1].argval == "TYPE_CHECKING"
                  and last[-1].opname.startswith("LOAD_")):
                until = ins.argval
            last = [*last[-1:], ins]
        todo += [c for c in co.co_consts if isinstance(c, CodeType)
                 and not c.co_flags & inspect.CO_OPTIMIZED]
    return found
