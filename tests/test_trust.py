"""Configuration you did not write is not trusted (docs/robustness.md): a ./logsleuth.toml shipped in
a log bundle runs no command, replaces no pattern and hides no finding, and says so on stderr; the
same file is used in full when it is yours and your own config trusts its directory, or when you
name it with --config."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from conftest import SAMPLES, run_on_pty, run_process

HOSTILE_PACK = '''
id = "bundle-pack"
system = "pulsar"
description = "replaces the broker's rejection line with one that never matches"

[[pattern]]
id = "pulsar.broker.producer-already-present"
event = "producer_already_present"
severity = "warning"
versions = "none"
regex = 'NEVER-PRINTED (?P<connection>\\S+) (?P<producer_id>\\d+) (?P<topic>\\S+)'

  [[pattern.sample]]
  line = "10:12:01.231 [x] WARN  a.B - NEVER-PRINTED /1.2.3.4:5 0 persistent://a/b/c"
  fields = { connection = "/1.2.3.4:5", producer_id = 0, topic = "persistent://a/b/c" }
'''


def _bundle(tmp_path: Path) -> tuple[Path, Path]:
    bundle = tmp_path / "bundle"
    shutil.copytree(SAMPLES / "pulsar-incident", bundle)
    marker = tmp_path / "ran"
    (bundle / "packs").mkdir()
    (bundle / "packs" / "p.toml").write_text(HOSTILE_PACK)
    (bundle / "logsleuth.toml").write_text(
        f'pager = "touch {marker}; cat"\npatterns = ["packs"]\nignore = ["pulsar.*"]\ntz = "UTC"\n'
        f'trust = ["{tmp_path}"]\n'
    )
    return bundle, marker


def _env(tmp_path: Path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LOGSLEUTH_")}
    env.update(TZ="UTC", COLUMNS="80", LINES="24", PAGER="cat", XDG_CONFIG_HOME=str(tmp_path / "home-config"), **extra)
    return env


def test_a_bundles_config_runs_no_command_and_hides_no_finding(tmp_path):
    bundle, marker = _bundle(tmp_path)
    code, seen = run_on_pty("analyze", ".", env=_env(tmp_path), stdout=True, stderr=True, cwd=bundle)
    text = seen.decode("utf-8", "replace")
    assert code == 0, text
    assert not marker.exists(), "the bundle's pager ran"
    assert "logsleuth.toml: a config file in the current directory" in text and "ignored pager, patterns, ignore, trust" in text
    assert "pulsar.dangling-producer-future" in text  # the finding is there: no pack replaced, nothing ignored
    assert "replace built-in patterns" not in text
    # piped, the same: the findings of the built-in packs, the warning on stderr
    r = run_process("analyze", ".", "--format", "json", cwd=bundle, env=_env(tmp_path))
    assert r.code == 0 and "ignored pager, patterns, ignore, trust" in r.err
    assert "pulsar.dangling-producer-future" in [f["id"] for f in r.json()["findings"]] and r.json()["summary"]["ignored"] == 0


def test_your_own_config_can_trust_the_directory(tmp_path):
    bundle, marker = _bundle(tmp_path)
    own = tmp_path / "home-config" / "logsleuth"
    own.mkdir(parents=True)
    (own / "config.toml").write_text(f'trust = ["{bundle}"]\n')
    r = run_process("analyze", ".", "--format", "json", cwd=bundle, env=_env(tmp_path))
    assert r.code == 0, r
    assert "ignored pager" not in r.err
    # its packs and ignores are in effect now, and said: the replaced pattern on stderr and in the report
    assert "your packs replace built-in patterns: pulsar.broker.producer-already-present" in r.err
    doc = r.json()
    assert doc["summary"]["ignored"] >= 1 and not [f for f in doc["findings"] if f["id"].startswith("pulsar.")]
    code, seen = run_on_pty("analyze", ".", "--ignore", "nothing.*", env=_env(tmp_path), stdout=True, stderr=True, cwd=bundle)
    assert code == 0 and marker.exists(), seen.decode("utf-8", "replace")[-2000:]  # its pager ran: trusted


def test_naming_the_file_is_trusting_it(tmp_path):
    bundle, marker = _bundle(tmp_path)
    r = run_process("analyze", ".", "--format", "json", "--config", "logsleuth.toml", cwd=bundle, env=_env(tmp_path))
    assert r.code == 0 and "ignored pager" not in r.err, r
    assert "your packs replace built-in patterns: pulsar.broker.producer-already-present" in r.err
    assert r.json()["summary"]["ignored"] >= 1
    # the postmortem names the replaced pattern among its notes
    out = tmp_path / "pm.md"
    r = run_process("report", ".", "-o", out, "--config", "logsleuth.toml", cwd=bundle, env=_env(tmp_path))
    assert r.code == 0, r
    assert "built-in patterns replaced by your packs: pulsar.broker.producer-already-present" in out.read_text(encoding="utf-8")
