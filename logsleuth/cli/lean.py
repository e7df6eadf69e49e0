"""Option values coerced without pydantic, for the kinds of options logsleuth has.

typer coerces every parameter of the command that runs through a pydantic ``TypeAdapter`` built
for it: importing pydantic and building ~30 adapters is ~0.1 CPU-s of every run, more than reading
a small log. Here each parameter gets a lean coercion instead, for the annotations logsleuth uses
(``str``, ``bool``, ``int``, an ``Enum`` of choices, ``Path``, a list of those) and for values whose
result is certain (a string for ``str``, a bool for a flag, plain decimal digits within the bounds
for ``int``, a choice that is one of the choices, a non-empty path). Anything else (a bad value, an
annotation or option feature not covered here) goes to typer's own pydantic coercion, built then:
so the results and the error messages are typer's, and pydantic is imported only when they are
needed. If typer's internals are not the ones this was written for, nothing is changed.
"""

from __future__ import annotations

import re
from enum import Enum
from pathlib import Path
from typing import Any, get_args, get_origin

_DIGITS = re.compile(r"(?:0|[1-9][0-9]{0,17})")
_installed = False


def install() -> None:
    """Give typer's parameters the lean coercion (once; a no-op when typer's internals differ)."""
    global _installed
    if _installed:
        return
    _installed = True
    try:
        from dataclasses import dataclass

        from typer import core as tcore
        from typer._coercion import RuntimeParam, build_runtime_param
        from typer._param_types import coerce_cli_choice, coerce_cli_path

        param_cls = tcore._TyperParameter
        original = param_cls.get_runtime_param
        if not hasattr(param_cls, "process_value"):
            return
    except (ImportError, AttributeError):  # pragma: no cover - another typer
        return

    @dataclass(frozen=True)
    class LeanRuntimeParam(RuntimeParam):  # type: ignore[misc]
        leaf: Any = None  # item -> value, or _NO when typer must decide
        is_list: bool = False
        descriptor: Any = None
        typer_param: list = None  # type: ignore[assignment]  # [typer's RuntimeParam], built on first need

        def _typer(self) -> Any:
            if not self.typer_param:
                self.typer_param.append(build_runtime_param(self.descriptor))
            return self.typer_param[0]

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            if self.is_list:
                items = value if isinstance(value, (list, tuple)) else [value]
                out = [self.leaf(item, param, ctx) for item in items]
                if not any(x is _NO for x in out):
                    return out
            else:
                out = self.leaf(value, param, ctx)
                if out is not _NO:
                    return out
            return self._typer()._coerce_value(value, param=param, ctx=ctx)

    def leaf_for(annotation: Any, info: Any) -> Any:
        """item -> coerced item (or _NO) for one annotation, or None when not covered."""
        if info.parser is not None or getattr(info, "formats", None):
            return None
        if annotation is str:
            return lambda v, _p, _c: v if type(v) is str else _NO
        if annotation is bool:
            return lambda v, _p, _c: v if type(v) is bool else _NO
        if annotation is int:
            lo, hi, clamp = info.min, info.max, info.clamp

            def to_int(v: Any, _p: Any, _c: Any) -> Any:
                if type(v) is int:
                    n = v
                elif type(v) is str and _DIGITS.fullmatch(v):
                    n = int(v)
                else:
                    return _NO
                if (lo is not None and n < lo) or (hi is not None and n > hi):
                    return _NO  # clamped or refused: typer's way
                return n

            return to_int
        if isinstance(annotation, type) and issubclass(annotation, Enum):
            choices = tuple(annotation)
            case_sensitive = info.case_sensitive

            def to_choice(v: Any, _p: Any, ctx: Any) -> Any:
                try:
                    return coerce_cli_choice(v, choices=choices, case_sensitive=case_sensitive, ctx=ctx)
                except ValueError:
                    return _NO

            return to_choice
        if isinstance(annotation, type) and issubclass(annotation, Path):
            path_type = info.path_type
            if path_type is None:
                path_type = annotation
            if not (isinstance(path_type, type) and issubclass(path_type, Path)):
                return None

            def to_path(v: Any, param: Any, ctx: Any) -> Any:
                if isinstance(v, path_type):
                    pass
                elif type(v) is str and v and "\0" not in v and _encodable(v):
                    v = path_type(v)
                else:
                    return _NO
                return coerce_cli_path(v, info, path_type=path_type, param=param, ctx=ctx)

            return to_path
        return None

    def get_runtime_param(self: Any) -> Any:
        if self._runtime_param is None:
            lean = None
            try:
                desc = self.type_descriptor
                ann, info = desc.annotation, desc.parameter_info
                if desc.file_annotation is None:
                    is_list = get_origin(ann) is list
                    if is_list:
                        args = get_args(ann)
                        ann = args[0] if len(args) == 1 and get_origin(args[0]) is None else None
                    leaf = leaf_for(ann, info) if ann is not None else None
                    if leaf is not None:
                        lean = LeanRuntimeParam(parameter_info=info, annotation=desc.annotation, leaf=leaf, is_list=is_list,
                                                descriptor=desc, typer_param=[])
            except Exception:  # pragma: no cover - typer's own way then
                lean = None
            if lean is None:
                return original(self)
            self._runtime_param = lean
        return self._runtime_param

    param_cls.get_runtime_param = get_runtime_param


class _No:
    def __repr__(self) -> str:
        return "<typer decides>"


_NO: Any = _No()


def _encodable(name: str) -> bool:
    """Can the system name this path (a lone surrogate cannot be encoded: typer's own coercion,
    which says so in one line, takes it)?"""
    import os

    try:
        os.fsencode(name)
    except UnicodeEncodeError:
        return False
    return True
