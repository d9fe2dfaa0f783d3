"""Recomputes rig.monitor.wada's G table (WADA-SNR: G of Gamma(0.4) speech in Gaussian noise
at -20 to 100 dB), prints it as the module's source, and exits 1 when it differs from the
constant in the module by more than 1e-7.

    python benchmarks/wada_table.py
"""

from __future__ import annotations

import sys

from rig.monitor.wada import G_TABLE, compute_g_table


def source(table: tuple[float, ...], per_line: int = 8) -> str:
    rows = [", ".join(f"{g:.8f}" for g in table[i:i + per_line])
            for i in range(0, len(table), per_line)]
    return "G_TABLE: tuple[float, ...] = (\n" + ",\n".join(f"    {r}" for r in rows) + ",\n)"


def main() -> int:
    table = compute_g_table()
    print(source(table))
    worst = (max(abs(a - b) for a, b in zip(table, G_TABLE, strict=True))
             if len(G_TABLE) == len(table) else float("inf"))
    print(f"largest difference from rig.monitor.wada.G_TABLE: {worst:.2e}", file=sys.stderr)
    return 0 if worst <= 1e-7 else 1


if __name__ == "__main__":
    sys.exit(main())
