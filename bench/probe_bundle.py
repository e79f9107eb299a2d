#!/usr/bin/env python3
"""Probe bundles: the sm_90 wgmma tiles with one part of the kernel left out,
to time the rest (research/perf-notes.md, v34). Run HERE (the LLVM machine):

    python3 bench/probe_bundle.py neither nowait noproducts
    python3 bench/probe_bundle.py pronly nowait --tuning wg=2,bn=128

edits the templates, rebuilds the gatejit tool, precompiles the sweep spec into
.device/sweep-probe<NAME>.gjb, then restores the templates and rebuilds the
tool (also when a step fails). bench/mma_sweep.py times probe* bundles
without checking their results, which are wrong by design. The parts:

  nowait      no stage is waited for after the prologue's, none is refilled:
              the products run on whatever the stages hold (products only)
  noproducts  no wgmma: the stages are copied and waited for (copies only)
  noepilogue  no epilogue (the K split's meeting stays unless nosplit)
  nosplit     no K-split meeting
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TEMPLATES = REPO / "templates"


def template_file(name: str) -> Path:
    """A template by its file name: names are unique across the role folders."""
    return next(TEMPLATES.rglob(name))

# (template, text in it, replacement) per part: each edit must match exactly
# once, so a template change that breaks a probe fails loudly here.
EDITS = {
    "nowait": [
        ("async_copy_sm90_tma.mlir",
         "      %bar = func.call @stage_barrier_address(%bars, %slot) : (i64, index) -> i64\n"
         "      func.call @wait_barrier(%bar, %parity) : (i64, i32) -> ()\n",
         "      %bar = func.call @stage_barrier_address(%bars, %slot) : (i64, index) -> i64\n"
         "      %ahead = arith.constant ${STAGES_AHEAD} : index\n"
         "      %first = arith.cmpi ult, %i, %ahead : index\n"
         "      scf.if %first {\n"
         "        func.call @wait_barrier(%bar, %parity) : (i64, i32) -> ()\n"
         "      }\n"),
        ("async_copy_sm90_tma.mlir",
         "      scf.if %wg_first {\n        %count = func.call @slot_counter_address",
         "      %never = arith.constant false\n"
         "      %wg_first_p = arith.andi %wg_first, %never : i1\n"
         "      scf.if %wg_first_p {\n        %count = func.call @slot_counter_address"),
    ],
    "noproducts": [
        ("tile_products_wgmma.mlir",
         "      %d4 = func.call @wgmma_stage(%w_a, %h_a, %d0) : (i64, i64, ${ACC}) -> ${ACC}\n"
         "      return %d4 : ${ACC}\n",
         "      return %d0 : ${ACC}\n"),
    ],
    "noepilogue": [
        ("mma_tiled.mlir", "      scf.if %done#1 {\n",
         "      %no_epilogue = arith.constant false\n"
         "      %done_p = arith.andi %done#1, %no_epilogue : i1\n"
         "      scf.if %done_p {\n"),
    ],
    "nosplit": [
        ("mma_tiled.mlir", "      %split_k = arith.constant ${SPLIT_K}\n", "      %split_k = arith.constant false\n"),
    ],
}


def run(cmd: list[str], env: dict | None = None) -> None:
    subprocess.run(cmd, cwd=REPO, check=True, env=env, stdout=subprocess.DEVNULL)


def main() -> int:
    # A kill by SIGTERM also restores the templates (the finally below).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    p = argparse.ArgumentParser()
    p.add_argument("name")
    p.add_argument("parts", nargs="+", choices=sorted(EDITS))
    p.add_argument("--tuning", default="", help="GATEJIT_MMA_TUNING for the bundle")
    p.add_argument("--build", default="build")
    args = p.parse_args()
    tool = REPO / args.build / "compiler" / "gatejit"
    touched = {name: template_file(name).read_text() for part in args.parts for name, _, _ in EDITS[part]}
    try:
        text = dict(touched)
        for part in args.parts:
            for name, old, new in EDITS[part]:
                if text[name].count(old) != 1:
                    raise SystemExit(f"probe {part}: its text is not in templates/{name} exactly once")
                text[name] = text[name].replace(old, new)
        for name, t in text.items():
            template_file(name).write_text(t)
        run(["ninja", "-C", args.build, "gatejit"])
        env = dict(os.environ, GATEJIT_MMA_TUNING=args.tuning)
        run([str(tool), "precompile", "bench/mma_sweep_spec.json", "--targets", "sm_90", "--no-generic",
             "-o", f".device/sweep-probe{args.name}.gjb"], env)
    finally:
        for name, t in touched.items():
            template_file(name).write_text(t)
        # The tool is rebuilt from the restored templates; a failure here is
        # reported on its own and does not hide the one that got us here.
        if subprocess.run(["ninja", "-C", args.build, "gatejit"], cwd=REPO, stdout=subprocess.DEVNULL).returncode:
            print("probe_bundle: the templates are restored, but rebuilding the tool failed", file=sys.stderr)
    print(f".device/sweep-probe{args.name}.gjb")
    return 0


if __name__ == "__main__":
    sys.exit(main())
