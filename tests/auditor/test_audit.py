import json

import numpy as np
import pytest

from ndis import auditor
from ndis.auditor import AuditReport, Execution, audit, batched
from ndis.core.curve import Curve
from ndis.core.neighbors import Neighbor
from ndis.mechanisms import get

from .conftest import GaussianMechanism, counting_mechanism, gaussian_delta_reference

EPS = np.linspace(0, 1, 11)
D, D_PRIME = np.array([[1.0]]), np.array([[0.0]])


def test_gaussian_callable_estimate_close_to_exact_and_bound_below(gaussian_batched):
    # mu = 1, 2e5 samples per side -> 1e5 held out; SE of delta-hat <= sqrt((1 + e^2) / 4 / 1e5) = 0.0046
    # at eps <= 1; 4 SE = 0.018 would be loose, the observed error is ~0.003, so 0.01 (~2 SE) is used as
    # the tolerance on the max over the grid together with the exact-curve overlay.
    mechanism = batched(gaussian_batched, exact=lambda e: gaussian_delta_reference(e, 1.0))
    report = audit(mechanism, D[0], D_PRIME[0], eps=EPS, n_samples=200_000, seed=0, scorer="quadratic")
    assert np.max(np.abs(report.delta - report.theory)) < 0.01
    assert np.all(report.delta_lower <= report.theory)
    assert np.all(report.delta == np.maximum(report.delta_forward, report.delta_reverse))
    assert np.all(report.delta_lower <= report.delta)
    assert report.scorer == "quadratic/flatten"


def test_timings_name_every_phase_and_add_up_to_the_total(gaussian_batched):
    mechanism = batched(gaussian_batched, exact=lambda e: gaussian_delta_reference(e, 1.0))
    report = audit(mechanism, D[0], D_PRIME[0], eps=EPS, n_samples=20_000, seed=0, scorer="quadratic", claimed=(1.0, 0.0))
    timings = report.timings
    assert list(timings) == ["validation", "preparation", "sampling_training", "training", "held_out_edges",
                             "sampling_held_out", "estimation", "exact_curve", "certificates_and_verdict", "total"]
    assert all(seconds >= 0 for seconds in timings.values())
    phases = sum(timings.values()) - timings["total"]
    # the phases are disjoint parts of the audit: their sum cannot exceed the total; what is not in a
    # phase (the progress display, starting a one-process executor, building the report) takes a few
    # milliseconds, so the phases make up most of an audit of a few tenths of a second
    assert phases <= timings["total"]
    assert phases >= 0.8 * timings["total"] - 0.02


def test_per_sample_callable_is_batched_exactly(gaussian_batched, gaussian_per_sample):
    # numpy draws normals sequentially, so n calls of standard_normal(1) on the chunk's generator give
    # the same numbers as one standard_normal((n, 1)): the auto-batched per-sample callable must
    # reproduce the batched audit exactly.
    a = audit(gaussian_batched, D[0], D_PRIME[0], eps=EPS, n_samples=20_000, seed=1, scorer="quadratic")
    b = audit(gaussian_per_sample, D[0], D_PRIME[0], eps=EPS, n_samples=20_000, seed=1, scorer="quadratic")
    assert a.info["kind"] == "batched" and b.info["kind"] == "per-sample"
    np.testing.assert_array_equal(a.delta, b.delta)
    np.testing.assert_array_equal(a.delta_lower, b.delta_lower)


def test_results_identical_for_one_and_two_jobs(gaussian_per_sample):
    kwargs = dict(eps=EPS, n_samples=4_000, seed=5, scorer="quadratic")
    one = audit(gaussian_per_sample, D[0], D_PRIME[0], execution=Execution(chunk_size=500), **kwargs)  # sequential
    assert (one.info["backend"], one.info["n_jobs"]) == ("loky", 1)
    for backend in ("loky", "threads"):
        two = audit(gaussian_per_sample, D[0], D_PRIME[0], execution=Execution(n_jobs=2, backend=backend,
                                                                               chunk_size=500), **kwargs)
        assert (two.info["backend"], two.info["n_jobs"]) == (backend, 2)
        for name in ("delta", "delta_lower", "delta_forward", "delta_reverse", "floor"):
            np.testing.assert_array_equal(getattr(one, name), getattr(two, name))


def test_dask_local_cluster_gives_the_same_report_as_loky(gaussian_batched):
    pytest.importorskip("distributed")
    kwargs = dict(eps=EPS, n_samples=20_000, seed=11, scorer="quadratic")
    local = audit(gaussian_batched, D[0], D_PRIME[0], execution=Execution(chunk_size=3_000, n_jobs=2), **kwargs)
    dask = audit(gaussian_batched, D[0], D_PRIME[0], execution=Execution(backend="dask", chunk_size=3_000, n_jobs=2),
                 **kwargs)
    for name in ("delta", "delta_lower", "delta_upper", "floor"):
        np.testing.assert_array_equal(getattr(local, name), getattr(dask, name))
    # an existing cluster, reached through its scheduler address
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:
        remote = audit(gaussian_batched, D[0], D_PRIME[0], **kwargs,
                       execution=Execution(backend="dask", scheduler=cluster.scheduler_address, chunk_size=3_000,
                                           n_jobs=2))
    np.testing.assert_array_equal(local.delta, remote.delta)


def test_same_seed_same_report_different_seed_different(gaussian_batched):
    a = audit(gaussian_batched, D[0], D_PRIME[0], eps=EPS, n_samples=5_000, seed=2, scorer="quadratic")
    b = audit(gaussian_batched, D[0], D_PRIME[0], eps=EPS, n_samples=5_000, seed=2, scorer="quadratic")
    c = audit(gaussian_batched, D[0], D_PRIME[0], eps=EPS, n_samples=5_000, seed=3, scorer="quadratic")
    np.testing.assert_array_equal(a.delta, b.delta)
    assert not np.array_equal(a.delta, c.delta)


def test_mechanism_object_and_neighbor_relation_are_used():
    mech = GaussianMechanism(sigma=1.0)
    report = audit(mech, D, D_PRIME, eps=EPS, n_samples=20_000, seed=0, scorer="quadratic")
    assert report.mechanism == "test-gaussian" and report.info["params"] == {"sigma": 1.0}
    assert report.neighbor == {"relation": "replace", "row": 0, "how": "given"}
    assert report.theory is None  # no output law


def test_violation_of_an_understated_claim_is_detected(gaussian_batched):
    # mu = 1: delta(0.5) = 0.20; claiming delta = 0.01 at eps = 0.5 must be a violation, and claiming
    # delta = 0.5 (above the truth) must not.
    bad = audit(gaussian_batched, D[0], D_PRIME[0], eps=EPS, n_samples=20_000, seed=0, scorer="quadratic",
                claimed=(0.5, 0.01))
    good = audit(gaussian_batched, D[0], D_PRIME[0], eps=EPS, n_samples=20_000, seed=0, scorer="quadratic",
                 claimed=(0.5, 0.5))
    assert bad.verdict == "violation" and bad.verdict.confidence > 0.999
    assert bad.verdict.lower_bound <= gaussian_delta_reference(0.5, 1.0)
    assert good.verdict == "no violation found" and good.verdict.samples_needed < 20_000
    assert "would make delta" not in str(good.verdict)  # the audit was already larger than that
    # delta(3) = 0.0015 while 1,000 held-out samples cannot certify anything below ~0.1 at eps = 3
    tiny = audit(gaussian_batched, D[0], D_PRIME[0], eps=EPS, n_samples=2_000, seed=0, scorer="quadratic",
                 claimed=(3.0, 1e-6))
    assert tiny.verdict == "inconclusive" and tiny.verdict.floor > 0.05


def test_json_round_trip_and_frame(tmp_path, gaussian_batched):
    mechanism = batched(gaussian_batched, exact=lambda e: gaussian_delta_reference(e, 1.0))
    report = audit(mechanism, D[0], D_PRIME[0], eps=EPS, n_samples=5_000, seed=0, scorer="quadratic",
                   claimed=(0.5, 0.01))
    path = tmp_path / "report.json"
    report.to_json(path)
    data = json.loads(path.read_text())
    assert data["seed"]["entropy"] == 0 and "numpy" in data["info"]["versions"]
    assert set(data["timings"]) >= {"total", "training", "estimation"}
    back = AuditReport.from_json(path)
    assert list(data)[:12] == ["eps", "delta", "delta_lower", "delta_upper", "delta_forward", "delta_reverse",
                               "lower_forward", "lower_reverse", "upper_forward", "upper_reverse", "floor", "theory"]
    for name in ("eps", "delta", "delta_lower", "delta_upper", "delta_forward", "lower_reverse", "upper_forward",
                 "floor", "theory", "theory_forward"):
        np.testing.assert_array_equal(getattr(back, name), getattr(report, name))
    assert isinstance(back.estimate, Curve) and isinstance(back.exact, Curve)
    np.testing.assert_array_equal(report.lower.delta, np.maximum(report.lower_forward, report.lower_reverse))
    assert back.verdict == report.verdict and back.info == data["info"]
    frame = report.to_frame()
    assert list(frame["eps"]) == list(EPS) and "theory" in frame and len(frame) == EPS.size


def test_plot_writes_a_png(tmp_path, gaussian_batched):
    mechanism = batched(gaussian_batched, exact=lambda e: gaussian_delta_reference(e, 1.0))
    report = audit(mechanism, D[0], D_PRIME[0], eps=EPS, n_samples=5_000, seed=0, scorer="quadratic")
    report.plot(tmp_path / "spectrum.png")
    assert (tmp_path / "spectrum.png").read_bytes()[:4] == b"\x89PNG"


def test_explicit_wrappers_force_the_calling_convention():
    def ambiguous(*args):
        data, n, rng = args
        return data + rng.standard_normal((n, 1))

    with pytest.raises(TypeError, match="auditor.batched"):
        audit(ambiguous, 0.0, 1.0, eps=EPS, n_samples=2_000)
    report = audit(auditor.batched(ambiguous), 0.0, 1.0, eps=EPS, n_samples=2_000, scorer="quadratic")
    assert report.info["kind"] == "batched"


@pytest.mark.parametrize("output, message", [
    (lambda data, n, rng: rng.standard_normal((n + 1, 1)), "asked for"),
    (lambda data, n, rng: np.full((n, 1), np.nan), "NaN"),
    (lambda data, n, rng: rng.standard_normal((n, 1 + int(data))), "shape"),
])
def test_bad_mechanism_output_is_reported(output, message):
    with pytest.raises(ValueError, match=message):
        audit(output, 0, 1, eps=EPS, n_samples=2_000)


def test_bad_arguments_are_reported(gaussian_batched):
    with pytest.raises(ValueError, match="eps"):
        audit(gaussian_batched, D[0], D_PRIME[0], eps=[np.nan, 0.0])
    with pytest.raises(ValueError, match="alpha"):
        audit(gaussian_batched, D[0], D_PRIME[0], alpha=1.5)
    with pytest.raises(ValueError, match="n_samples"):
        audit(gaussian_batched, D[0], D_PRIME[0], n_samples=10)
    with pytest.raises(ValueError, match="too few samples for alpha"):
        audit(gaussian_batched, D[0], D_PRIME[0], eps=[0.0], n_samples=400, alpha=1e-80)
    with pytest.raises(ValueError, match="claimed delta"):
        audit(gaussian_batched, D[0], D_PRIME[0], claimed=(1.0, 2.0))
    with pytest.raises(ValueError, match="unknown scorer"):
        audit(gaussian_batched, D[0], D_PRIME[0], scorer="forest", n_samples=2_000)
    with pytest.raises(TypeError, match="Scorer protocol"):
        audit(gaussian_batched, D[0], D_PRIME[0], scorer=object(), n_samples=2_000)
    with pytest.raises(ValueError, match="backend"):
        audit(gaussian_batched, D[0], D_PRIME[0], n_samples=2_000, execution=Execution(backend="spark"))


def test_negative_eps_is_accepted():
    # eps is any finite number; below 0 the whole output space is an event, so delta(eps) >= 1 - e^eps
    # and the estimate, which sweeps that event too, is >= 1 - e^eps exactly.
    report = audit(lambda data, n, rng: data + rng.standard_normal((n, 1)), 1.0, 0.0, eps=[-1.0, 0.0, 0.5],
                   n_samples=4_000, seed=0, scorer="quadratic")
    assert report.delta[0] >= 1 - np.exp(-1.0)
    np.testing.assert_array_equal(report.eps, [-1.0, 0.0, 0.5])


def test_datasets_are_validated_at_the_boundary():
    mech = GaussianMechanism(sigma=1.0)
    with pytest.raises(ValueError, match="D contains NaN"):
        audit(mech, np.array([[np.nan]]), D_PRIME, n_samples=2_000)
    with pytest.raises(ValueError, match="2-D"):
        audit(mech, np.ones(3), None, neighbor="remove:0", n_samples=2_000)


def test_datasets_that_are_not_neighbours_are_rejected():
    mech = GaussianMechanism(sigma=1.0)
    with pytest.raises(ValueError, match="not neighbours under 'remove'"):
        audit(mech, np.zeros((3, 1)), np.ones((2, 1)), neighbor="remove", n_samples=2_000)
    with pytest.raises(ValueError, match="differ in 2 rows"):
        audit(mech, np.zeros((3, 1)), np.array([[1.0], [1.0], [0.0]]), n_samples=2_000)


def _raising_claim(eps):
    raise ZeroDivisionError("the claim's own bug")


ROWS = np.array([[1.0], [0.0], [2.0]])


@pytest.mark.parametrize("options,error,message", [
    (dict(seed=-1), ValueError, "seed must be a non-negative integer"),
    (dict(eps=[0.0, 700.0, 710.0]), ValueError, "eps must be at most 709.78"),
    (dict(eps=[700.0]), ValueError, "no sample size up to 10\\^15 per side can at the smallest eps 700"),
    (dict(claimed=_raising_claim), ZeroDivisionError, "the claim's own bug"),
    (dict(claimed=lambda eps: "0.5 or so"), TypeError, "must return a number"),
    (dict(claimed=lambda eps: np.full(np.shape(eps), 2.0)), ValueError, "gives delta = 2 at eps = 0; a claimed delta "
                                                                        "must lie in \\[0, 1\\]"),
    (dict(D_prime=ROWS.copy()), ValueError, "D_prime is identical to D"),
    (dict(neighbor="replace:0"), ValueError, "needs the new values: Neighbor\\('replace', 0, replacement=...\\)"),
    (dict(neighbor="replace:0", D_prime=ROWS + 1), ValueError, "not neighbours under 'replace'"),
    (dict(n_samples=10**300), ValueError, "needs about .* of memory, more than the .* available"),
])
def test_every_argument_is_checked_before_any_sampling(options, error, message):
    # before the fixes: eps >= 709.8 looped for minutes (and 710 in a grid gave a NaN estimate), a claimed
    # curve was first called after sampling and training, chunk_size=-5 failed inside numpy, seed=-1 in
    # numpy's words, and n_samples=1e300 was accepted
    mechanism, calls = counting_mechanism()
    kwargs = dict(D_prime=None, neighbor="remove:0", eps=EPS, n_samples=2_000, scorer="quadratic", progress=False)
    kwargs.update(options)
    with pytest.raises(error, match=message):
        audit(mechanism, ROWS, **kwargs)
    assert calls == []


def test_an_output_too_large_for_the_memory_is_refused_after_the_shape_probe(monkeypatch):
    # 2,000 values per sample: the training samples alone are 2 sides x 2 copies x 1,000 x 2,000 x 8 B = 64 MB
    from ndis.core import budget

    monkeypatch.setattr(budget, "available_memory", lambda: 32 * 2**20)
    calls = []

    def wide(data, n, rng):
        calls.append(n)
        return rng.standard_normal((n, 2_000)) + data

    with pytest.raises(ValueError, match="needs about 6.*MB of memory, more than the 32 MB available \\(largest part: "
                                         "training samples"):
        audit(wide, 1.0, 0.0, eps=EPS, n_samples=2_000, scorer="quadratic", progress=False)
    assert calls == [2, 2]  # the shape probe of each side, nothing more


def test_the_default_neighbour_is_the_command_lines(tmp_path, capsys):
    # one default (core.neighbors.DEFAULT_NEIGHBOR): the same audit, seed for seed, in Python and on the CLI
    from ndis.cli import main
    from ndis.core import neighbors
    from ndis.experiments import datasets

    data = "synthetic:n=20,d=2,seed=0"
    report = audit(get("gaussian", sigma=1.0), datasets.load(data), eps=np.linspace(0, 1, 3), n_samples=2_000,
                   seed=3, scorer="quadratic", progress=False)
    assert main(["audit", "gaussian", "--param", "sigma=1", "--data", data, "--eps", "0:1:3", "--samples", "2000",
                 "--seed", "3", "--scorer", "quadratic", "--out", str(tmp_path)]) == 0
    saved = json.loads((tmp_path / "report.json").read_text())
    assert neighbors.DEFAULT_NEIGHBOR == "remove:worst" and report.neighbor["relation"] == "remove"
    assert saved["neighbor"] == report.neighbor
    assert (tmp_path / "spectrum.csv").read_text() == report.to_frame().to_csv(index=False)


@pytest.mark.parametrize("neighbor,replacement,row", [("replace:1", [5.0, -1.0], [5.0, -1.0]),
                                                      ("entry:1", (1, 7.0), [0.0, 7.0])])
def test_a_replacement_gives_the_audit_of_the_dataset_it_makes(neighbor, replacement, row):
    mechanism, _ = counting_mechanism()
    data = np.array([[1.0, 2.0], [0.0, 1.0], [2.0, 0.5]])
    changed = data.copy()
    changed[1] = row
    options = dict(eps=EPS, n_samples=2_000, seed=4, scorer="quadratic", progress=False)
    spec = Neighbor.parse(neighbor)
    given = audit(mechanism, data, neighbor=Neighbor(spec.relation, spec.row, replacement), **options)
    built = audit(mechanism, data, changed, neighbor=neighbor.split(":")[0], **options)
    assert given.neighbor == built.neighbor == {"relation": neighbor.split(":")[0], "row": 1,
                                                                "how": "given"}
    np.testing.assert_array_equal(given.delta, built.delta)
    np.testing.assert_array_equal(given.delta_lower, built.delta_lower)


def test_an_interrupted_audit_keeps_what_its_completed_phases_found():
    from ndis.auditor.reporting.progress import Interrupted

    def stopped_in_held_out(data, n, rng):
        if tuple(rng.bit_generator.seed_seq.spawn_key[-3:]) == (0, 1, 2):  # D's held-out phase, third chunk
            raise KeyboardInterrupt
        return data + rng.standard_normal((n, 1))

    with pytest.raises(Interrupted, match="during held-out samples on D .*completed: training samples on D ") as stop:
        audit(stopped_in_held_out, 1.0, 0.0, eps=EPS, n_samples=2_000, seed=0, scorer="quadratic", progress=False)
    partial = stop.value.partial
    assert partial["status"] == "partial" and partial["interrupted"] == str(stop.value)
    assert [p["phase"] for p in partial["phases_completed"]] == [
        "training samples on D", "training samples on D'", "training 1 scorer(s) on 2 x 1,000 samples"]
    assert partial["info"]["scorer"] == "quadratic/flatten" and partial["info"]["output_shape"] == [1]
    json.dumps(partial, allow_nan=False)  # JSON as it is


def test_acceptance_gaussian_mechanism_at_a_million_samples():
    # Acceptance: sensitivity 1, sigma = 4.8448, plain callable, 1e6 samples per side: max error
    # <= 0.005 over eps in [0, 1] and the lower bound never above the truth. With 5e5 held out per side
    # the SE of delta-hat is <= sqrt((1 + e^2) / 4 / 5e5) = 0.0021, so 0.005 is ~2.4 SE on the worst eps
    # (observed 0.0013).
    sigma = 4.8448

    def mechanism(data, n, rng):
        return data + sigma * rng.standard_normal((n, 1))

    eps = np.linspace(0, 1, 41)
    report = audit(batched(mechanism, exact=lambda e: gaussian_delta_reference(e, 1 / sigma)), 1.0, 0.0, eps=eps,
                   n_samples=10**6, seed=0, scorer="quadratic")
    assert np.max(np.abs(report.delta - report.theory)) <= 0.005
    assert np.all(report.delta_lower <= report.theory)


@pytest.mark.slow
def test_acceptance_violation_rates_at_a_million_samples():
    # Acceptance: half the claimed sigma is flagged as violating (1, 1e-5) in >= 95% of 20 runs,
    # the correct sigma in <= 5% (i.e. at most 1 of 20).
    rates = {}
    for sigma in (4.8448 / 2, 4.8448):
        def mechanism(data, n, rng, sigma=sigma):
            return data + sigma * rng.standard_normal((n, 1))

        rates[sigma] = sum(audit(mechanism, 1.0, 0.0, eps=np.linspace(0, 2, 41), n_samples=10**6, seed=seed,
                                 scorer="quadratic", claimed=(1.0, 1e-5)).verdict == "violation"
                           for seed in range(20)) / 20
    assert rates[4.8448 / 2] >= 0.95 and rates[4.8448] <= 0.05
