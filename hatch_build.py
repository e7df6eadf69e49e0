"""Build hook: compiles the reading core (``rust/``, the extension module ``logsleuth._core``) with
cargo when the wheel is built, so ``pip install .`` on a machine with a Rust toolchain builds it.

Why a hatchling hook and not maturin as the backend: maturin cannot place the top-level
``patterns/`` and ``docs/findings/`` folders inside the package (``logsleuth/_patterns``,
``logsleuth/_docs/findings``), which hatchling's ``force-include`` does; the crate is plain cargo,
so ``maturin develop`` works on it too (rust/README.md).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

MODULE = "_core.abi3.so"


def _cargo() -> str:
    found = shutil.which("cargo")
    if found:
        return found
    home = Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo"))
    candidate = home / "bin" / "cargo"
    if candidate.is_file():
        return str(candidate)
    raise RuntimeError(
        "logsleuth: building the reading core needs a Rust toolchain (cargo and rustc; built here with 1.95): "
        "install it from https://rustup.rs and run pip again (the core is logsleuth's matcher: there is no install without it)"
    )


class CoreBuildHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict) -> None:
        if self.target_name != "wheel":
            return
        root = Path(self.root)
        env = dict(os.environ, PYO3_PYTHON=sys.executable)
        cmd = [_cargo(), "build", "--release", "--locked", "--manifest-path", str(root / "Cargo.toml")]
        target = Path(env.get("CARGO_TARGET_DIR") or root / "target")
        env["CARGO_TARGET_DIR"] = str(target)
        print("logsleuth: building the reading core:", " ".join(cmd), file=sys.stderr, flush=True)
        subprocess.run(cmd, check=True, env=env, cwd=root)
        built = target / "release" / ("lib_core.dylib" if sys.platform == "darwin" else "lib_core.so")
        # the module goes into the source tree too (gitignored): an editable install imports the
        # package from there, and so does anything run from the checkout (the tests, `python -m
        # logsleuth` in the clone): the matcher is compiled only, so a checkout without it cannot run
        local = root / "logsleuth" / MODULE
        tmp = local.with_suffix(".tmp")
        shutil.copyfile(built, tmp)
        tmp.replace(local)  # (a rename: a process that has the old module mapped keeps it)
        if version != "editable":
            build_data["force_include"][str(built)] = f"logsleuth/{MODULE}"
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
