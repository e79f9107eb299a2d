#!/usr/bin/env python3
"""What each kernel of a sweep bundle was really built with: M, the tuning
the planner settled on and the grid, one line per kernel. A tuning override
that the planner's fit rules change (stages that do not fit the blocks per
SM asked for, an impossible tile) still builds, so read this before reading
a sweep row (research/perf-notes.md, v33a).

    build/compiler/gatejit inspect --json .device/sweep-NAME.gjb | python3 bench/sweep_tuning.py NAME
"""
import json
import re
import sys


def main() -> int:
    name = sys.argv[1] if len(sys.argv) > 1 else "bundle"
    rows = []
    for kernel in json.load(sys.stdin):
        m = int(re.search(r"\bm_max=(\d+)", kernel["contract"]).group(1))
        report = kernel["report"]
        tuning = " ".join(f"{k}={v}" for k, v in sorted(report.get("tuning", {}).items()))
        rows.append((m, f"{name} M={m}: {tuning} grid={report.get('grid')}"))
    for _, line in sorted(rows):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
