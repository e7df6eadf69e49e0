"""``logsleuth patterns``: list, show, test and check the pattern packs."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from logsleuth.cli.examples import epilog
from logsleuth.cli.options import (
    ColorMode, ColorOpt, ConfigOpt, DateOpt, LayoutOpt, LayoutPatternOpt, NoConfigOpt, PatternsOpt, TzOpt, read_options,
    set_view,
)

app = typer.Typer(help="List, show, test and check pattern packs.", no_args_is_help=True, rich_markup_mode=None)


@app.command("list", epilog=epilog("patterns list"))
def patterns_list(patterns: PatternsOpt = None, color: ColorOpt = ColorMode.auto, config: ConfigOpt = None, no_config: NoConfigOpt = False) -> None:
    """Every pack and its patterns: id, event, severity, versions."""
    set_view(color=color)
    from logsleuth.recognise.packs import load_packs
    from logsleuth.render import patterns as view

    view.listing(load_packs(patterns))


@app.command("show", epilog=epilog("patterns show"))
def patterns_show(
    pattern_id: Annotated[str, typer.Argument(help="A pattern id (see 'logsleuth patterns list').", metavar="ID")],
    patterns: PatternsOpt = None,
    color: ColorOpt = ColorMode.auto,
    config: ConfigOpt = None,
    no_config: NoConfigOpt = False,
) -> None:
    """One pattern: its regex, scope, versions, fields and samples."""
    set_view(color=color)
    from logsleuth.recognise.packs import load_packs
    from logsleuth.render import patterns as view

    packs = load_packs(patterns)
    view.show(packs, packs.pattern(pattern_id))


@app.command("test", epilog=epilog("patterns test"))
def patterns_test(
    paths: Annotated[Optional[list[str]], typer.Argument(help="Log files, or - (the default) for stdin.", show_default=False, metavar="PATH")] = None,
    patterns: PatternsOpt = None,
    tz: TzOpt = None,
    date: DateOpt = None,
    layout: LayoutOpt = None,
    layout_pattern: LayoutPatternOpt = None,
    color: ColorOpt = ColorMode.auto,
    config: ConfigOpt = None,
    no_config: NoConfigOpt = False,
) -> None:
    """For each record: which pattern matched (or none) and the fields it extracted. Exit 0 if any matched."""
    set_view(color=color)
    from logsleuth.recognise.packs import load_packs
    from logsleuth.recognise.patterntest import run_test

    opts = read_options(tz, date, layout, layout_pattern)
    matched = run_test(paths or ["-"], opts, load_packs(patterns))
    raise typer.Exit(0 if matched else 1)


@app.command("check", epilog=epilog("patterns check"))
def patterns_check(
    directory: Annotated[Optional[Path], typer.Argument(help="A directory of your packs to check with the built-in ones (default: only the built-in packs).", show_default=False, metavar="DIR")] = None,
    color: ColorOpt = ColorMode.auto,
    config: ConfigOpt = None,
    no_config: NoConfigOpt = False,
) -> None:
    """Validate packs: regexes (Rust engine), field names, ids, and every sample. Exit 2 on a problem."""
    set_view(color=color)
    from logsleuth.recognise.packcheck import check_layout_samples, check_pattern_samples, check_stamp_samples, check_wrapper_samples
    from logsleuth.recognise.packs import load_packs, pack_problems

    def fail_on(problems: list[str]) -> None:  # every problem, one line each, then exit 2
        if problems:
            for p in problems:
                print(f"logsleuth: error: {p}", file=sys.stderr)
            raise typer.Exit(2)

    if directory is not None:
        fail_on(pack_problems(directory))  # every broken pack, not just the first
    packs = load_packs([directory] if directory else None)
    only = [p for pack in packs.packs if directory and Path(pack.source).parent.resolve() == directory.resolve() for p in pack.patterns] if directory else None
    fail_on(check_layout_samples() + check_wrapper_samples() + check_stamp_samples() + check_pattern_samples(packs, only))
    n_pat = len(only) if only is not None else len(packs.patterns)
    n_samples = sum(len(p.samples) for p in (only if only is not None else packs.patterns))
    print(f"ok: {n_pat} patterns, {n_samples} samples checked" + (f" in {directory}" if directory else f" in {len(packs.packs)} built-in packs"))


@app.command("fields", epilog=epilog("patterns fields"))
def patterns_fields(color: ColorOpt = ColorMode.auto, config: ConfigOpt = None, no_config: NoConfigOpt = False) -> None:
    """The canonical field vocabulary every pack uses."""
    set_view(color=color)
    from logsleuth.recognise.packs import load_vocabulary
    from logsleuth.render import patterns as view

    view.fields(load_vocabulary())


@app.command("layouts", epilog=epilog("patterns layouts"))
def patterns_layouts(color: ColorOpt = ColorMode.auto, config: ConfigOpt = None, no_config: NoConfigOpt = False) -> None:
    """The built-in layouts (how a line wraps its message) and their regexes."""
    set_view(color=color)
    from logsleuth.ingest.layouts.catalog import builtin_layouts
    from logsleuth.render import patterns as view

    view.layouts(list(builtin_layouts()))
