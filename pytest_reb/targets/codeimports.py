"""What a compiled module imports as it runs: read from its opcodes, shared by the host's
compile before an image's first stage (``precompile``, which follows these names) and the
compile after a stage (``bytecode.store``, which keeps them beside each object so another
image links it without compiling it again)."""

from __future__ import annotations

import contextlib
import dis
import inspect
import sys
from types import CodeType
from typing import Any


def imports_of(code: CodeType) -> list[tuple[str, int, list[str]]]:
    """``(name, level, fromlist)`` of each import that runs when ``code`` (a module) is
    executed: its own and its class bodies', not those of its functions (they run when
    called), nor those under ``if TYPE_CHECKING:`` (never at run time: on the demo image
    they would add 1,460 files to the 1,048 that ``import torch`` and the entrypoint need)."""
    found: list[tuple[str, int, list[str]]] = []
    todo = [code]
    while todo:
        co = todo.pop()
        if _IMPORT_NAME in co.co_code[::2]:  # the opcodes, not their arguments
            found += _imports(co)
        todo += [c for c in co.co_consts if isinstance(c, CodeType)
                 and not c.co_flags & inspect.CO_OPTIMIZED]  # class bodies, not functions
    return found


_IMPORT_NAME, _LOAD_CONST = dis.opmap["IMPORT_NAME"], dis.opmap["LOAD_CONST"]
_EXTENDED_ARG, _CACHE = dis.opmap["EXTENDED_ARG"], dis.opmap.get("CACHE", -1)
#: How the loads that can read ``TYPE_CHECKING`` name it: their argument, shifted this far.
_NAME_LOADS = {dis.opmap["LOAD_NAME"]: 0, dis.opmap["LOAD_GLOBAL"]: 1,
               dis.opmap["LOAD_ATTR"]: 1 if sys.version_info >= (3, 12) else 0}
_FORWARD_IF_FALSE = frozenset(op for name, op in dis.opmap.items()
                              if "IF_FALSE" in name and "BACKWARD" not in name
                              and op in dis.hasjrel)


def _caches(op: int) -> int:
    """The inline cache entries after opcode ``op`` (none before 3.11)."""
    entries: Any = getattr(dis, "_inline_cache_entries", None)
    with contextlib.suppress(LookupError, TypeError, ValueError):
        return int(entries[op] if isinstance(entries, list)
                   else entries.get(dis.opname[op], 0))
    return 0


def _imports(co: CodeType) -> list[tuple[str, int, list[str]]]:
    """The imports of one code object, each an ``IMPORT_NAME`` after its two constants,
    read straight from its opcodes (``dis.get_instructions`` took as long as compiling the
    sources), those after ``TYPE_CHECKING`` and a forward jump when false, up to its target,
    left out."""
    found: list[tuple[str, int, list[str]]] = []
    typing = {i for i, n in enumerate(co.co_names) if n == "TYPE_CHECKING"}
    raw, consts, ext, until, checks = co.co_code, [-1, -1], 0, -1, False
    for i in range(0, len(raw), 2):
        op, arg = raw[i], raw[i + 1] | ext
        ext = arg << 8 if op == _EXTENDED_ARG else 0
        if op in (_EXTENDED_ARG, _CACHE):
            continue
        if op == _IMPORT_NAME and -1 not in consts and i >= until:
            found += _import(co.co_names[arg], co.co_consts[consts[0]], co.co_consts[consts[1]])
        elif checks and op in _FORWARD_IF_FALSE:
            until = i + 2 + 2 * _caches(op) + 2 * arg
        consts = [consts[1], arg] if op == _LOAD_CONST else [-1, -1]
        checks = op in _NAME_LOADS and (arg >> _NAME_LOADS[op]) in typing
    return found


def _import(name: object, level: object, names: object) -> list[tuple[str, int, list[str]]]:
    if not isinstance(name, str) or not isinstance(level, int) or isinstance(level, bool):
        return []
    wanted = [n for n in names or () if isinstance(n, str) and n != "*"] \
        if isinstance(names, tuple) else []
    return [(name, level, wanted)]
