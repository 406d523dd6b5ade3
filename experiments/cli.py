"""The `ndis` command line: theory spectra, mechanisms, audits and reproductions.

User mistakes (bad names, paths, parameters) print one line on stderr and exit with code 2.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time

import numpy as np

from . import datasets


class UsageError(ValueError):
    """A command-line mistake reported as one line."""


def parse_grid(text: str) -> np.ndarray:
    """eps grid from 'start:stop:num' (inclusive, num points) or a comma-separated list."""
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
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


def parse_params(items: list[str]) -> dict:
    params = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"bad --param {item!r}: use KEY=VALUE (e.g. r=1200)")
        params[key.strip()] = parse_value(value.strip())
    return params


def _output_dir(path: str) -> pathlib.Path:
    out = pathlib.Path(path)
    out.mkdir(parents=True, exist_ok=True)
    return out


def _mechanism(name: str, params: dict):
    """A registered mechanism object when `mechanisms` knows the name, else the theory family name."""
    try:
        import mechanisms
        registered = mechanisms.names()
    except (ImportError, AttributeError):
        registered = ()
    if name in registered:
        return mechanisms.get(name, **params), {}
    return name, params


def print_table(columns: dict, rows: int = 11) -> None:
    """A short fixed-width table of evenly spaced rows of the given columns."""
    n = len(next(iter(columns.values())))
    pick = np.unique(np.linspace(0, n - 1, min(rows, n)).round().astype(int))
    print("  ".join(f"{name:>12}" for name in columns))
    for i in pick:
        print("  ".join(f"{float(values[i]):>12.5g}" for values in columns.values()))


def command_theory(args) -> None:
    import theory
    from .plotting import plot_curves

    eps = parse_grid(args.eps)
    D = datasets.load(args.data)
    mechanism, params = _mechanism(args.mechanism, parse_params(args.param))
    rows = args.rows if args.rows in ("worst", "all") else [int(v) for v in args.rows.split(",")]
    started = time.perf_counter()
    result = theory.spectrum(mechanism, D, eps, neighbor=args.neighbor, rows=rows, **params)
    elapsed = time.perf_counter() - started
    out = _output_dir(args.out)
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
    (out / "theory.json").write_text(json.dumps(summary, indent=2, default=float))
    print(f"{title}: {D.shape[0]} rows scanned in {elapsed:.2f} s")
    print_table({"eps": eps, "delta": result.delta, "forward": result.forward, "reverse": result.reverse})
    print(f"wrote {out / 'spectrum.csv'}, {out / 'spectrum.png'}, {out / 'theory.json'}")


def command_audit(args) -> None:
    from auditor import run

    run.audit_from_cli(args, datasets.load(args.data), parse_grid(args.eps), parse_params(args.param))


def command_mechanisms(args) -> None:
    import mechanisms

    for name, text in mechanisms.describe().items():
        print(f"{name}: {text}\n")


def command_reproduce(args) -> None:
    from . import reproduce

    if args.list or not args.name:
        for name, (_, description) in reproduce.REPRODUCTIONS.items():
            print(f"{name:24s} {description}")
        return
    record = reproduce.run(args.name, out=args.out, quick=args.quick, seed=args.seed)
    folder = pathlib.Path(args.out) / args.name
    print((folder / "results.md").read_text())
    print(f"wrote {folder} ({record['seconds']:.1f} s)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ndis", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)

    au = commands.add_parser("audit", help="black-box estimate of a mechanism's privacy spectrum from samples")
    from auditor.run import add_arguments

    add_arguments(au)
    au.set_defaults(run=command_audit)

    me = commands.add_parser("mechanisms", help="list the registered mechanisms and their parameters")
    me.set_defaults(run=command_mechanisms)

    th = commands.add_parser("theory", help="exact privacy spectrum of a Gaussian-output mechanism on a dataset")
    th.add_argument("mechanism", help="rp, rlc, als, gaussian-ls (or a registered mechanism name)")
    th.add_argument("--param", action="append", metavar="KEY=VALUE", help="mechanism parameter, e.g. r=1200 (repeatable)")
    th.add_argument("--data", required=True, help="flights[:ROWS], cancer:PATH, song:PATH, synthetic:n=..,d=..,seed=.., or a CSV path")
    th.add_argument("--neighbor", default="remove", help="neighbour relation: remove (default), zero, replace or entry (replace/entry need a mechanism with a worst_neighbor helper)")
    th.add_argument("--rows", default="worst", help="worst (default), all, or comma-separated row indices")
    th.add_argument("--eps", default="0:4:41", help="eps grid START:STOP:NUM or a comma list (default 0:4:41)")
    th.add_argument("--scale", choices=("both", "linear", "log"), default="both", help="delta axis of the plot")
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
    try:
        args.run(args)
    except (ValueError, TypeError, FileNotFoundError) as error:
        message = error.args[0] if error.args else type(error).__name__
        print(f"ndis {args.command}: error: {message}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
