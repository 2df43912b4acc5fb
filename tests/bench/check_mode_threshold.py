"""scripts/bench-ab's mode_threshold against bench/turns_modes.c's, on the same floors.

usage: check_mode_threshold.py SOURCE_DIR CHECK_TURNS_MODES

bench-ab splits its --turns cycles into the machine's latency modes with a Python copy of the rule
`uform bench --turns` applies in C. Both are fed the same floor batches: recorded shapes (a fast
mode near 140 ns, a slow one of 550-610 ns, outliers, too few cycles) and a few hundred random ones
drawn around them; their thresholds must agree (None in Python where C says 0 or -1).
"""
import importlib.machinery
import importlib.util
import random
import subprocess
import sys

source, checker = sys.argv[1], sys.argv[2]
loader = importlib.machinery.SourceFileLoader("bench_ab", f"{source}/scripts/bench-ab")
spec = importlib.util.spec_from_loader("bench_ab", loader)
bench_ab = importlib.util.module_from_spec(spec)
loader.exec_module(bench_ab)

rng = random.Random(20261202)
vectors = [
    [570, 141, 612, 139, 580, 150, 598, 560, 146, 565, 138, 605],
    [540, 600, 650, 700, 760, 820, 880, 940],
    [140, 145, 570, 580, 600, 610, 590, 575],
    [140, 142, 145, 148, 560, 570, 580],
    [140, 142, 145, 148, 150, 560, 570],
    [560, 570, 575, 580, 590, 600, 610, 620, 1000, 1300, 2000],
    [140, 145, 570, 580, 600],
    [140, 145, 150, 550, 560, 570, 900, 910, 920],
]
for _ in range(300):
    slow = [rng.uniform(540, 940) for _ in range(rng.randint(0, 60))]
    fast = [rng.uniform(120, 260) for _ in range(rng.choice([0, 1, 2, 3, 4, 10, 30]))]
    hiccups = [rng.uniform(900, 3000) for _ in range(rng.choice([0, 0, 1, 3, 5]))]
    vectors.append(rng.sample(slow + fast + hiccups, len(slow) + len(fast) + len(hiccups)))

text = "".join(" ".join(f"{v:.6f}" for v in vector) + "\n" for vector in vectors)
answer = subprocess.run([checker, "--stdin"], input=text, capture_output=True, text=True, check=True).stdout.split()
assert len(answer) == len(vectors), f"{len(answer)} answers for {len(vectors)} lines"
splits = disagreements = 0
for vector, c_text in zip(vectors, answer):
    c_value = float(c_text)
    python = bench_ab.mode_threshold([float(f"{v:.6f}") for v in vector])
    agree = (python is None and c_value <= 0) or (python is not None and abs(python - c_value) <= 1e-6 * c_value)
    splits += python is not None
    if not agree:
        disagreements += 1
        print(f"DISAGREE: C {c_value}, Python {python}: {vector}")
print(f"check_mode_threshold: {len(vectors)} floors, {splits} split into two modes, {disagreements} disagreements")
sys.exit(1 if disagreements or not splits or splits == len(vectors) else 0)
