#!/usr/bin/env python3
"""Splits a `perf script` of `tephra bench` into the phases of its scheduling cycles.

Every sample, on any thread, is charged to the phase the cycle's own thread was in at that
moment: work the pool steals runs on a worker whose stack no longer shows the phase, so stacks
alone would hand a parallel phase's second thread to nobody. Writes one folded-stack file per
phase (`<phase>.folded`, the input of `flamegraph.py` and of most flamegraph tools) and prints,
per phase, its CPU time and the functions it spends it in.

    phase_stacks.py PERF_SCRIPT_TXT OUT_DIR [--from-cycle N] [--to-cycle M] [--frequency HZ] [--top K]
"""

import argparse
import bisect
import collections
import os
import re
import sys

# The frame that marks a sample of the cycle's own thread, and how its frames name the phase.
CYCLE_FRAME = "bench::cycle::timed_cycle"
PHASE_FRAMES = [
    ("snapshot", re.compile(r"ClusterState::snapshot|SnapshotBuilder::build")),
    ("open", re.compile(r"framework::session::Session::open")),
    ("close", re.compile(r"framework::close::")),
]
ACTION_FRAME = re.compile(
    r"tephra_engine::actions::(enqueue|allocate|backfill|preempt|reclaim|shuffle|gangpreempt|"
    r"gangreclaim)::"
)
HEADER = re.compile(r"^\S.*?\s(\d+)\s+(\d+\.\d+):")
FRAME = re.compile(r"^\s+[0-9a-f]+\s+(.*?)(?:\s+\(.*\))?$")
OFFSET = re.compile(r"\+0x[0-9a-f]+$")


def samples(path):
    """(thread id, time, frames leaf first) of each sample."""
    tid, time, frames = None, None, []
    with open(path, errors="replace") as f:
        for line in f:
            if not line.strip():
                if tid is not None:
                    yield tid, time, frames
                tid, frames = None, []
                continue
            header = HEADER.match(line)
            if header:
                tid, time, frames = int(header.group(1)), float(header.group(2)), []
                continue
            frame = FRAME.match(line)
            if frame and tid is not None:
                frames.append(OFFSET.sub("", frame.group(1)))
    if tid is not None:
        yield tid, time, frames


def phase_of(frames):
    """The phase a sample of the cycle's thread is in, from its frames."""
    for name, pattern in PHASE_FRAMES:
        if any(pattern.search(f) for f in frames):
            return name
    for f in reversed(frames):
        action = ACTION_FRAME.search(f)
        if action:
            return action.group(1)
    return "other"


ORDER = [
    "snapshot", "open", "enqueue", "allocate", "backfill", "reclaim", "preempt", "shuffle",
    "gangpreempt", "gangreclaim", "close", "other",
]


def timeline(all_samples):
    """Intervals (start, end, cycle, phase) of the cycle's thread, cycles numbered from 1: a
    cycle begins where the phase goes back to an earlier one in ORDER (snapshot after close);
    "other" samples leave the count as it is."""
    marks = []
    for tid, time, frames in all_samples:
        if any(CYCLE_FRAME in f for f in frames):
            marks.append((time, phase_of(frames)))
    marks.sort()
    intervals, cycle, last_rank = [], 1, None
    for time, phase in marks:
        # Work of the cycle outside every phase (before the snapshot, after the close) neither
        # starts a cycle nor ends one.
        if phase != "other":
            rank = ORDER.index(phase)
            if last_rank is not None and rank < last_rank:
                cycle += 1
            last_rank = rank
        if intervals and intervals[-1][2:] == (cycle, phase):
            intervals[-1][1] = time
        else:
            intervals.append([time, time, cycle, phase])
    return intervals


def attribute(all_samples, intervals, slack):
    """Each sample's (cycle, phase): the interval its time falls in, allowing `slack` seconds
    (a sampling period) past either end; None for samples outside every cycle."""
    starts = [i[0] for i in intervals]
    for tid, time, frames in all_samples:
        at = bisect.bisect_right(starts, time + slack) - 1
        if at >= 0 and time <= intervals[at][1] + slack:
            yield intervals[at][2], intervals[at][3], frames
        else:
            yield None, None, frames


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("script")
    p.add_argument("out")
    p.add_argument("--from-cycle", type=int, default=1)
    p.add_argument("--to-cycle", type=int, default=10**9)
    p.add_argument("--frequency", type=float, default=999.0, help="perf record -F")
    p.add_argument("--top", type=int, default=12)
    a = p.parse_args()
    all_samples = list(samples(a.script))
    intervals = timeline(all_samples)
    if not intervals:
        sys.exit(f"{a.script}: no sample shows {CYCLE_FRAME}; is it a profile of `tephra bench`?")
    cycles = max(i[2] for i in intervals)
    folded = collections.defaultdict(collections.Counter)
    for cycle, phase, frames in attribute(all_samples, intervals, 1.5 / a.frequency):
        if cycle is not None and a.from_cycle <= cycle <= a.to_cycle:
            folded[phase][";".join(reversed(frames))] += 1
    os.makedirs(a.out, exist_ok=True)
    last = min(cycles, a.to_cycle)
    print(f"cycles {a.from_cycle}-{last} of {cycles}, CPU ms per cycle (all threads) at "
          f"{a.frequency:g} Hz")
    n = max(1, last - a.from_cycle + 1)
    ranked = sorted(folded, key=ORDER.index)
    for phase in ranked:
        stacks = folded[phase]
        with open(os.path.join(a.out, f"{phase}.folded"), "w") as f:
            for stack, count in sorted(stacks.items()):
                f.write(f"{stack} {count}\n")
        total = sum(stacks.values())
        inclusive, own = collections.Counter(), collections.Counter()
        for stack, count in stacks.items():
            frames = stack.split(";")
            for frame in set(frames):
                inclusive[frame] += count
            own[frames[-1]] += count
        print(f"\n{phase}: {total / a.frequency * 1000 / n:.1f} ms CPU per cycle ({total} samples)")
        print("  inclusive, tephra functions:")
        tephra = [
            (f, c)
            for f, c in inclusive.most_common()
            if f.startswith("tephra") and CYCLE_FRAME not in f
        ]
        for frame, count in tephra[: a.top]:
            print(f"    {100 * count / total:5.1f}%  {frame[:110]}")
        print("  self:")
        for frame, count in own.most_common(a.top // 2):
            print(f"    {100 * count / total:5.1f}%  {frame[:110]}")


if __name__ == "__main__":
    main()
