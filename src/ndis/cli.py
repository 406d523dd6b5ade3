"""The `ndis` command line: audits, exact spectra, mechanisms and reproductions.

This module is the only place that sees argparse: it turns options into plain arguments of the
library functions. Mistakes in the arguments (bad names, paths, parameters) print one line on
stderr and exit with code 2. Heavy libraries are imported inside the commands, so that
`ndis --help` and `ndis --version` answer at once.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

from ndis import __version__


class UsageError(ValueError):
    """A command-line mistake reported as one line."""


def parse_grid(text: str):
    """eps grid from 'start:stop:num' (inclusive, num points) or a comma-separated list."""
    import numpy as np

    try:
        if ":" in text:
            start, stop, num = text.split(":")
            if int(num) < 1:
                raise ValueError
            return np.linspace(float(start), float(stop), int(num))
        return np.array([float(v) for v in text.split(",")])
    except ValueError:
        raise UsageError(f"bad eps grid {text!r}: use START:STOP:NUM (e.g. 0:2:41) or a list like 0,0.5,1") from None


def parse_value(text: str):
    """'12' -> 12, '1e-5' -> 1e-05, 'true' -> True, anything else stays a string."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


def parse_params(items: list[str] | None) -> dict:
    """['r=1200', 'sigma=0.5'] -> {'r': 1200, 'sigma': 0.5}."""
    params = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"bad --param {item!r}: use KEY=VALUE (e.g. r=1200)")
        params[key.strip()] = parse_value(value.strip())
    return params


def parse_claimed(text: str | None):
    """'EPS,DELTA' -> (eps, delta), DELTA = 0 for pure DP; None stays None."""
    if text is None:
        return None
    try:
        eps, delta = (float(v) for v in text.split(","))
    except ValueError:
        raise UsageError(f"bad --claimed {text!r}: use EPS,DELTA (e.g. 1,1e-5, or 0.7,0 for pure DP)") from None
    return eps, delta


def claimed_curve_option(args, allow_point: bool = True):
    """The claim of --claimed EPS,DELTA, --claimed-curve PATH or --claimed-gdp MU (at most one), or None."""
    from ndis.auditor.statistics import claims

    given = [name for name in ("claimed", "claimed_curve", "claimed_gdp") if getattr(args, name, None) is not None]
    if len(given) > 1:
        raise UsageError(f"give one of --claimed, --claimed-curve, --claimed-gdp, not {len(given)}")
    if getattr(args, "claimed_curve", None) is not None:
        return claims.read_csv(args.claimed_curve)
    if getattr(args, "claimed_gdp", None) is not None:
        return claims.gaussian_dp(args.claimed_gdp)
    return parse_claimed(args.claimed) if allow_point else None


def parse_count(text: str) -> int:
    """A sample count: '200000', '2e5' or '1e6' -> int; anything that is not a whole number >= 1 fails."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value.is_integer() or value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number >= 1")
    return int(value)


def parse_row(text: str):
    """'0.5,1,2' -> [0.5, 1.0, 2.0] (a replacement row, or COLUMN,VALUE for the entry relation)."""
    try:
        return [float(v) for v in text.split(",")]
    except ValueError:
        raise UsageError(f"bad --replacement {text!r}: use comma-separated numbers, e.g. 0.5,1,2") from None


def _output_dir(path: str) -> pathlib.Path:
    """The output folder, created and checked for writability before any work is done."""
    out = pathlib.Path(path)
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".ndis-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as error:
        raise UsageError(f"cannot write to --out {path!r}: {error.strerror or error}") from None
    return out


def _neighbour_pair(args, data):
    """(D', neighbour spec) from --data-prime, --neighbor and --replacement."""
    import numpy as np

    from ndis.core import neighbors
    from ndis.experiments import datasets

    if args.data_prime is not None:
        if args.replacement is not None:
            raise UsageError("give either --data-prime or --replacement, not both")
        return datasets.load(args.data_prime), args.neighbor
    spec = args.neighbor or "remove:worst"
    relation, row = neighbors.parse(spec)
    if args.replacement is None:
        return None, spec
    if relation in neighbors.ROW_RELATIONS or not isinstance(row, int):
        raise UsageError("--replacement goes with --neighbor replace:ROW (a new row) or entry:ROW (COLUMN,VALUE)")
    values = parse_row(args.replacement)
    if relation == "entry":
        if len(values) != 2 or not float(values[0]).is_integer():
            raise UsageError("--neighbor entry:ROW takes --replacement COLUMN,VALUE")
        values = (int(values[0]), values[1])
    return neighbors.make(np.asarray(data), relation, row, values), relation


def print_table(columns: dict, rows: int = 11, stream=None) -> None:
    """A short fixed-width table of evenly spaced rows of the given columns."""
    import numpy as np

    n = len(next(iter(columns.values())))
    pick = np.unique(np.linspace(0, n - 1, min(rows, n)).round().astype(int))
    print("  ".join(f"{name:>12}" for name in columns), file=stream)
    for i in pick:
        print("  ".join(f"{float(values[i]):>12.5g}" for values in columns.values()), file=stream)


def _declared_kind(mech, kind: str | None):
    """The mechanism wrapped as --kind says (batched or per-sample), or unchanged without --kind."""
    from ndis import auditor

    if kind is None:
        return mech
    if not callable(mech) or callable(getattr(mech, "sample", None)) or callable(getattr(mech, "sampler", None)):
        raise UsageError("--kind applies to plug-in callables, not to mechanism objects")
    return auditor.batched(mech) if kind == "batched" else auditor.per_sample(mech)


def _neighbour_line(neighbor: dict, screen: dict | None) -> str:
    """How the neighbouring row was chosen, with the screen's cost."""
    text = f"{neighbor['relation']} row {neighbor['row']} ({neighbor['how']}"
    if screen and "skipped" in screen:
        text += f"; neighbour screen skipped: {screen['skipped']}"
    elif screen:
        text += (f" of rows {', '.join(map(str, screen['rows']))}: {screen['samples']:,} samples, "
                 f"{screen['seconds']:.1f} s")
    return text + ")"


def command_audit(args, stream=None) -> None:
    """`ndis audit`: audit, print the table, write report.json, spectrum.csv, spectrum.png and report.html."""
    from ndis.auditor import audit
    from ndis.auditor.reporting import html
    from ndis.experiments import datasets
    from ndis.mechanisms import resolve

    stream = stream or sys.stdout
    eps, params, claimed = parse_grid(args.eps), parse_params(args.param), claimed_curve_option(args)
    searching = args.neighbor == "search"
    if not searching and any(v is not None for v in (args.sensitivity, args.dimension, args.search_trials,
                                                     args.pilot_eps)):
        raise UsageError("--sensitivity, --dimension, --search-trials and --pilot-eps go with --neighbor search")
    if args.data is None and not searching:
        raise UsageError("--data is required (except with --neighbor search, which can start from StatDP's patterns)")
    out = _output_dir(args.out)
    mech = _declared_kind(resolve(args.mechanism, **params), args.kind)
    common = dict(eps=eps, seed=args.seed, scorer=args.scorer, features=args.features, alpha=args.alpha,
                  claimed=claimed, n_jobs=args.jobs, backend=args.backend, method=args.method,
                  scheduler=args.scheduler, progress=None)
    if searching:
        report = _audit_search(args, mech, common)
    else:
        data = datasets.load(args.data)
        data_prime, neighbor = _neighbour_pair(args, data)
        report = audit(mech, data, data_prime, n_samples=args.samples, neighbor=neighbor,
                       screen_fraction=args.screen_fraction, sequential=args.sequential, **common)
    report.info["data"] = args.data
    if args.data_prime is not None:
        report.info["data_prime"] = args.data_prime
    report.info["command"] = " ".join(sys.argv)
    report.to_json(out / "report.json")
    report.to_frame().to_csv(out / "spectrum.csv", index=False)
    neighbor = report.info["neighbor"]
    where = (f"the searched pair D = {neighbor['D']}, D' = {neighbor['D_prime']}" if searching else
             f"{args.data} ({neighbor['relation']} row {neighbor['row']}")
    title = f"{report.info['mechanism']} on {where}, {args.samples} samples per side{'' if searching else ')'}"
    figure = report.plot(title=title)
    png = html.render_png(figure)  # drawn and rendered once, for spectrum.png and report.html
    out.mkdir(parents=True, exist_ok=True)
    (out / "spectrum.png").write_bytes(png)
    report.to_html(out / "report.html", title=title, figure=figure, png=png)
    seconds = report.info["timings"]["total"]
    if searching:
        search = report.info["pair_search"]
        print(f"{report.info['mechanism']}: pair search, {search['n_trials']} trials x {search['samples_per_pilot']:,} "
              f"samples per side; {search['reason']}; final audit on {search['final']['samples_per_side']:,} samples "
              f"per side of D = {neighbor['D']}, D' = {neighbor['D_prime']}, scorer {report.info['scorer']}, "
              f"{seconds:.1f} s", file=stream)
    else:
        print(f"{report.info['mechanism']} on {args.data}: {_neighbour_line(neighbor, report.info['screen'])}, "
              f"scorer {report.info['scorer']}, {seconds:.1f} s", file=stream)
    columns = {"eps": report.eps, "delta": report.delta, "lower": report.delta_lower, "floor": report.floor}
    if report.theory is not None:
        columns["theory"] = report.theory
    print_table(columns, stream=stream)
    if report.verdict is not None:
        print(report.verdict, file=stream)
    if report.claim is not None:
        print(report.claim, file=stream)
    for certificate in report.certificates:
        print(certificate, file=stream)
    if note := report.disagreement:
        print(f"note: {note}", file=stream)
    if report.gdp is not None:
        print(report.gdp, file=stream)
    if "sequential" in report.info:
        print(f"sequential: {report.info['samples_used']:,} of {args.samples:,} samples per side used; "
              f"{report.info['sequential']['reason']}", file=stream)
    seed = report.info["seed"]["entropy"]
    print(f"seed {seed} (--seed {seed} re-runs this audit exactly)", file=stream)
    print(f"wrote {out / 'report.json'}, {out / 'spectrum.csv'}, {out / 'spectrum.png'}, {out / 'report.html'}",
          file=stream)


def _audit_search(args, mech, common):
    """`ndis audit --neighbor search`: the pair search (`auditor.pair_search`) from StatDP's patterns of
    --dimension K, or from the pair --data / --data-prime, then the final audit."""
    from ndis.auditor.pair_search import audit_search
    from ndis.experiments import datasets

    if args.replacement is not None:
        raise UsageError("--replacement does not go with --neighbor search")
    if (args.data is None) != (args.data_prime is None):
        raise UsageError("with --neighbor search, --data and --data-prime give the start pair: give both or neither "
                         "(then StatDP's patterns of --dimension K start the search)")
    start = None if args.data is None else (datasets.load(args.data), datasets.load(args.data_prime))
    if common["claimed"] is not None and not isinstance(common["claimed"], tuple):
        raise UsageError("--neighbor search tests a claimed (eps, delta): use --claimed EPS,DELTA")
    if common["method"] != "threshold":
        raise UsageError("--neighbor search goes with --method threshold")
    if args.sequential:
        raise UsageError("--sequential audits a given pair (--data and --data-prime), not --neighbor search")
    return audit_search(mech, common.pop("claimed"), dimension=args.dimension, sensitivity=args.sensitivity,
                        start=start, n_samples=args.samples, fraction=args.screen_fraction,
                        n_trials=args.search_trials, pilot_eps=args.pilot_eps, **common)


def command_theory(args) -> None:
    """`ndis theory`: the exact spectrum of a Gaussian-output mechanism on a dataset; with a claimed
    curve, where the exact curve exceeds it (no sampling)."""
    import numpy as np

    from ndis import mechanisms, theory
    from ndis.auditor.statistics import claims
    from ndis.experiments import datasets
    from ndis.experiments.plotting import plot_curves

    eps, params = parse_grid(args.eps), parse_params(args.param)
    claim = claimed_curve_option(args, allow_point=False)
    out = _output_dir(args.out)
    D = datasets.load(args.data)
    if args.mechanism in mechanisms.names():
        mechanism, params = mechanisms.get(args.mechanism, **params), {}
    else:
        mechanism = args.mechanism
    rows = args.rows if args.rows in ("worst", "all") else [int(v) for v in args.rows.split(",")]
    started = time.perf_counter()
    result = theory.spectrum(mechanism, D, eps, neighbor=args.neighbor, rows=rows, **params)
    elapsed = time.perf_counter() - started
    curves = {"max": result.delta, "forward": result.forward, "reverse": result.reverse}
    table = np.column_stack([eps, result.delta, result.forward, result.reverse, result.row])
    np.savetxt(out / "spectrum.csv", table, delimiter=",", header="eps,delta,forward,reverse,row",
               comments="", fmt=["%.10g", "%.17g", "%.17g", "%.17g", "%d"])
    label = "exact" if result.exact else "asymptotic normal"
    title = f"{result.mechanism} on {args.data} ({args.neighbor} row {result.worst_row}; {label})"
    plot_curves(out / "spectrum.png", eps, curves, title, scale=args.scale)
    summary = {
        "command": " ".join(sys.argv), "mechanism": result.mechanism, "data": args.data,
        "n_rows": int(D.shape[0]), "neighbor": args.neighbor, "worst_row": result.worst_row,
        "law": label, "seconds": elapsed, "details": result.details,
    }
    columns = {"eps": eps, "delta": result.delta, "forward": result.forward, "reverse": result.reverse}
    found = None
    if claim is not None:
        found = claims.exceeds(claim, eps, result.delta)
        summary["claim"] = found
        columns["claimed"] = claim(eps)
    (out / "theory.json").write_text(json.dumps(summary, indent=2, default=float))
    print(f"{title}: {D.shape[0]} rows scanned in {elapsed:.2f} s")
    print_table(columns)
    if found is not None:
        print(claims.describe_exceeds(found) + ("" if result.exact else
                                                 " (the asymptotic normal law's curve, not the exact one)"))
    print(f"wrote {out / 'spectrum.csv'}, {out / 'spectrum.png'}, {out / 'theory.json'}")


def command_mechanisms(args) -> None:
    """`ndis mechanisms`: one line per registered scheme; `ndis mechanisms NAME`: its parameters."""
    from ndis import mechanisms

    described = mechanisms.describe()
    if args.name is None:
        width = max(map(len, described))
        for name, text in described.items():
            print(f"{name:<{width}}  {text.splitlines()[0]}")
        print("\n`ndis mechanisms NAME` shows a scheme's parameters.")
        return
    if args.name not in described:
        raise UsageError(f"unknown mechanism {args.name!r}; known mechanisms: {', '.join(described)}")
    print(f"{args.name}: {described[args.name]}")


def command_reproduce(args) -> None:
    """`ndis reproduce`: a figure or table of the source papers."""
    from ndis.experiments import reproduce

    if args.list or not args.name:
        for name, (_, description) in reproduce.REPRODUCTIONS.items():
            print(f"{name:24s} {description}")
        return
    record = reproduce.run(args.name, out=args.out, quick=args.quick, seed=args.seed)
    folder = pathlib.Path(args.out) / args.name
    print((folder / "results.md").read_text())
    print(f"wrote {folder} ({record['seconds']:.1f} s)")


def _add_audit_arguments(parser) -> None:
    parser.add_argument("mechanism", help="a registered mechanism name (see `ndis mechanisms`) or module.path:callable")
    parser.add_argument("--param", action="append", metavar="KEY=VALUE", help="mechanism parameter (repeatable)")
    parser.add_argument("--data", help="flights[:ROWS], cancer:PATH, song:PATH, synthetic:..., or a CSV (required, "
                        "except with --neighbor search)")
    parser.add_argument("--data-prime", metavar="NAME_OR_PATH",
                        help="the neighbouring dataset D' itself (checked against --neighbor when given)")
    parser.add_argument("--neighbor", default=None,
                        help="RELATION[:ROWS]: remove|zero|replace|entry, ROWS = worst, random or an index "
                             "(default remove:worst; with --data-prime: the mechanism's declared relation); or "
                             "search: search the pair of query vectors (with --sensitivity, --dimension)")
    parser.add_argument("--screen-fraction", type=float, default=0.2, metavar="F",
                        help="share of the sample budget the remove:worst row screen, or the pair search's pilots, "
                             "may spend (default 0.2; 0 = no screen, the largest-leverage row)")
    parser.add_argument("--sensitivity", type=float, metavar="S",
                        help="--neighbor search: every query answer moves by at most S (in the mechanism's norm; "
                             "default its declared sensitivity)")
    parser.add_argument("--dimension", type=int, metavar="K",
                        help="--neighbor search: the number of query answers (StatDP's patterns of K queries start "
                             "the search)")
    parser.add_argument("--search-trials", type=int, default=None, metavar="N",
                        help="--neighbor search: pilot audits, StatDP's patterns first, then Optuna's TPE (default: "
                             "as many as the pilots' share allows at 2,000 samples per side, at most 24)")
    parser.add_argument("--pilot-eps", type=float, default=None, metavar="EPS",
                        help="--neighbor search: the eps at which the pilot audits rank the pairs (default the "
                             "claimed eps; 0: the total variation distance, better at small claimed eps)")
    parser.add_argument("--kind", choices=("batched", "per-sample"),
                        help="the plug-in's calling convention, f(data, n, rng) or f(data, rng) (default: "
                             "from its signature)")
    parser.add_argument("--replacement", metavar="VALUES",
                        help="the new row for --neighbor replace:ROW (comma-separated), or COLUMN,VALUE for entry:ROW")
    parser.add_argument("--eps", default="0:2:41", help="eps grid START:STOP:NUM or a comma list (default 0:2:41)")
    parser.add_argument("--samples", type=parse_count, default=10**6, help="samples per side (default 1e6)")
    parser.add_argument("--seed", type=int, default=None,
                        help="random seed (default: fresh entropy, printed and recorded in report.json)")
    parser.add_argument("--scorer", default="auto", help="auto (default), quadratic, knn, mlp, boosting, density, spline, segments")
    parser.add_argument("--features", default="auto", help="auto (default), flatten, gram, float-grid")
    parser.add_argument("--method", default="threshold", choices=("threshold", "eureka"),
                        help="threshold (default: one score, whole curve) or eureka (the papers' estimator)")
    parser.add_argument("--alpha", type=float, default=0.05, help="1 - confidence of the bounds (default 0.05)")
    parser.add_argument("--sequential", action="store_true",
                        help="with a claim and --data-prime: spend --samples in rounds that stop as soon as the claim "
                             "is refuted or going on is futile (valid at --alpha over the stopping time)")
    parser.add_argument("--claimed", metavar="EPS,DELTA",
                        help="test a claimed (eps, delta), e.g. 1,1e-5, or 0.7,0 for pure DP; the certified "
                             "eps_lo is also printed at the claimed delta")
    _add_claim_arguments(parser)
    parser.add_argument("--jobs", type=int, default=1, help="parallel sampling workers (default 1; -1 = all cores)")
    parser.add_argument("--backend", default="loky", choices=("loky", "dask"), help="loky (default) or dask")
    parser.add_argument("--scheduler", help="Dask scheduler address (default: an in-process LocalCluster)")
    parser.add_argument("--out", default="ndis-out/audit", help="output directory (default ndis-out/audit)")


def _add_claim_arguments(parser) -> None:
    parser.add_argument("--claimed-curve", metavar="PATH",
                        help="a claimed privacy curve: CSV with columns eps,delta (chord in e^eps between its "
                             "points, nothing claimed outside them); reports where it is refuted")
    parser.add_argument("--claimed-gdp", type=float, metavar="MU",
                        help="a claimed Gaussian-DP parameter mu (the curve of Dong, Roth & Su 2022)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ndis", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"ndis {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    au = commands.add_parser("audit", help="black-box estimate of a mechanism's privacy spectrum from samples")
    _add_audit_arguments(au)
    au.set_defaults(run=command_audit)

    me = commands.add_parser("mechanisms", help="list the registered mechanisms, or show one's parameters")
    me.add_argument("name", nargs="?", help="a registered mechanism: show its description and parameters")
    me.set_defaults(run=command_mechanisms)

    th = commands.add_parser("theory", help="exact privacy spectrum of a Gaussian-output mechanism on a dataset")
    th.add_argument("mechanism", help="rp, rlc, als, gaussian-ls (or a registered mechanism name)")
    th.add_argument("--param", action="append", metavar="KEY=VALUE", help="mechanism parameter, e.g. r=1200 (repeatable)")
    th.add_argument("--data", required=True, help="flights[:ROWS], cancer:PATH, song:PATH, synthetic:n=..,d=..,seed=.., or a CSV path")
    th.add_argument("--neighbor", default="remove", help="neighbour relation: remove (default), zero, replace or entry (replace/entry need a mechanism with a worst_neighbor helper)")
    th.add_argument("--rows", default="worst", help="worst (default), all, or comma-separated row indices")
    th.add_argument("--eps", default="0:4:41", help="eps grid START:STOP:NUM or a comma list (default 0:4:41)")
    th.add_argument("--scale", choices=("both", "linear", "log"), default="both", help="delta axis of the plot")
    _add_claim_arguments(th)
    th.add_argument("--out", default="ndis-out/theory", help="output directory (default ndis-out/theory)")
    th.set_defaults(run=command_theory)

    rp = commands.add_parser("reproduce", help="reproduce a figure or table of the source papers")
    rp.add_argument("name", nargs="?", help="a reproduction name (see --list)")
    rp.add_argument("--list", action="store_true", help="list the reproductions")
    rp.add_argument("--quick", action="store_true", help="small sample sizes (smoke test)")
    rp.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    rp.add_argument("--out", default="ndis-out/reproduce", help="output directory (default ndis-out/reproduce)")
    rp.set_defaults(run=command_reproduce)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from ndis.core.errors import MechanismError

    try:
        args.run(args)
    except MechanismError as error:
        import traceback

        print(f"ndis {args.command}: the mechanism raised an exception ({error.where}):", file=sys.stderr)
        traceback.print_exception(error.__cause__, file=sys.stderr)
        return 1
    except (ValueError, TypeError, FileNotFoundError) as error:
        message = error.args[0] if error.args else type(error).__name__
        print(f"ndis {args.command}: error: {message}", file=sys.stderr)
        return 2
    except ImportError as error:  # a missing optional dependency: the message names the install command
        print(f"ndis {args.command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as error:
        detail = f" {error}" if str(error) else ""
        print(f"ndis {args.command}: interrupted{detail}; nothing was written", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
