"""
=========================================
Speed against scikit-learn's SGD: ratios
=========================================

``make bench`` times GA and a reference side by side in one process and keeps the
*ratio* (absolute times on a shared machine mean little). This example draws the
latest table of ``benchmarks/README.md``: each bar is GA's time over the reference's
(or, for the streaming and grid-search rows, the reference's over GA's, so that
higher is better there), next to its goal.
"""

import re
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

here = Path(__file__).resolve().parent if "__file__" in globals() else Path.cwd()
readme = (here.parent / "benchmarks" / "README.md").read_text()
# The latest results only: the earlier tables (other machines) follow them.
table = readme.split("## Latest results", 1)[1].split("\n## ", 1)[0]
rows = re.findall(
    r"^\| (\d\.\d? ?[^|]+?) \| [^|]+ \| ([^|]+?) [\d.]+(?: MiB)? \| ([\d.]+) \| "
    r"(<=|>=|<) ([\d.]+) \| (yes|NO) \|$", table, flags=re.MULTILINE)

labels = [f"{case} / {reference}" for case, reference, *_ in rows]
ratios = np.array([float(ratio) for _, _, ratio, *_ in rows])
goals = np.array([float(goal) for *_, goal, _ in rows])
met = np.array([flag == "yes" for *_, flag in rows])

fig, ax = plt.subplots(figsize=(10, 0.35 * len(rows) + 1))
positions = np.arange(len(rows))[::-1]
ax.barh(positions, ratios, color=np.where(met, "tab:green", "tab:red"))
ax.scatter(goals, positions, marker="|", s=300, color="black", label="goal")
ax.set_yticks(positions, labels, fontsize=7)
ax.set_xscale("log")
ax.set_xlabel("ratio (green: goal met, red: not met)")
ax.legend(loc="lower right")
fig.tight_layout()
plt.show()

print(f"{met.sum()} of {len(rows)} goals met")
