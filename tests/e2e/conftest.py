"""Browser tests: Playwright drives Debian's Chromium against pytest-django's live server.

Playwright's sync API runs an event loop in this thread, which Django's async-safety check
would take for async code; the ORM calls the tests make are plain synchronous ones.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"
PASSWORD = "pw-for-tests-1"
# Log what a Content-Security-Policy violation was about (the console error alone does not say).
CSP_REPORTER = """document.addEventListener('securitypolicyviolation', function (e) {
  console.error('CSP violation: ' + e.violatedDirective + ' ' + e.sourceFile + ':' + e.lineNumber + ' ' +
                (e.target && e.target.outerHTML ? e.target.outerHTML.slice(0, 400) : ''));
});"""  # what tests/conftest.py's make_member gives every user


# Colour arithmetic shared by CONTRAST and FOCUS_RING: parse a computed colour, lay one colour over another,
# the WCAG 2 contrast ratio of two colours, and the colour behind an element (the backgrounds of `el` and its
# ancestors up to the first opaque one, on white).
COLOURS = """
  const parse = s => { const n = (s || '').match(/[\\d.]+/g); return n && n.length >= 3 ? [+n[0], +n[1], +n[2], n.length > 3 ? +n[3] : 1] : null; };
  const over = (top, base) => [0, 1, 2].map(i => top[i] * top[3] + base[i] * (1 - top[3]));
  const lum = c => { const f = v => (v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
                     return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
  const ratio = (a, b) => { const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x); return (hi + 0.05) / (lo + 0.05); };
  const flatten = layers => layers.reverse().reduce((bg, layer) => over(layer, bg), [255, 255, 255]);
  const backdrop = el => { const layers = [];
    for (let e = el; e; e = e.parentElement) { const b = parse(getComputedStyle(e).backgroundColor);
      if (b && b[3] > 0) { layers.push(b); if (b[3] === 1) { break; } } }
    return flatten(layers); };
"""

# WCAG 2 contrast ratio of an element's text: its colour (an SVG text's fill) over the backgrounds of its
# ancestors up to the first opaque one, or over `behind` (the SVG shape under it: fill and fill-opacity),
# on white. Element opacity is not counted.
CONTRAST = (
    """(el, behind) => {"""
    + COLOURS
    + """
  let bg;
  if (behind) { const s = getComputedStyle(behind), f = parse(s.fill); f[3] *= parseFloat(s.fillOpacity); bg = flatten([f]); }
  else { bg = backdrop(el); }
  const style = getComputedStyle(el);
  return ratio(over(parse(el instanceof SVGElement ? style.fill : style.color), bg), bg);
}"""
)
AA = 4.5  # WCAG AA for body text


def contrast(locator, behind=None) -> float:
    """The contrast ratio of the text of ``locator`` (one element) on its background (see CONTRAST)."""
    return locator.evaluate(CONTRAST, behind.element_handle() if behind is not None else None)


# The contrast of a focused element's focus indicator with the background it is drawn on (behind the element,
# around it): the highest of its rings' (the outline, and each box-shadow ring of 1px or more around the box).
# A two-colour ring passes when one of its colours stands out on the background (WCAG technique C40), so one
# ring serves the light pages and the dark top bar.
FOCUS_RING = (
    """el => {"""
    + COLOURS
    + """
  const bg = backdrop(el.parentElement), style = getComputedStyle(el), rings = [];
  if (style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 1) { rings.push(parse(style.outlineColor)); }
  // Chromium writes box-shadow as "rgb(r, g, b) x y blur spread[ inset], ...": a ring around the box is x = y = 0
  for (const m of style.boxShadow.matchAll(/(rgba?\\([^)]*\\)) 0px 0px [\\d.]+px ([\\d.]+)px(?! inset)/g)) {
    if (parseFloat(m[2]) >= 1) { rings.push(parse(m[1])); } }
  return Math.max(0, ...rings.map(c => ratio(over(c, bg), bg)));
}"""
)
FOCUS = 3.0  # WCAG 2.2 for a focus indicator against what is next to it (1.4.11, 2.4.13)


def focus_ring_contrast(locator) -> float:
    """The contrast of the focus ring of ``locator`` (focused) with the background around it (FOCUS_RING)."""
    return locator.evaluate(FOCUS_RING)


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/e2e/" in str(item.fspath):
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: run `make browser` (apt-get install chromium chromium-driver)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield chromium
        chromium.close()


class Session:
    """A signed-in browser tab for one user, recording console errors (CSP violations show there)."""

    def __init__(self, browser, base_url: str, user, js: bool = True):
        self.context = browser.new_context(
            base_url=base_url, viewport={"width": 1440, "height": 900}, java_script_enabled=js
        )
        self.context.add_init_script(CSP_REPORTER)
        self.page = self.context.new_page()
        self.user = user
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.set_default_timeout(10_000)
        self.login()

    def login(self):
        page = self.page
        page.goto("/accounts/login/")
        page.fill("#id_username", self.user.username)
        page.fill("#id_password", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(lambda url: "/accounts/login/" not in url)

    def shot(self, name: str, full_page: bool = False) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        # caret="initial": hiding the caret leaves style="" on inputs, which htmx then copies into new content
        self.page.screenshot(path=str(path), full_page=full_page, caret="initial")
        return path

    def settle(self):
        """Wait until htmx has no request in flight and has settled what it swapped in (until then
        it has not taken over the new content's links and forms)."""
        self.page.wait_for_function(
            "() => !document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling, .htmx-added')"
        )


@pytest.fixture
def signed_in(browser, live_server):
    sessions: list[Session] = []

    def make(user, js: bool = True) -> Session:
        session = Session(browser, live_server.url, user, js=js)
        sessions.append(session)
        return session

    yield make
    for session in sessions:
        session.context.close()
    for session in sessions:
        unexpected = [e for e in session.errors if "status of 4" not in e]  # 404/409/422 we asked for
        assert not unexpected, f"browser console errors for {session.user}: {unexpected}"
        assert not session.dialogs, f"a dialog opened (contract text ran?): {session.dialogs}"
