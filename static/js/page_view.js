// Clause Review: the page view of a PDF original on the review page (templates/reviewer/_page_image.html);
// an office original's pages are those LibreOffice laid out, and a note under each says which it shows.
// Each shown page is drawn by the server (an image at one of a few widths) and the quote's glyph boxes,
// fetched as JSON, are drawn over it as SVG rectangles (attributes, not inline styles: the CSP forbids
// those). The text view stays one click (or "v") away; a page that cannot be drawn shows its text.
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var WIDTHS = [800, 1200, 2000];  // ingest.page_view.IMAGE_WIDTHS
  var ZOOMS = [1, 1.5, 2, 3];
  var revealed = false;  // the first box has been scrolled into view since the workspace changed

  function stored(store, key, fallback) {
    try { return window[store].getItem(key) || fallback; } catch (e) { return fallback; }
  }
  function keep(store, key, value) {
    try { window[store].setItem(key, value); } catch (e) { /* private mode */ }
  }
  function viewer() { return document.getElementById("viewer"); }
  function figures() {
    var v = viewer();
    return v ? Array.prototype.slice.call(v.querySelectorAll("[data-page-image]")) : [];
  }
  function mode() { return stored("localStorage", "source-view", "page") === "text" ? "text" : "page"; }
  function zoomIndex() {
    var i = parseInt(stored("sessionStorage", "page-zoom", "0"), 10);
    return i >= 0 && i < ZOOMS.length ? i : 0;
  }

  function setup() {
    var all = figures(), tools = document.querySelector("[data-page-tools]");
    if (!all.length) { return; }
    revealed = false;
    if (tools) { tools.hidden = false; }
    all.forEach(function (figure) {
      var img = figure.querySelector("img");
      img.addEventListener("error", function () { failed(figure, img); });
      img.addEventListener("load", function () { revealBox(); });
    });
    show(mode());
    loadBoxes();
  }

  // Page or text: the figures or the page texts (a page whose image failed keeps its text).
  function show(view) {
    var v = viewer();
    if (!v) { return; }
    v.classList.toggle("page-mode", view === "page");
    figures().forEach(function (figure) {
      var broken = figure.classList.contains("failed"), text = figure.parentNode.querySelector(".page-text");
      var office = figure.parentNode.querySelector("[data-office-note]");
      figure.hidden = view !== "page" || broken;
      if (text) { text.hidden = view === "page" && !broken; }
      if (office) { office.hidden = figure.hidden; }
    });
    Array.prototype.forEach.call(document.querySelectorAll("[data-view]"), function (button) {
      button.setAttribute("aria-pressed", button.getAttribute("data-view") === view ? "true" : "false");
    });
    if (view === "page") { sizeImages(); revealBox(); } else { revealMark(v); }
  }

  // In the text view, the quote's mark in the viewer's upper third (as app.js does after a swap).
  function revealMark(v) {
    var mark = v.querySelector("mark[data-citation-id]") || v.querySelector("mark[data-correction]") ||
      v.querySelector("mark[data-closest]");
    if (!mark) { return; }
    var offset = mark.getBoundingClientRect().top - v.getBoundingClientRect().top + v.scrollTop;
    v.scrollTop = Math.max(0, offset - v.clientHeight / 3);
  }

  // Each figure as wide as the zoom says; its image drawn at the smallest width that fills it sharply.
  function sizeImages() {
    var zoom = ZOOMS[zoomIndex()], ratio = window.devicePixelRatio || 1;
    figures().forEach(function (figure) {
      if (figure.hidden) { return; }
      // a class per zoom level, not an inline width: htmx copies a style attribute when it settles a swap,
      // which the CSP refuses
      ZOOMS.forEach(function (z) { figure.classList.toggle("zoom-" + Math.round(z * 100), z === zoom); });
      var need = figure.getBoundingClientRect().width * ratio, width = WIDTHS[WIDTHS.length - 1];
      for (var i = 0; i < WIDTHS.length; i++) { if (WIDTHS[i] >= need) { width = WIDTHS[i]; break; } }
      var img = figure.querySelector("img"), src = figure.getAttribute("data-src").replace(/w\d+\.png$/, "w" + width + ".png");
      if (img.getAttribute("src") !== src) { img.setAttribute("src", src); }
    });
    var level = document.getElementById("zoom-level"), i = zoomIndex();
    if (level) { level.textContent = Math.round(zoom * 100) + "%"; }
    var out = document.getElementById("zoom-out"), into = document.getElementById("zoom-in");
    if (out) { out.disabled = i === 0; }
    if (into) { into.disabled = i === ZOOMS.length - 1; }
  }

  function zoom(step) {
    var i = Math.min(ZOOMS.length - 1, Math.max(0, zoomIndex() + step));
    keep("sessionStorage", "page-zoom", String(i));
    revealed = false;
    sizeImages();
    revealBox();
  }

  function failed(figure, img) {
    figure.classList.add("failed");
    var note = figure.parentNode.querySelector(".image-note"), page = figure.getAttribute("data-page-image");
    show(mode());
    if (!note) { return; }
    note.hidden = false;
    note.textContent = "The image of page " + page + " could not be drawn; its text is shown instead.";
    fetch(img.getAttribute("src"), { credentials: "same-origin" }).then(function (response) {
      return response.ok ? "" : response.text();
    }).then(function (reason) {
      if (reason && reason.length < 300) {
        note.textContent = "The image of page " + page + " could not be drawn (" + reason.trim().replace(/\.$/, "") +
          "); its text is shown instead.";
      }
    }).catch(function () { /* the first note stands */ });
  }

  // The boxes of the citations the viewer names (the quote in hand, or the clause's quotes on a page).
  function loadBoxes() {
    var v = viewer(), urls = v ? (v.getAttribute("data-boxes") || "").split(" ").filter(Boolean) : [];
    var current = v ? v.getAttribute("data-citation") : null;
    urls.forEach(function (url) {
      fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } }).then(function (response) {
        return response.ok ? response.json() : null;
      }).then(function (data) {
        if (data && document.contains(v)) { draw(v, data, String(data.citation) === current); }
      }).catch(function () { /* no boxes: the page still shows */ });
    });
  }

  function draw(v, data, current) {
    if (current) { (data.pages || []).forEach(function (frame) { laidOut(v, frame); }); }
    data.boxes.forEach(function (box) {
      var figure = v.querySelector('[data-page-image="' + box.page + '"]');
      if (!figure) { return; }
      var rect = document.createElementNS(SVG, "rect");
      rect.setAttribute("x", box.left * 1000);
      rect.setAttribute("y", box.top * 1000);
      rect.setAttribute("width", Math.max(0, box.right - box.left) * 1000);
      rect.setAttribute("height", Math.max(0, box.bottom - box.top) * 1000);
      var passage = data.citation === "closest" || data.citation === "correction";  // not citations
      rect.setAttribute("class", passage ? "box " + data.citation : current ? "box current" : "box");
      rect.setAttribute("data-citation-id", data.citation);
      figure.querySelector("svg").appendChild(rect);
    });
    revealBox();
  }

  // An office original: which of LibreOffice's pages is shown as ours, and whether the quote was found on it.
  function laidOut(v, frame) {
    var figure = v.querySelector('[data-page-image="' + frame.number + '"]');
    var note = figure && figure.parentNode.querySelector("[data-office-note]");
    if (!note || !frame.pdf_page) { return; }
    note.textContent = "Page " + frame.number + " as LibreOffice lays out the original: its page " + frame.pdf_page +
      " of " + frame.pdf_pages + (frame.located ? ", where the quote is found" : "") + " (its pages can break elsewhere than ours)." +
      (frame.note ? " " + frame.note : "");
  }

  // Scroll the viewer (not the window) so the quote's first box sits in its upper third, once the image
  // has its height; sideways too when zoomed in.
  function revealBox() {
    var v = viewer();
    if (revealed || !v || mode() !== "page") { return; }
    var box = v.querySelector("rect.current") || v.querySelector("rect.correction") || v.querySelector("rect.closest") ||
      v.querySelector("rect.box");
    if (!box) { return; }
    var img = box.closest("figure").querySelector("img");
    if (!img.complete || !img.naturalHeight) { return; }
    var r = box.getBoundingClientRect(), frame = v.getBoundingClientRect();
    v.scrollTop = Math.max(0, r.top - frame.top + v.scrollTop - v.clientHeight / 3);
    if (r.left < frame.left || r.right > frame.right) {
      v.scrollLeft = Math.max(0, r.left - frame.left + v.scrollLeft - 24);
    }
    revealed = true;
  }

  function isTyping(el) {
    if (!el) { return false; }
    var tag = el.tagName;
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || el.isContentEditable;
  }

  document.addEventListener("click", function (event) {
    var target = event.target.closest ? event.target : null;
    var view = target && target.closest("[data-view]"), step = target && target.closest("[data-zoom]");
    if (view) {
      keep("localStorage", "source-view", view.getAttribute("data-view"));
      revealed = false;
      show(mode());
    } else if (step) {
      zoom(parseInt(step.getAttribute("data-zoom"), 10));
    }
  });
  // v: page or text; + / -: zoom the page (not while typing, nor with a modifier: Ctrl + zooms the browser)
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target) || !figures().length) { return; }
    if (event.key === "v") {
      event.preventDefault();
      keep("localStorage", "source-view", mode() === "page" ? "text" : "page");
      revealed = false;
      show(mode());
    } else if ((event.key === "+" || event.key === "=" || event.key === "-") && mode() === "page") {
      event.preventDefault();
      zoom(event.key === "-" ? -1 : 1);
    }
  });
  document.addEventListener("htmx:afterSettle", function (event) {
    if (event.target && event.target.id === "workspace") { setup(); }
  });
  document.addEventListener("htmx:historyRestore", setup);
  window.addEventListener("resize", function () { if (figures().length && mode() === "page") { sizeImages(); } });
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", setup); } else { setup(); }
})();
