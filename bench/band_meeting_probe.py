"""What a band meeting costs at the end of a streaming kernel (issue 20).

An fp8 out quantised per group of 128 columns needs each group's maximum,
and a group's columns are computed by several workgroups, so they must meet
once their values are out: each stages its values, counts itself in with an
atomic, and the last one re-reads the group and finishes it. This probe
times that meeting without any gate arithmetic around it: a streaming read
of the same bytes (bench/read_floor.py's program shapes, each program's
bytes as one load), in the same CUDA graphs, with three endings:

  read       each program writes its one result (a plain streaming read)
  arrive     + the result staged, then an acq_rel arrival atomic per program
             into its group's counter (the last resets it)
  meet       + the group's last program re-reads the group's staged results
             and writes their maximum (the fp8 out's whole meeting)

Groups: 12 (N = 1536 / 128 bands at M = 1), the programs of the read split
evenly among them. The difference meet - read is a floor under what any
one-kernel fp8 out with several workgroups a band adds over a 16-bit out.

    PYTHONPATH=python python3 bench/band_meeting_probe.py --out probe.json
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from gatejit.graph_timing import MIN_SETS, ROTATE_BYTES, GraphTimer  # noqa: E402

MODES = ("read", "arrive", "meet")
# (int32 elements a load block, blocks a program, warps): read_floor.py's fastest shapes
SHAPES = ((2048, 4, 8), (4096, 2, 8), (4096, 4, 8))


def _kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def read_meet(src, stage, counters, out, n, per_group, MODE: tl.constexpr, BLOCK: tl.constexpr,
                  ITERS: tl.constexpr, GROUP_P2: tl.constexpr):
        # The program's BLOCK x ITERS int32 as one load (all in flight).
        pid = tl.program_id(0)
        offs = pid.to(tl.int64) * (BLOCK * ITERS) + tl.arange(0, BLOCK * ITERS)
        v = tl.sum(tl.load(src + offs, mask=offs < n, other=0), axis=0)
        if MODE == 0:
            tl.store(out + pid, v)
        else:
            tl.store(stage + pid, v)
            tl.debug_barrier()
            g = pid // per_group
            first = g * per_group
            size = tl.minimum(per_group, tl.num_programs(0) - first)
            before = tl.atomic_add(counters + g, 1, sem="acq_rel", scope="gpu")
            if before == size - 1:
                if MODE == 2:
                    lanes = tl.arange(0, GROUP_P2)
                    vals = tl.load(stage + first + lanes, mask=lanes < size, other=0, volatile=True)
                    tl.store(out + g, tl.max(vals, axis=0))
                tl.atomic_xchg(counters + g, 0, sem="relaxed", scope="gpu")

    return read_meet


def main() -> int:
    import torch

    parser = argparse.ArgumentParser()
    parser.add_argument("--bytes", type=int, default=(1 * 7168 + 1536 * 7168 + 1536 + 1536) * 2,
                        help="bytes read (default: the N = 1536, K = 7168, M = 1 gate's)")
    parser.add_argument("--groups", type=int, default=12)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    device = torch.device("cuda")
    timer = GraphTimer(torch, device)
    timer.warm_clocks()
    kernel = _kernel()
    n = max(4, (args.bytes + 15) // 16 * 4)
    sets = max(MIN_SETS, math.ceil(ROTATE_BYTES / (4 * n)))
    srcs = [torch.ones(n, dtype=torch.int32, device=device) for _ in range(sets)]
    rows = []
    for block, iters, warps in SHAPES:
        programs = math.ceil(n / (block * iters))
        per_group = math.ceil(programs / args.groups)
        p2 = triton_next_pow2(per_group)
        stages = [torch.zeros(programs, dtype=torch.int32, device=device) for _ in range(sets)]
        counters = [torch.zeros(args.groups, dtype=torch.int32, device=device) for _ in range(sets)]
        outs = [torch.zeros(programs, dtype=torch.int32, device=device) for _ in range(sets)]
        row = {"shape": f"{block}x{iters}/{warps}w", "programs": programs, "per_group": per_group}
        for mode, name in enumerate(MODES):
            for o in outs:
                o.zero_()  # what the check reads after "meet" was written by "meet" alone
            def call(i, mode=mode):
                kernel[(programs,)](srcs[i], stages[i], counters[i], outs[i], n, per_group, MODE=mode, BLOCK=block,
                                    ITERS=iters, GROUP_P2=p2, num_warps=warps)
            row[name + "_us"], _ = timer.measure(call, sets)
        # The meeting really met: every group's maximum is the staged sum of a full program.
        torch.cuda.synchronize()
        full = block * iters
        got = outs[0][: args.groups].cpu()
        if not bool((got == full).all()) or int(counters[0].abs().sum()) != 0:
            print(f"probe check failed for {row['shape']}: maxima {got.tolist()}, counters {counters[0].tolist()}")
            return 1
        row["arrive_over_read_us"] = row["arrive_us"] - row["read_us"]
        row["meet_over_read_us"] = row["meet_us"] - row["read_us"]
        rows.append(row)
        print(f"{row['shape']}: {programs} programs, {per_group} a group: read {row['read_us']:.2f} µs, "
              f"arrive {row['arrive_us']:.2f} (+{row['arrive_over_read_us']:.2f}), "
              f"meet {row['meet_us']:.2f} (+{row['meet_over_read_us']:.2f})")
    best = min(rows, key=lambda r: r["read_us"])
    summary = {"device": torch.cuda.get_device_name(device), "bytes": args.bytes, "groups": args.groups,
               "rows": rows, "fastest_read": best["shape"],
               "meet_over_read_us": best["meet_over_read_us"],
               "meet_over_read_ratio": best["meet_us"] / best["read_us"]}
    print(f"fastest read {best['shape']}: the meeting adds {best['meet_over_read_us']:.2f} µs "
          f"({summary['meet_over_read_ratio']:.3f}x the read)")
    if args.out:
        Path(args.out).write_text(json.dumps(summary, indent=1))
    return 0


def triton_next_pow2(x: int) -> int:
    return 1 << max(0, (x - 1).bit_length())


if __name__ == "__main__":
    sys.exit(main())
