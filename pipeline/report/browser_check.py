"""The HTML report opened in a real browser, as a reader would: headless Chromium (Debian's
``chromium`` and ``chromium-driver``) driven by selenium, at a laptop's width and a phone's.

At each width it checks that every image has loaded, that the console shows no error, that every
in-page link (``href="#..."``) finds its target, and that no table runs past the window unless a box
of its own scrolls it (the page itself never scrolls sideways); and it saves a screenshot of the
first screen for a person to look at. ``python -m pipeline browser-check --html
reports/replication.html --out DIR`` (``make browser-check``) writes ``DIR/browser-check.json`` and
the screenshots, and exits non-zero naming each failure.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pipeline.errors import PipelineError

WIDTHS = {"laptop": 1280, "phone": 390}
HEIGHT = 900
# The headless flags that keep a sandboxed, offline machine's Chromium from reaching out or failing to start.
CHROMIUM_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
INSTALL = "apt-get install chromium chromium-driver (Debian), and pip install -c constraints.txt -e '.[dev]' for selenium"

# Run in the page with the device's width (not window.innerWidth: a mobile layout viewport widens to
# whatever overflows it): what a reader would find wrong, by kind.
PAGE_PROBLEMS = """
const width = arguments[0];
const images = [...document.images].filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.alt || i.src.slice(0, 80));
const links = [...document.querySelectorAll('a[href^="#"]')].map(a => a.getAttribute('href').slice(1))
  .filter(id => id && !document.getElementById(id) && document.getElementsByName(id).length === 0);
const scrolls = element => ['auto', 'scroll'].includes(getComputedStyle(element).overflowX);
const tables = [...document.querySelectorAll('table')].filter(table => {
  if (table.getBoundingClientRect().right <= width + 1) return false;
  for (let box = table.parentElement; box; box = box.parentElement) {
    if (scrolls(box) && box.getBoundingClientRect().right <= width + 1) return false;
  }
  return true;
}).map(table => (table.caption ? table.caption.textContent : table.textContent).trim().slice(0, 80));
return {images: images, links: [...new Set(links)], tables: tables,
        page_width: document.documentElement.scrollWidth, window_width: width,
        num_images: document.images.length, num_tables: document.querySelectorAll('table').length};
"""


@dataclass
class WidthCheck:
    name: str
    width: int
    screenshot: str
    num_images: int
    num_tables: int
    broken_images: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)
    dead_links: list[str] = field(default_factory=list)
    overflowing_tables: list[str] = field(default_factory=list)
    page_scrolls_sideways: bool = False

    def failures(self) -> list[str]:
        found = [f"image not loaded: {name}" for name in self.broken_images]
        found += [f"console error: {message}" for message in self.console_errors]
        found += [f"in-page link to a missing target: #{target}" for target in self.dead_links]
        found += [f"table runs past the window with no scroll of its own: {caption}" for caption in self.overflowing_tables]
        found += ["the page scrolls sideways"] if self.page_scrolls_sideways else []
        return [f"{self.name} ({self.width} px): {failure}" for failure in found]


def browser_paths() -> tuple[str, str]:
    """The system's Chromium and its driver, or a one-line error saying how to install them."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if browser is None or driver is None:
        raise PipelineError(f"no Chromium and chromedriver on PATH: {INSTALL}")
    return browser, driver


def check_report(html: Path, out: Path) -> list[WidthCheck]:
    """Open ``html`` at each of :data:`WIDTHS`; screenshots go to ``out``."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError as error:
        raise PipelineError(f"the browser check needs selenium ({error}): {INSTALL}") from None
    if not html.is_file():
        raise PipelineError(f"{html}: no such report")
    browser, driver_path = browser_paths()
    out.mkdir(parents=True, exist_ok=True)
    checks = []
    with tempfile.TemporaryDirectory() as profile:  # a fresh profile: nothing from an earlier session
        options = webdriver.ChromeOptions()
        options.binary_location = browser
        for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--window-size={max(WIDTHS.values())},{HEIGHT}"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(service=Service(driver_path), options=options)
        try:
            for name, width in WIDTHS.items():
                # The viewport as a device of that width sees it (a phone's: mobile layout, its own scale).
                driver.execute_cdp_cmd(
                    "Emulation.setDeviceMetricsOverride", {"width": width, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": width < 600}
                )
                driver.get(html.resolve().as_uri())
                found = driver.execute_script(PAGE_PROBLEMS, width)
                screenshot = out / f"first-screen-{width}px.png"
                driver.save_screenshot(str(screenshot))
                errors = [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
                checks.append(
                    WidthCheck(
                        name,
                        width,
                        screenshot.name,
                        found["num_images"],
                        found["num_tables"],
                        found["images"],
                        errors,
                        found["links"],
                        found["tables"],
                        found["page_width"] > found["window_width"] + 1,
                    )
                )
        finally:
            driver.quit()
    return checks


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--html", type=Path, default=Path("reports/replication.html"), help="the report to open")
    parser.add_argument("--out", type=Path, required=True, help="where browser-check.json and the screenshots go")


def run(args: argparse.Namespace) -> None:
    checks = check_report(args.html, args.out)
    (args.out / "browser-check.json").write_text(json.dumps([asdict(check) for check in checks], indent=2) + "\n")
    failures = [failure for check in checks for failure in check.failures()]
    for check in checks:
        print(f"{check.name} ({check.width} px): {check.num_images} images, {check.num_tables} tables, screenshot {check.screenshot}")
    if failures:
        raise PipelineError(f"{args.html}: {len(failures)} problem(s) in a browser: " + "; ".join(failures))
