"""Glue for the `ndis audit` command: its options, mechanism resolution, and the files it writes.

`experiments.cli` owns the command line (auditor must not import experiments); it adds the options
with `add_arguments(parser)` and calls `audit_from_cli(args, data, eps, params)` with the dataset,
eps grid and mechanism parameters parsed by its own helpers.
"""

from __future__ import annotations

import importlib
import pathlib
import sys

from .api import audit


def add_arguments(parser) -> None:
    """The `ndis audit` options (DESIGN.md CLI) on an argparse parser."""
    parser.add_argument("mechanism", help="a registered mechanism name (see `ndis mechanisms`) or module.path:callable")
    parser.add_argument("--param", action="append", metavar="KEY=VALUE", help="mechanism parameter (repeatable)")
    parser.add_argument("--data", required=True, help="flights[:ROWS], cancer:PATH, song:PATH, synthetic:..., or a CSV")
    parser.add_argument("--neighbor", default="remove:worst",
                        help="RELATION[:ROWS]: remove|zero|replace|entry, ROWS = worst (default), random or an index")
    parser.add_argument("--eps", default="0:2:41", help="eps grid START:STOP:NUM or a comma list (default 0:2:41)")
    parser.add_argument("--samples", type=int, default=10**6, help="samples per side (default 1e6)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--scorer", default="auto", help="auto (default), quadratic, knn, mlp, boosting")
    parser.add_argument("--features", default="auto", help="auto (default), flatten, gram")
    parser.add_argument("--method", default="threshold", choices=("threshold", "eureka"),
                        help="threshold (default: one score, whole curve) or eureka (the papers' estimator)")
    parser.add_argument("--alpha", type=float, default=0.05, help="1 - confidence of the bounds (default 0.05)")
    parser.add_argument("--claimed", metavar="EPS,DELTA", help="test a claimed (eps, delta), e.g. 1,1e-5")
    parser.add_argument("--jobs", type=int, default=1, help="parallel sampling workers (default 1; -1 = all cores)")
    parser.add_argument("--backend", default="loky", choices=("loky", "dask"), help="loky (default) or dask")
    parser.add_argument("--scheduler", help="Dask scheduler address (default: an in-process LocalCluster)")
    parser.add_argument("--out", default="ndis-out/audit", help="output directory (default ndis-out/audit)")


def parse_claimed(text: str | None):
    """'EPS,DELTA' -> (eps, delta); None stays None."""
    if text is None:
        return None
    try:
        eps, delta = (float(v) for v in text.split(","))
    except ValueError:
        raise ValueError(f"bad --claimed {text!r}: use EPS,DELTA (e.g. 1,1e-5)") from None
    return eps, delta


def resolve_mechanism(spec: str, params: dict):
    """A registered mechanism (`mechanisms.get(spec, **params)`) or `module.path:attribute`.

    A third-party attribute may be a Mechanism-like class (instantiated with params), an object
    with `sample`, or a batched / per-sample callable (params bound as keyword arguments).
    """
    if ":" not in spec:
        import mechanisms

        return mechanisms.get(spec, **params)
    module_name, _, attribute = spec.partition(":")
    if str(pathlib.Path.cwd()) not in sys.path:  # like `python -m`: modules of the working directory
        sys.path.insert(0, str(pathlib.Path.cwd()))
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(f"cannot import module {module_name!r} for mechanism {spec!r}: {error}") from None
    if not hasattr(module, attribute):
        raise ValueError(f"module {module_name!r} has no attribute {attribute!r}")
    target = getattr(module, attribute)
    if isinstance(target, type):
        return target(**params)
    if params:
        import functools

        if not callable(target):
            raise ValueError(f"{spec} is not callable, so it cannot take parameters {sorted(params)}")
        return functools.wraps(target)(functools.partial(target, **params))
    return target


def audit_from_cli(args, data, eps, params: dict, stream=None):
    """Run `ndis audit`: audit, print the table, write report.json, spectrum.csv and spectrum.png.

    `args` carries the options of `add_arguments`; `data` is the loaded dataset, `eps` the parsed
    grid, `params` the parsed mechanism parameters. Returns the AuditReport.
    """
    stream = stream or sys.stdout
    mech = resolve_mechanism(args.mechanism, params)
    report = audit(mech, data, None, eps=eps, n_samples=args.samples, seed=args.seed, scorer=args.scorer,
                   features=args.features, alpha=args.alpha, claimed=parse_claimed(args.claimed), n_jobs=args.jobs,
                   backend=args.backend, method=args.method, neighbor=args.neighbor, scheduler=args.scheduler,
                   progress=None)
    report.info["data"] = args.data
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report.to_json(out / "report.json")
    report.to_frame().to_csv(out / "spectrum.csv", index=False)
    neighbor = report.info["neighbor"]
    report.plot(out / "spectrum.png", title=f"{report.info['mechanism']} on {args.data} "
                                            f"({neighbor['relation']} row {neighbor['row']}, {args.samples} samples per side)")
    seconds = report.info["timings"]["total"]
    print(f"{report.info['mechanism']} on {args.data}: {neighbor['relation']} row {neighbor['row']} "
          f"({neighbor['how']}), scorer {report.info['scorer']}, {seconds:.1f} s", file=stream)
    print(report.table(), file=stream)
    print(f"wrote {out / 'report.json'}, {out / 'spectrum.csv'}, {out / 'spectrum.png'}", file=stream)
    return report
