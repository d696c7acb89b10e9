"""Wall time of the parametric suite against the fixed-size proofs it replaces.

    python bench/bench_parametric.py [--skip-scaling]

1. the full parametric suite (`spec.parametric.prove.run(lifecycle=True)`: core 6 variants x 3
   properties, lifecycle 10 properties of `final` + 8 known-bad pairs), fresh process state,
   default jobs (up to 2 processes); then the core and the lifecycle halves alone;
2. the fixed-size proof of `final` at 2 agents / 2 updaters / 2 lookups: checking the stored
   Houdini invariant (`spec.induction.verify_stored`), and the whole `spec.prove.prove_variant`
   (invariant, implication, witnesses by BMC);
3. what the fixed-size proof costs when the size grows: Houdini at (3,2,2) and (3,3,3), where no
   stored invariant exists (capped; a capped run prints `>= cap`);
4. (without --skip-scaling) the fixed-size lifecycle proofs of `final` at 2 agents / 2 contexts /
   2 tools / 3 dispatches (`spec.lifecycle.prove.prove_variant`, stored Houdini invariant).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def timed(fn):  # type: ignore[no-untyped-def]
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def cpu() -> float:
    """CPU seconds of this process and of its finished workers (the pool's processes): on a
    shared machine the wall time depends on the neighbours, the CPU time much less."""
    import resource

    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--skip-scaling", action="store_true", help="skip the (3,2,2)/(3,3,3) Houdini runs")
    ap.add_argument("--cap", type=float, default=60.0, help="seconds per fixed-size scaling run")
    args = ap.parse_args()

    from spmcheck.spec.induction import houdini, verify_stored
    from spmcheck.spec.model import Model
    from spmcheck.spec.parametric.prove import render_text, run
    from spmcheck.spec.properties import PROPERTIES
    from spmcheck.spec.prove import inv_file, prove_variant
    from spmcheck.spec.vocabulary import Config
    from spmcheck.spec.z3_encoding import Transition

    print(f"cores: {os.cpu_count()}  load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    c0 = cpu()
    results, t_par = timed(lambda: run(lifecycle=True))
    c1 = cpu()
    print(render_text(results), end="")
    ok = all(r.matches for r in results)
    ncore = sum(r.model == "core" for r in results)
    print(f"parametric suite ({ncore} core + {len(results) - ncore} lifecycle pairs, any size): {t_par:.2f} s wall, "
          f"{c1 - c0:.2f} s CPU  all verdicts as expected: {ok}")
    _, t_core = timed(lambda: run())
    c2 = cpu()
    lres, t_lc = timed(lambda: run(core=False, lifecycle=True))
    c3 = cpu()
    print(f"  core half alone: {t_core:.2f} s wall, {c2 - c1:.2f} s CPU; lifecycle half alone: {t_lc:.2f} s wall, "
          f"{c3 - c2:.2f} s CPU (per pair, summed: {sum(r.seconds for r in lres):.2f} s)")

    cfg = Config(2, 2, 2)
    model = Model(cfg, "final")
    names = [ln.strip() for ln in inv_file(model).read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    inv, t_verify = timed(lambda: verify_stored(model, Transition(model, ints="int"), names, 120))
    _, t_prove = timed(lambda: prove_variant("final", list(PROPERTIES), cfg, 120))
    fin = [r for r in results if r.variant == "final" and r.model == "core"]
    t_final_param = sum(r.seconds for r in fin)
    print(f"fixed-size final {cfg.describe()}: verify stored invariant ({len(names)} conjuncts) "
          f"{t_verify:.2f} s [{inv.status}]; prove_variant {t_prove:.2f} s")
    print(f"parametric final (3 properties, CPU in its worker): {t_final_param:.2f} s  "
          f"ratio parametric/fixed-size prove_variant: {t_final_param / t_prove:.2f}  "
          f"full parametric suite / fixed-size final prove_variant: {t_par / t_prove:.2f}")

    if not args.skip_scaling:
        for big in (Config(3, 2, 2), Config(3, 3, 3)):
            m = Model(big, "final")
            (res, t_h) = timed(lambda: houdini(m, Transition(m, ints="int"), args.cap))
            cap = f">= {args.cap:.0f} s (capped)" if res.status != "inductive" else f"{t_h:.2f} s"
            print(f"fixed-size final {big.describe()}: Houdini {cap} [{res.status}, {len(res.kept)} conjuncts]"
                  f"  vs parametric final {t_final_param:.2f} s (covers every size)")
        from spmcheck.spec.lifecycle.properties import CORE_LPROPS
        from spmcheck.spec.lifecycle.prove import prove_variant as prove_lifecycle
        from spmcheck.spec.lifecycle.vocabulary import LConfig

        lcfg = LConfig(2, 2, 2, 3)
        lfix, t_lfix = timed(lambda: prove_lifecycle("final", CORE_LPROPS, lcfg, 300))
        lpar = sum(r.seconds for r in results if r.model == "lifecycle" and r.variant == "final")
        print(f"fixed-size lifecycle final {lcfg.describe()}: {t_lfix:.2f} s "
              f"[{', '.join(sorted({r.verdict for r in lfix}))}]  vs parametric lifecycle final {lpar:.2f} s "
              f"(covers every size)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
