"""report.html renders in a real browser: headless Chromium takes a screenshot (not blank) and
dumps a DOM holding the title and the verdict. Skipped when no Chromium is installed."""

import shutil
import subprocess

import numpy as np
import pytest

from ndis import auditor

from ..conftest import GaussianMechanism

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def _browser() -> str:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    pytest.skip(f"no Chromium binary found (looked for {', '.join(BROWSERS)})")


def _chromium(browser, tmp_path, *options) -> subprocess.CompletedProcess:
    """One headless Chromium run with a fresh profile and no network side traffic."""
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={profile}", *options]
    return subprocess.run(command, capture_output=True, text=True, timeout=180, check=True)


def test_report_html_renders_in_headless_chromium(tmp_path):
    browser = _browser()
    import matplotlib.image

    report = auditor.audit(GaussianMechanism(1.0), np.array([[0.0]]), np.array([[1.0]]), eps=np.linspace(0, 2, 21),
                           n_samples=4_000, seed=0, scorer="quadratic", claimed=(1, 1e-5))
    page = tmp_path / "report.html"
    report.to_html(page, title="Gaussian test audit")
    url = page.resolve().as_uri()

    screenshot = tmp_path / "report.png"
    _chromium(browser, tmp_path, f"--screenshot={screenshot}", "--window-size=1200,1600", url)
    pixels = matplotlib.image.imread(screenshot)
    assert pixels.shape[:2] == (1600, 1200)
    assert pixels[..., :3].var() > 0.005  # not a blank page

    dom = _chromium(browser, tmp_path, "--dump-dom", url).stdout
    assert "<title>Gaussian test audit</title>" in dom
    assert f"Verdict: {report.verdict.label}" in dom and 'src="data:image/png;base64,' in dom
