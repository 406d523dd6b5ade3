"""The `ndis` command line: audits, exact spectra, mechanisms and reproductions.

This module is the only place that sees argparse: it turns options into plain arguments of the
library functions. Mistakes in the arguments (bad names, paths, parameters) print one line on
stderr and exit with code 2; an audit that refutes the claim it was given exits with code 3
(`REFUTED`), so that a script or CI job can act on the verdict. Heavy libraries are imported inside
the commands, so that `ndis --help` and `ndis --version` answer at once.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time
import warnings

from . import __version__


class UsageError(ValueError):
    """A command-line mistake reported as one line."""


class WriteError(OSError):
    """Result files that could not be written (disk full, file-size limit), reported as one line."""


#: The exit status of an audit that refutes its claim (`ndis audit`, `ndis audit-one-run`).
REFUTED = 3
#: The partial report an interrupted `ndis audit` leaves in --out.
PARTIAL = "partial.json"


def grid_points(text: str) -> tuple:
    """('linspace', start, stop, num) for 'start:stop:num' (inclusive, num points) or ('list', values)
    for a comma-separated list; checked without numpy, so that a bad or oversized grid is refused at
    once."""
    from .core.budget import MAX_EPS

    try:
        if ":" in text:
            start, stop, num = text.split(":")
            spec = ("linspace", float(start), float(stop), int(num))
            if spec[3] < 1:
                raise ValueError
            ends = spec[1:3]
        else:
            spec = ("list", [float(v) for v in text.split(",")])
            ends = spec[1]
    except ValueError:
        raise UsageError(f"bad eps grid {text!r}: use START:STOP:NUM (e.g. 0:2:41) or a list like 0,0.5,1") from None
    if not all(abs(v) < float("inf") for v in ends):
        raise UsageError(f"bad eps grid {text!r}: the eps values must be finite")
    if max(ends) > MAX_EPS:
        raise UsageError(f"bad eps grid {text!r}: eps must be at most {MAX_EPS:.2f} (beyond it e^eps overflows "
                         "double precision)")
    return spec


def grid_size(spec: tuple) -> int:
    """The number of points of a `grid_points` spec."""
    return spec[3] if spec[0] == "linspace" else len(spec[1])


def grid_array(spec: tuple):
    """The numpy array of a `grid_points` spec."""
    import numpy as np

    return np.linspace(*spec[1:]) if spec[0] == "linspace" else np.array(spec[1])


def parse_grid(text: str):
    """eps grid from 'start:stop:num' (inclusive, num points) or a comma-separated list."""
    return grid_array(grid_points(text))


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


def _check_one_claim(args) -> None:
    """UsageError unless at most one of --claimed, --claimed-curve, --claimed-gdp is given."""
    given = [name for name in ("claimed", "claimed_curve", "claimed_gdp") if getattr(args, name, None) is not None]
    if len(given) > 1:
        raise UsageError(f"give one of --claimed, --claimed-curve, --claimed-gdp, not {len(given)}")


def claimed_curve_option(args, allow_point: bool = True):
    """The claim of --claimed EPS,DELTA, --claimed-curve PATH or --claimed-gdp MU (at most one), or None."""
    from .auditor.statistics import claims

    _check_one_claim(args)
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


def parse_samples(text: str) -> int:
    """`parse_count`, at least the smallest sample count an audit's default split accepts
    (`core.budget.minimum_samples`)."""
    from .core.budget import MIN_PART, minimum_samples

    value, least = parse_count(text), minimum_samples()
    if value < least:
        raise argparse.ArgumentTypeError(f"{text!r} is fewer than {least}, the fewest samples per side that leave "
                                         f"{MIN_PART} each for fitting, validation and held-out estimation")
    return value


def parse_seed(text: str) -> int:
    """A seed: a whole number >= 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is negative; a seed is a whole number >= 0")
    return value


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


def _neighbour_option(args):
    """The neighbour spec of --neighbor: the string, or with --replacement (relation, row, new values)
    for `core.neighbors.Neighbor`; None without --neighbor, when the audit takes its one default
    (`core.neighbors.DEFAULT_NEIGHBOR` without --data-prime, the mechanism's declared relation with
    it). Checked without numpy: the relation itself is checked by the audit."""
    if args.replacement is None:
        return args.neighbor
    if args.data_prime is not None:
        raise UsageError("give either --data-prime or --replacement, not both")
    relation, _, row = (args.neighbor or "").partition(":")
    if not row.isdigit():
        raise UsageError("--replacement goes with --neighbor replace:ROW (a new row) or entry:ROW (COLUMN,VALUE)")
    values = parse_row(args.replacement)
    if relation == "entry":
        if len(values) != 2 or not float(values[0]).is_integer():
            raise UsageError("--neighbor entry:ROW takes --replacement COLUMN,VALUE")
        values = (int(values[0]), values[1])
    return relation, int(row), values


def print_table(columns: dict, stream=None) -> None:
    """A fixed-width table of the given columns, the first being eps: every row, or for a long grid
    a selection and a line saying which rows it skipped (`ndis.core.curve.table_rows`)."""
    from .core.curve import table_rows

    rows, skipped = table_rows(next(iter(columns.values())), where="spectrum.csv")
    print("  ".join(f"{name:>12}" for name in columns), file=stream)
    for i in rows:
        print("  ".join(f"{float(values[i]):>12.5g}" for values in columns.values()), file=stream)
    if skipped:
        print(skipped, file=stream)


def _declared_kind(mech, kind: str | None):
    """The mechanism wrapped as --kind says (batched or per-sample), or unchanged without --kind."""
    from . import auditor

    if kind is None:
        return mech
    if not callable(mech) or callable(getattr(mech, "sample", None)) or callable(getattr(mech, "sampler", None)):
        raise UsageError("--kind applies to plug-in callables, not to mechanism objects")
    return auditor.batched(mech) if kind == "batched" else auditor.per_sample(mech)


def _neighbour_line(neighbor: dict, screen: dict | None) -> str:
    """How the neighbouring dataset was chosen, with the screen's cost."""
    if neighbor["relation"] is None:
        return "D' as given by --data-prime (no neighbour relation checked)"
    text = f"{neighbor['relation']} row {neighbor['row']} ({neighbor['how']}"
    if screen and "skipped" in screen:
        text += f"; neighbour screen skipped: {screen['skipped']}"
    elif screen:
        text += (f" of rows {', '.join(map(str, screen['rows']))}: {screen['samples']:,} samples, "
                 f"{screen['seconds']:.1f} s")
    return text + ")"


def _check_audit_arguments(args) -> dict:
    """`ndis audit`'s arguments that need no data and no heavy import, as the audit's arguments, so that
    a mistake is one line at once: eps (the grid spec), params, neighbor, and the option groups
    (`core.options`, which check their values when made)."""
    from .core import budget
    from .core.options import Execution, Scoring, Split

    grid, params = grid_points(args.eps), parse_params(args.param)
    parse_claimed(args.claimed)
    _check_one_claim(args)
    if args.claimed_curve is not None and not pathlib.Path(args.claimed_curve).is_file():
        raise UsageError(f"claimed curve file {args.claimed_curve!r} not found")
    searching = args.neighbor == "search"
    if not searching and any(v is not None for v in (args.sensitivity, args.dimension, args.search_trials,
                                                     args.pilot_eps)):
        raise UsageError("--sensitivity, --dimension, --search-trials and --pilot-eps go with --neighbor search")
    if args.data is None and not searching:
        raise UsageError("--data is required (except with --neighbor search, which can start from StatDP's patterns)")
    neighbor = args.neighbor if searching else _neighbour_option(args)
    split = Split() if searching else Split(screen_fraction=args.screen_fraction)
    execution = Execution(n_jobs=args.jobs, backend=args.backend, scheduler=args.scheduler, dashboard=args.dashboard)
    scoring = Scoring(scorer=args.scorer, features=args.features, method=args.method)
    # the audit checks the memory again with every argument; this is its first check, before numpy is imported
    budget.check(grid_size(grid), args.samples, sizes=budget.split(args.samples, *split.training), n_jobs=args.jobs)
    return dict(grid=grid, params=params, neighbor=neighbor, split=split, execution=execution, scoring=scoring)


def _report_files(report, title: str, timings: dict, plot) -> dict:
    """{file name: contents} of an audit's report: report.json, spectrum.csv, spectrum.png (from `plot`, a
    started `PlotProcess`) and report.html; the time spent waiting for the plot and writing the other
    files goes to `timings`."""
    started = time.perf_counter()
    png = plot.png(report, title)
    timings["plot"] = time.perf_counter() - started
    started = time.perf_counter()
    files = {"report.json": report.to_json() + "\n", "spectrum.csv": report.to_csv(),
             "spectrum.png": png, "report.html": report.to_html(title=title, png=png)}
    timings["other_report_files"] = time.perf_counter() - started
    return files


def _write_partial(out, partial: dict, args, error: KeyboardInterrupt) -> None:
    """Write partial.json (an interrupted audit's partial report) when a phase was completed, and say so
    in the interruption's message (`error.written`)."""
    if not partial.get("phases_completed"):
        return
    partial["info"].update(data=args.data, data_prime=args.data_prime, command=" ".join(sys.argv))
    error.written = out.write({PARTIAL: json.dumps(partial, indent=2) + "\n"})


def command_audit(args, stream=None) -> int:
    """`ndis audit`: audit, print the table, write report.json, spectrum.csv, spectrum.png and report.html
    (all or none, `core.files.OutputFolder`); an interruption after a completed phase writes partial.json.
    Exit status `REFUTED` when the audit refutes the claim (a violation of --claimed, or a claimed curve
    refuted somewhere)."""
    from .core.files import FolderUnusable, OutputFolder
    from .plot_process import PlotProcess

    stream = stream or sys.stdout
    checked = _check_audit_arguments(args)
    try:
        with OutputFolder(args.out) as out, PlotProcess() as plot:
            report = _run_audit(args, out, stream, checked, plot)
    except FolderUnusable as error:  # raised on entry only: the folder cannot be used
        if error.in_use:
            raise UsageError(f"--out {args.out!r} is in use: {error.reason}") from None
        raise UsageError(f"cannot write to --out {args.out!r}: {error.reason}") from None
    refuted = (report.verdict is not None and report.verdict.label == "violation") or (
        report.claim is not None and bool(report.claim.refuted.any()))
    return REFUTED if refuted else 0


def _run_audit(args, out, stream, checked: dict, plot):
    """The audit of `ndis audit` (or its pair search) with the arguments `checked` by
    `_check_audit_arguments`, its report files (the PNG from `plot`, a started `PlotProcess`) and
    its printed summary; returns the report."""
    started = time.perf_counter()
    from .auditor import audit, audit_sequential
    from .auditor.reporting.progress import Interrupted
    from .auditor.reporting.report import partial_report
    from .core.neighbors import Neighbor
    from .experiments import datasets
    from .mechanisms import resolve

    imported = time.perf_counter() - started
    searching = args.neighbor == "search"
    claim = claimed_curve_option(args)
    mech = _declared_kind(resolve(args.mechanism, **checked["params"]), args.kind)
    common = dict(eps=grid_array(checked["grid"]), n_samples=args.samples, claimed=claim, alpha=args.alpha,
                  seed=args.seed, scorer=checked["scoring"], execution=checked["execution"], progress=None)
    try:
        if searching:
            report = _audit_search(args, mech, common)
        else:
            data = datasets.load(args.data)
            data_prime = None if args.data_prime is None else datasets.load(args.data_prime)
            run = audit_sequential if args.sequential else audit
            neighbor = checked["neighbor"]
            report = run(mech, data, data_prime, neighbor=Neighbor(*neighbor) if isinstance(neighbor, tuple) else neighbor,
                         split=checked["split"], **common)
    except Interrupted as error:
        if error.partial is not None:
            _write_partial(out, error.partial, args, error)
        raise
    report.info.update(data=args.data, command=" ".join(sys.argv))
    if args.data_prime is not None:
        report.info["data_prime"] = args.data_prime
    title = _title(report, args, searching)
    timings = {"imports": imported, **report.timings}
    try:
        written = out.write(_report_files(report, title, timings, plot), stale=(PARTIAL,))
    except KeyboardInterrupt as error:
        stopped = Interrupted("while writing the report files (none was replaced)")
        _write_partial(out, partial_report(report.info["phases"], report.info, str(stopped)), args, stopped)
        raise stopped from error
    except OSError as error:
        raise WriteError(f"cannot write the report files to {str(out.path)!r}: {error.strerror or error}; "
                         "no report file was written or replaced") from None
    _print_summary(report, args, searching, stream)
    print(f"wrote {', '.join(map(str, written))}", file=stream)
    if args.verbose:
        print(_timings_line(timings), file=stream)
    return report


def _timings_line(timings: dict) -> str:
    """`ndis audit --verbose`'s line: the wall time of each phase, in the order they ran (`total` is the audit's)."""
    return "timings (wall clock): " + ", ".join(f"{phase.replace('_', ' ')} {seconds:.3f} s"
                                                for phase, seconds in timings.items())


def _title(report, args, searching: bool) -> str:
    """The plot's and the page's title: the mechanism, the data and the neighbour, the samples."""
    neighbor = report.neighbor
    if searching:
        where = f"the searched pair D = {neighbor['D']}, D' = {neighbor['D_prime']}"
    elif neighbor["relation"] is None:
        where = f"{args.data} and {args.data_prime}"
    else:
        where = f"{args.data} ({neighbor['relation']} row {neighbor['row']}"
    closing = ")" if not searching and neighbor["relation"] is not None else ""
    return f"{report.mechanism} on {where}, {report.n_samples:,} samples per side{closing}"


def _print_summary(report, args, searching: bool, stream) -> None:
    """The printed summary of `ndis audit`: how the pair was chosen, then `report.table()` (the table,
    the verdict, the claim check, the certificates and the seed)."""
    neighbor, seconds = report.neighbor, report.timings["total"]
    if searching:
        search = report.pair_search
        print(f"{report.mechanism}: pair search, {search['n_trials']} trials x {search['samples_per_pilot']:,} "
              f"samples per side; {search['reason']}; final audit on {search['final']['samples_per_side']:,} samples "
              f"per side of D = {neighbor['D']}, D' = {neighbor['D_prime']}, scorer {report.scorer}, "
              f"{seconds:.1f} s", file=stream)
    else:
        print(f"{report.mechanism} on {args.data}: {_neighbour_line(neighbor, report.screen)}, "
              f"scorer {report.scorer}, {seconds:.1f} s", file=stream)
    print(report.table(), file=stream)


def _audit_search(args, mech, common):
    """`ndis audit --neighbor search`: the pair search (`auditor.pair_search`) from StatDP's patterns of
    --dimension K, or from the pair --data / --data-prime, then the final audit."""
    from .auditor.pair_search import Search, audit_search
    from .experiments import datasets

    if args.replacement is not None:
        raise UsageError("--replacement does not go with --neighbor search")
    if (args.data is None) != (args.data_prime is None):
        raise UsageError("with --neighbor search, --data and --data-prime give the start pair: give both or neither "
                         "(then StatDP's patterns of --dimension K start the search)")
    start = None if args.data is None else (datasets.load(args.data), datasets.load(args.data_prime))
    if common["claimed"] is not None and not isinstance(common["claimed"], tuple):
        raise UsageError("--neighbor search tests a claimed (eps, delta): use --claimed EPS,DELTA")
    if common["scorer"].method != "threshold":
        raise UsageError("--neighbor search goes with --method threshold")
    if args.sequential:
        raise UsageError("--sequential audits a given pair (--data and --data-prime), not --neighbor search")
    search = Search(dimension=args.dimension, sensitivity=args.sensitivity, start=start, fraction=args.screen_fraction,
                    n_trials=args.search_trials, pilot_eps=args.pilot_eps)
    return audit_search(mech, common.pop("claimed"), search=search, **common)


def command_theory(args) -> None:
    """`ndis theory`: the exact spectrum of a Gaussian-output mechanism on a dataset; with a claimed
    curve, where the exact curve exceeds it (no sampling)."""
    import numpy as np

    from . import mechanisms, theory
    from .auditor.statistics import claims
    from .experiments import datasets
    from .experiments.plotting import plot_curves

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
        "law": label, "seconds": elapsed, "details": result.worst_details,
    }
    columns = {"eps": eps, "delta": result.delta, "forward": result.forward, "reverse": result.reverse}
    found = None
    if claim is not None:
        found = claims.exceeds(claim, eps, result.delta)
        summary["claim"] = found
        columns["claimed"] = claim(eps)
    accounting = theory_accounting(args, result, eps, out)
    if accounting is not None:
        summary["accounting"] = accounting
    (out / "theory.json").write_text(json.dumps(summary, indent=2, default=float))
    print(f"{title}: {D.shape[0]} rows scanned in {elapsed:.2f} s")
    print_table(columns)
    if found is not None:
        print(claims.describe_exceeds(found) + ("" if result.exact else
                                                 " (the asymptotic normal law's curve, not the exact one)"))
    if accounting is not None:
        for line in accounting["lines"]:
            print(line)
    print(f"wrote {out / 'spectrum.csv'}, {out / 'spectrum.png'}, {out / 'theory.json'}"
          + (", composed.csv, tradeoff.csv, tradeoff.png" if accounting is not None else ""))


def parse_release(text: str):
    """'gaussian:sigma=2[,sensitivity=1]' -> the exact GaussianPair of that release; 'laplace:scale=3
    [,sensitivity=1]' -> a dp_accounting LaplaceDpEvent (scale / sensitivity)."""
    from . import theory

    kind, _, rest = text.partition(":")
    try:
        values = {k.strip(): float(v) for k, v in (item.split("=") for item in rest.split(",") if item.strip())}
    except ValueError:
        raise UsageError(f"bad --with {text!r}: use gaussian:sigma=S or laplace:scale=B "
                         "(optionally ,sensitivity=C)") from None
    sensitivity = values.pop("sensitivity", 1.0)
    name = {"gaussian": "sigma", "laplace": "scale"}.get(kind)
    if name is None or set(values) != {name} or not values[name] > 0 or not sensitivity > 0:
        raise UsageError(f"bad --with {text!r}: use gaussian:sigma=S or laplace:scale=B with S, B > 0 "
                         "(optionally ,sensitivity=C)")
    if kind == "gaussian":
        return theory.GaussianPair([sensitivity / values[name]], [[1.0]], [0.0], [[1.0]])
    from .theory.profile import dp_accounting_modules

    return dp_accounting_modules()[0].LaplaceDpEvent(values[name] / sensitivity)


def theory_accounting(args, result, eps, out):
    """`ndis theory --compose K --with SPEC --subsample Q --delta D --renyi`: the release composed with
    the --with mechanisms, Poisson-subsampled, K times (`theory.compose`, `theory.poisson_subsample`);
    eps at each delta, and with --renyi the RDP accountant's eps and zCDP rho. None without these options."""
    import numpy as np

    from . import theory
    from .experiments.plotting import plot_tradeoff

    if args.compose == 1 and not args.with_ and args.subsample is None and not args.renyi and args.delta is None:
        return None
    if args.compose < 1:
        raise UsageError(f"--compose must be a positive number of releases, got {args.compose}")
    try:
        deltas = [float(v) for v in (args.delta or "1e-5").split(",")]
    except ValueError:
        raise UsageError(f"bad --delta {args.delta!r}: use a number or a comma list, e.g. 1e-5,1e-8") from None
    if not all(0 < d < 1 for d in deltas):
        raise UsageError(f"--delta values must lie in (0, 1), got {args.delta}")
    if not args.discretization > 0:
        raise UsageError(f"--discretization must be a positive grid step, got {args.discretization}")
    parts = [result] + [parse_release(text) for text in args.with_ or []]
    step = theory.compose(*parts, discretization=args.discretization) if len(parts) > 1 else result.profile()
    if args.subsample is not None:
        step = theory.poisson_subsample(step, args.subsample)
    total = theory.compose(*[step] * args.compose, discretization=args.discretization)
    curve = total.curve(eps)
    np.savetxt(out / "composed.csv", np.column_stack([eps, curve.delta, curve.forward, curve.reverse]), delimiter=",",
               header="eps,delta,forward,reverse", comments="", fmt=["%.10g", "%.17g", "%.17g", "%.17g"])
    alpha, beta = theory.tradeoff(total)
    np.savetxt(out / "tradeoff.csv", np.column_stack([alpha, beta]), delimiter=",", header="type_one,type_two",
               comments="", fmt="%.17g")
    what = " + ".join([result.mechanism] + list(args.with_ or []))
    what += f", q = {args.subsample:g}" if args.subsample else ""
    plot_tradeoff(out / "tradeoff.png", {f"{args.compose} x ({what})": (alpha, beta)}, "exact trade-off curve")
    error = getattr(total, "eps_error", 0.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", theory.DiscretizationWarning)
        eps_at = {str(d): float(total.epsilon(d, "max")) for d in deltas}
    summary = {"releases": args.compose, "with": args.with_ or [], "subsample": args.subsample,
               "route": "privacy-loss distribution" if error else "exact", "eps_error": error, "eps": eps_at}
    lines = [f"{args.compose} release(s) of {what}: eps = {summary['eps'][str(d)]:.6g} at delta = {d:g}"
             + (f" (PLD, at most {error:.2g} above the exact eps)" if error else " (exact)") for d in deltas]
    stated = [w for w in caught if issubclass(w.category, theory.DiscretizationWarning)]
    lines += [f"  warning: {w.message}" for w in stated[:1]]                # one line in the summary
    for w in caught:
        if w not in stated:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    if args.renyi:
        summary["rdp_eps"] = {str(d): theory.rdp_epsilon(step, d, count=args.compose) for d in deltas}
        lines += [f"  RDP accountant: eps = {summary['rdp_eps'][str(d)]:.6g} at delta = {d:g}" for d in deltas]
        if args.subsample is None and all(isinstance(p, theory.PrivacyProfile) for p in parts[1:]):
            rho = theory.zcdp_rho(total)
            summary["zcdp_rho"] = rho
            lines.append(f"  zCDP: rho = {rho:.6g}" if np.isfinite(rho) else
                         "  zCDP: none (rho = inf: the release's covariance depends on the data)")
    summary["lines"] = lines
    return summary


def command_mechanisms(args) -> None:
    """`ndis mechanisms`: one line per registered scheme; `ndis mechanisms NAME`: its parameters."""
    from . import mechanisms

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
    from .experiments import reproduce

    if args.list or not args.name:
        for name, (_, description) in reproduce.REPRODUCTIONS.items():
            print(f"{name:24s} {description}")
        return
    record = reproduce.run(args.name, out=args.out, quick=args.quick, seed=args.seed)
    folder = pathlib.Path(args.out) / args.name
    print((folder / "results.md").read_text())
    print(f"wrote {folder} ({record['seconds']:.1f} s)")


def _read_canary_scores(path: str):
    """(scores, included) from a CSV with a header naming the columns score and included (1 = in training);
    a missing cell is named by its line in the file."""
    import pandas as pd

    try:
        table = pd.read_csv(path)
    except FileNotFoundError:
        raise UsageError(f"no such scores file: {path!r}") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        raise UsageError(f"cannot read {path!r} as CSV: {error}") from None
    missing = [name for name in ("score", "included") if name not in table.columns]
    if missing:
        raise UsageError(f"{path!r} needs the columns score and included (1 = the canary was in training, 0 = not); "
                         f"it has {', '.join(map(str, table.columns)) or 'none'}")
    for column in ("score", "included"):
        empty = table.index[table[column].isna()]
        if empty.size:
            lines = ", ".join(str(row + 2) for row in empty[:5]) + (", ..." if empty.size > 5 else "")
            raise UsageError(f"{path!r} has no {column} on line {lines} ({empty.size} of {len(table)} canaries): "
                             "give every canary a score and its coin flip")
    return table["score"].to_numpy(), table["included"].to_numpy()


def command_audit_one_run(args, stream=None) -> int:
    """`ndis audit-one-run`: the one-run estimators on a CSV of canary scores (--scores), or one DP-SGD
    training run with canaries (opacus-digits); prints the table, writes report.json, estimates.csv,
    scores.csv, one-run.png and report.html (all or none, `core.files.OutputFolder`). Exit status
    `REFUTED` when the headline refutes the claimed eps."""
    from .core.files import FolderUnusable, OutputFolder

    stream = stream or sys.stdout
    if (args.setting is None) == (args.scores is None):
        raise UsageError("give either --scores FILE.csv (your canary scores) or the setting opacus-digits"
                         + (", not both" if args.scores else ""))
    if args.scores is not None and any(getattr(args, name) is not None for name in ("eps", "canaries", "steps", "bug")):
        raise UsageError("--eps, --canaries, --steps and --bug go with opacus-digits, not with --scores")
    if args.scores is None and args.eps is None:
        raise UsageError("opacus-digits needs --eps, the eps at --delta the noise is calibrated to (e.g. --eps 4)")
    if args.scores is None and args.claimed_eps is not None:
        raise UsageError("opacus-digits claims Opacus's accountant eps itself; --claimed-eps goes with --scores")
    try:
        with OutputFolder(args.out) as out:
            report = _one_run_report(args)
            try:
                written = out.write(report.files())
            except OSError as error:
                raise WriteError(f"cannot write the report files to {str(out.path)!r}: {error.strerror or error}; "
                                 "no report file was written or replaced") from None
    except FolderUnusable as error:
        where = "is in use" if error.in_use else "cannot be written"
        raise UsageError(f"--out {args.out!r} {where}: {error.reason}") from None
    print(report.table(), file=stream)
    accountant = report.info.get("accountant")
    if accountant:
        print(f"accountant: {accountant['name']}, eps {accountant['eps']:.4g} at delta={accountant['delta']:g} "
              f"(exact for the Gaussian steps: {accountant['exact_eps']:.4g}); training accuracy "
              f"{report.info['training_accuracy']:.3f}", file=stream)
    if report.seed is not None:
        seed = report.seed["entropy"]
        print(f"seed {seed} (--seed {seed} re-runs this audit exactly)", file=stream)
    print(f"wrote {', '.join(str(path) for path in written)}", file=stream)
    return REFUTED if report.refutes_claim() else 0


def _one_run_report(args):
    """The OneRunReport of `ndis audit-one-run`'s arguments (checked by `command_audit_one_run`)."""
    common = dict(delta=args.delta, method=args.method, alpha=args.alpha, compare=args.compare)
    if args.scores is not None:
        from .auditor.one_run import audit_one_run

        scores, included = _read_canary_scores(args.scores)
        report = audit_one_run(scores, included, claimed_eps=args.claimed_eps, **common)
        report.mechanism = f"canary scores of {pathlib.Path(args.scores).name}"
        report.info["scores_file"] = args.scores
    else:
        try:
            from .experiments import one_run_opacus
        except ImportError as error:
            raise ImportError(f"{error}: opacus-digits needs Opacus (pip install \"ndis[libraries]\")") from None
        report = one_run_opacus.run(args.eps, args.canaries or 1000, steps=args.steps or 100, bug=args.bug,
                                    seed=args.seed, **common)
    report.info["command"] = " ".join(sys.argv)
    return report


def _add_one_run_parser(commands) -> None:
    one = commands.add_parser("audit-one-run", help="one-run audit: a certified eps lower bound from one training "
                              "run with canaries")
    one.add_argument("setting", nargs="?", choices=("opacus-digits",),
                     help="opacus-digits: train Opacus DP-SGD once on scikit-learn's digits with white-box Dirac "
                          "canaries and audit it (needs the libraries extra); omit with --scores")
    one.add_argument("--scores", metavar="FILE.csv",
                     help="your canary scores: a CSV with columns score (larger = more likely included) and "
                          "included (the secret coin flips, 1 or 0)")
    one.add_argument("--delta", type=float, default=1e-5, help="delta of the certified eps_lo (default 1e-5)")
    one.add_argument("--alpha", type=float, default=0.05, help="1 - confidence of each bound (default 0.05)")
    one.add_argument("--method", default="steinke", choices=("steinke", "fdp", "gaussian"),
                     help="the estimator whose eps_lo is the headline (default steinke; steinke and fdp are exact "
                          "and assume nothing; gaussian is tighter for white-box DP-SGD canaries, and when the "
                          "checks reject its model the headline falls back to steinke)")
    one.add_argument("--compare", action="store_true",
                     help="compute and show every estimator beside the headline, not only --method's")
    one.add_argument("--claimed-eps", type=float, metavar="EPS",
                     help="--scores: the accountant's eps at --delta, set beside each eps_lo")
    one.add_argument("--eps", type=float, help="opacus-digits: the eps at --delta Opacus calibrates the noise to")
    one.add_argument("--canaries", type=parse_count, help="opacus-digits: Dirac canaries (default 1000)")
    one.add_argument("--steps", type=parse_count, help="opacus-digits: full-batch DP-SGD steps (default 100)")
    one.add_argument("--bug", choices=("no-clip",), help="opacus-digits: plant a bug (no-clip: clipping skipped)")
    one.add_argument("--seed", type=int, default=None,
                     help="opacus-digits: random seed (default: fresh entropy, printed and recorded)")
    one.add_argument("--out", default="ndis-out/one-run", help="output directory (default ndis-out/one-run)")
    one.set_defaults(run=command_audit_one_run)


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
    parser.add_argument("--samples", type=parse_samples, default=10**6,
                        help="samples per side (default 1e6; at least 400: 50 each to fit, validate and hold out)")
    parser.add_argument("--seed", type=parse_seed, default=None,
                        help="random seed (default: fresh entropy, printed and recorded in report.json)")
    parser.add_argument("--scorer", default="auto",
                        help="auto (default), quadratic, gaussian, knn, mlp, boosting, density, spline, segments")
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
    parser.add_argument("--jobs", type=int, help="parallel sampling workers (-1 = all cores; default: all cores for "
                                                 "ndis's own mechanisms, which are thread-safe, 1 for others)")
    parser.add_argument("--backend", choices=("threads", "loky", "dask"),
                        help="threads (default for ndis's own mechanisms), loky processes (default for others) or dask")
    parser.add_argument("--scheduler", help="Dask scheduler address (default: a local cluster of in-process workers "
                                            "listening on 127.0.0.1 only)")
    parser.add_argument("--dashboard", action="store_true",
                        help="with --backend dask and no --scheduler: serve the Dask dashboard on http://127.0.0.1 "
                             "(this machine only)")
    parser.add_argument("--out", default="ndis-out/audit", help="output directory (default ndis-out/audit)")
    parser.add_argument("--verbose", action="store_true",
                        help="print the wall time of every phase (imports, the audit's phases, the report files)")


def _add_claim_arguments(parser) -> None:
    parser.add_argument("--claimed-curve", metavar="PATH",
                        help="a claimed privacy curve: CSV with columns eps,delta (chord in e^eps between its "
                             "points, nothing claimed outside them); reports where it is refuted")
    parser.add_argument("--claimed-gdp", type=float, metavar="MU",
                        help="a claimed Gaussian-DP parameter mu (the curve of Dong, Roth & Su 2022)")


class _Parser(argparse.ArgumentParser):
    """argparse whose mistakes are one line on stderr (exit status 2), naming the option, not the usage."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ndis", description=__doc__.splitlines()[0],
                     epilog=f"exit status: 0 done, 1 a failed write or an exception in your mechanism, 2 a mistake "
                            f"in the arguments, {REFUTED} the audit refuted the claim, 130 interrupted")
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
    th.add_argument("--compose", type=int, default=1, metavar="K", help="K releases (composition; default 1)")
    th.add_argument("--with", dest="with_", action="append", metavar="SPEC",
                    help="a mechanism released with each release: gaussian:sigma=S or laplace:scale=B "
                         "(optionally ,sensitivity=C; repeatable)")
    th.add_argument("--subsample", type=float, metavar="Q", help="Poisson subsampling of each release at rate Q")
    th.add_argument("--delta", metavar="D[,D..]", help="report eps at these deltas (default 1e-5)")
    th.add_argument("--renyi", action="store_true", help="also report the RDP accountant's eps and zCDP rho")
    th.add_argument("--discretization", type=float, default=1e-4, metavar="H",
                    help="grid step of the privacy-loss distributions, when the composition goes through them "
                         "(default 1e-4; the stated error is K times it: finer is tighter and slower)")
    th.add_argument("--out", default="ndis-out/theory", help="output directory (default ndis-out/theory)")
    th.set_defaults(run=command_theory)

    _add_one_run_parser(commands)

    rp = commands.add_parser("reproduce", help="reproduce a figure or table of the source papers")
    rp.add_argument("name", nargs="?", help="a reproduction name (see --list)")
    rp.add_argument("--list", action="store_true", help="list the reproductions")
    rp.add_argument("--quick", action="store_true", help="small sample sizes (smoke test)")
    rp.add_argument("--seed", type=parse_seed, default=0, help="random seed (default 0)")
    rp.add_argument("--out", default="ndis-out/reproduce", help="output directory (default ndis-out/reproduce)")
    rp.set_defaults(run=command_reproduce)
    return parser


_signalled = []  # the interrupting signals received during this run (SIGINT, SIGTERM), if any


def _terminate(signum, frame):
    """SIGTERM (or Ctrl-C) raised as KeyboardInterrupt in the main thread, so that it unwinds like Ctrl-C:
    the executor's workers are shut down, a partial report is written, the output folder's lock released."""
    _signalled.append(signum)
    raise KeyboardInterrupt()


def _quiet_after_interruption(previous):
    """A threading.excepthook that drops what joblib's executor manager thread raises while an
    interrupted run shuts its workers down (a race in loky, e.g. a KeyError for a cancelled call), so
    that the interruption's one line is all the user reads; anything else goes to `previous`."""
    def hook(args):
        if _signalled and args.thread is not None and args.thread.name == "ExecutorManagerThread":
            return
        previous(args)

    return hook


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():  # signals reach the main thread only
        return _run(args)
    _signalled.clear()
    previous = {signal.SIGTERM: signal.signal(signal.SIGTERM, _terminate)}
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # an inherited "ignore" stays
        previous[signal.SIGINT] = signal.signal(signal.SIGINT, _terminate)
    hook, threading.excepthook = threading.excepthook, _quiet_after_interruption(threading.excepthook)
    try:
        return _run(args)
    finally:
        threading.excepthook = hook
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _run(args) -> int:
    """Run the chosen command; one line on stderr for a mistake (exit 2), a failed write (exit 1) or an
    interruption (Ctrl-C: 130, SIGTERM: 143), the traceback of an exception in the user's own code."""
    from .core.errors import MechanismError

    try:
        status = args.run(args)
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
    except OSError as error:  # results that could not be written: disk full, file-size limit, ...
        message = str(error) if isinstance(error, WriteError) else f"{error.strerror or error} ({error.filename})"
        print(f"ndis {args.command}: error: {message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as error:
        from signal import SIGTERM

        terminated = SIGTERM in _signalled
        detail = f" {error}" if str(error) else ""
        written = getattr(error, "written", None)
        tail = (f"; wrote the partial report {', '.join(map(str, written))}" if written else "; nothing was written")
        print(f"ndis {args.command}: {'terminated (SIGTERM)' if terminated else 'interrupted'}{detail}{tail}",
              file=sys.stderr)
        return 143 if terminated else 130
    return status or 0


if __name__ == "__main__":
    sys.exit(main())
