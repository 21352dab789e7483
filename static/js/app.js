// Clause Review: the little JavaScript the pages use (CSP allows only our own static scripts).
(function () {
  "use strict";

  // Attach the CSRF token to every htmx request (the token is in a meta tag; no inline script needed).
  document.addEventListener("htmx:configRequest", function (event) {
    var meta = document.querySelector('meta[name="csrf-token"]');
    if (meta) { event.detail.headers["X-CSRFToken"] = meta.content; }
  });

  function allClauseLinks() { return Array.prototype.slice.call(document.querySelectorAll("#clause-list .clause-link")); }
  function shown(el) { return !el.closest("[hidden]"); }
  function clauseLinks() { return allClauseLinks().filter(shown); }

  // Clause filter (All / Found / Flagged / Not reviewed / Less sure): hides list items in the browser; the choice
  // is kept for the tab's session, and the counts follow each decision.
  var FILTERS = {
    all: function () { return true; },
    found: function (li) { return li.getAttribute("data-status") === "found"; },
    unverified: function (li) { return li.getAttribute("data-status") === "unverified"; },
    pending: function (li) { return li.getAttribute("data-review") === "pending"; },
    unsure: function (li) { return li.getAttribute("data-unsure") === "1"; }
  };
  function currentFilter() {
    var saved = null;
    try { saved = window.sessionStorage.getItem("clause-filter"); } catch (e) { saved = null; }
    return FILTERS[saved] ? saved : "all";
  }
  function applyFilter() {
    var bar = document.getElementById("clause-filter");
    var list = document.getElementById("clause-list");
    if (!bar || !list) { return; }
    bar.hidden = false;
    // answers to free questions are listed apart (.question-item): not clauses, neither counted nor hidden
    var show = currentFilter();
    var items = Array.prototype.slice.call(list.querySelectorAll(".clause-item:not(.question-item)"));
    Array.prototype.forEach.call(bar.querySelectorAll("button[data-show]"), function (button) {
      var name = button.getAttribute("data-show");
      button.setAttribute("aria-pressed", name === show ? "true" : "false");
      button.querySelector(".n").textContent = items.filter(FILTERS[name]).length;
    });
    items.forEach(function (li) { li.hidden = !FILTERS[show](li); });
    Array.prototype.forEach.call(list.querySelectorAll(".clause-group"), function (group) {
      var visible = group.querySelectorAll(".clause-item:not([hidden])").length, count = group.querySelector(".group-title .muted");
      group.hidden = !visible;
      if (count) { count.textContent = visible; }
    });
    var empty = list.querySelector(".filter-empty");
    if (empty) { empty.hidden = !items.length || items.some(function (li) { return !li.hidden; }); }
  }
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("#clause-filter button[data-show]");
    if (!button) { return; }
    try { window.sessionStorage.setItem("clause-filter", button.getAttribute("data-show")); } catch (e) { /* private mode */ }
    applyFilter();
  });
  document.addEventListener("htmx:oobAfterSwap", applyFilter);
  function currentLink() { return document.querySelector('#clause-list .clause-link[aria-current="true"]'); }

  // Focus the current clause's link or, when the filter hides it ("Not reviewed" after a decision),
  // its "Recorded" line, so Tab goes on from the clause and not from the page's top. False if neither.
  function focusClause() {
    var link = currentLink(), saved = document.getElementById("decision-saved");
    var to = link && shown(link) ? link : saved;
    if (to) { to.focus({ preventScroll: true }); }
    return !!to;
  }

  // Keep the clause list's selection in step with the workspace (after htmx swaps and history moves);
  // every link, hidden by the filter or not, so a hidden one never stays current.
  function syncCurrent() {
    var holder = document.querySelector("#workspace [data-current-extraction]");
    var id = holder ? holder.getAttribute("data-current-extraction") : null;
    allClauseLinks().forEach(function (a) {
      if (a.getAttribute("data-extraction-id") === id) { a.setAttribute("aria-current", "true"); }
      else { a.removeAttribute("aria-current"); }
    });
  }

  // Show the highlighted span: scroll the viewer (not the window) so it sits in its upper third.
  function revealMark() {
    var viewer = document.getElementById("viewer");
    if (!viewer) { return; }
    var target = viewer.querySelector("mark[data-citation-id]") || viewer.querySelector("mark[data-correction]") ||
      viewer.querySelector("mark[data-closest]") || viewer.querySelector("[data-page]");
    if (!target) { return; }
    var offset = target.getBoundingClientRect().top - viewer.getBoundingClientRect().top + viewer.scrollTop;
    viewer.scrollTop = Math.max(0, offset - (target.tagName === "MARK" ? viewer.clientHeight / 3 : 8));
  }

  // Say in a few words what the swap changed, in a status line that stays in the page (the workspace
  // or the upload results are not live regions: a screen reader would read them out whole).
  function announce(statusId, holder) {
    var status = document.getElementById(statusId);
    if (status && holder) { status.textContent = holder.getAttribute("data-announce"); }
  }

  // A page or citation link used from the keyboard keeps the focus (htmx restores it by id); when
  // the new view has no such link (the last citation has no "next"), its counterpart takes it.
  var COUNTERPART = { "next-citation": "prev-citation", "prev-citation": "next-citation",
                      "next-page": "prev-page", "prev-page": "next-page" };
  var navUsed = null;
  function refocusNav() {
    var active = document.activeElement, nav = navUsed;
    navUsed = null;
    if (!nav || (active && active !== document.body && document.contains(active))) { return; }
    var again = document.querySelector('#workspace [data-nav="' + nav + '"]') ||
      document.querySelector('#workspace [data-nav="' + COUNTERPART[nav] + '"]');
    if (again) { again.focus({ preventScroll: true }); }
  }

  function afterWorkspace(decided, found) {
    syncCurrent();
    sayHeldKey();
    revealMark();
    announce("workspace-status", document.querySelector("#workspace [data-announce]"));
    refocusNav();
    // After a recorded decision, a clause found (or when the focused control was replaced), focus
    // goes to the clause in the list, so j/k/a/r/e keep working; a refused decision keeps focus
    // where it was (see focusClause for a clause the filter now hides).
    var active = document.activeElement;
    var lost = !active || active === document.body || !document.contains(active);
    if (lost || found || (decided && !document.getElementById("decision-error"))) { focusClause(); }
  }

  // A panel that refreshes itself (the clause list while clauses are being extracted, the documents
  // table, a bulk run, the benchmark runs) replaces the link the keyboard was on with its new copy;
  // htmx gives the focus back only to an element with an id, so without this it fell to the page's
  // top. Keep it on the link to the same place (the clause in hand stays focused).
  function polls(elt) { return !!elt && /\bevery\b/.test(elt.getAttribute("hx-trigger") || ""); }
  var polledFocus = null;
  document.addEventListener("htmx:beforeSwap", function (event) {
    if (event.target && event.target.id === "workspace") {
      var used = document.activeElement;
      navUsed = used && event.target.contains(used) ? used.getAttribute("data-nav") : null;
    }
    var active = document.activeElement, panel = event.target;
    polledFocus = polls(event.detail.elt) && panel && panel.id && active && !active.id && panel.contains(active) &&
      active.getAttribute("href") ? { panel: panel.id, href: active.getAttribute("href") } : null;
  });
  function refocusPolled(panel) {
    var keep = polledFocus, active = document.activeElement;
    if (!keep || !panel || panel.id !== keep.panel) { return; }
    polledFocus = null;
    if (active && active !== document.body && document.contains(active)) { return; }
    var again = Array.prototype.filter.call(panel.querySelectorAll("a[href]"), function (a) {
      return a.getAttribute("href") === keep.href;
    })[0];
    if (again) { again.focus({ preventScroll: true }); }
  }

  document.addEventListener("htmx:afterSettle", function (event) {
    applyFilter();
    syncCurrent();
    refocusPolled(event.target);
    if (event.target && event.target.id === "upload-results") { announce("upload-status", event.target); }
    if (event.target && event.target.id === "workspace") {
      var config = event.detail.requestConfig, posted = config && config.verb === "post" && config.elt;
      afterWorkspace(!!(posted && posted.id === "decision-form"), !!(posted && posted.id === "find-form"));
    }
  });
  // A decision or a search the server never took (a 403 after signing in again in another tab, a 404,
  // a 5xx, no network): htmx swaps nothing, so say so by the form that sent it, which keeps what was typed.
  var FAILED = {
    "decision-form": { id: "decision-error", what: "Not saved" },
    "find-form": { id: "find-error", what: "The search did not run" },
    "upload-form": { id: "upload-error", what: "Nothing was uploaded" }
  };
  function failureReason(status) {
    if (!status) { return "the server could not be reached"; }
    if (status === 400) { return "the server refused it (400): too many files at once?"; }
    if (status === 413) { return "it is too large for the server (413)"; }
    if (status === 403) { return "the server refused it (403): you may have signed out or signed in again in another tab"; }
    if (status === 404) { return "the server no longer finds this page (404)"; }
    if (status >= 500) { return "the server failed (" + status + ")"; }
    return "the server refused it (" + status + ")";
  }
  function showFailure(event) {
    var elt = event.detail.elt, form = elt && elt.closest ? elt.closest("form") : null, how = form && FAILED[form.id];
    if (!how) { return; }
    var old = document.getElementById(how.id), saved = document.getElementById("decision-saved");
    if (old) { old.remove(); }
    if (saved) { saved.remove(); }  // an earlier "Recorded" must not read as this one's answer
    var alert = document.createElement("p");
    alert.id = how.id;
    alert.className = form.id === "decision-form" ? "alert error" : "error small";
    alert.setAttribute("role", "alert");
    alert.textContent = how.what + ": " + failureReason(event.detail.xhr && event.detail.xhr.status) +
      ". Reload the page and try again.";
    if (form.id === "decision-form") { form.parentNode.insertBefore(alert, form); } else { form.appendChild(alert); }
  }
  // A polling panel whose page the user may no longer see (removed from the engagement, signed out):
  // stop asking every few seconds and say why (htmx stops a poll whose element left the page).
  function stopPolling(event) {
    var elt = event.detail.elt, status = event.detail.xhr && event.detail.xhr.status;
    if (!elt || !/\bevery\b/.test(elt.getAttribute("hx-trigger") || "") || (status !== 403 && status !== 404)) { return; }
    var note = document.createElement("p");
    note.className = "alert error";
    note.setAttribute("role", "alert");
    note.textContent = "This page is no longer available to you (" + status + "): you may have been removed from " +
      "the engagement or signed out. Reload the page.";
    elt.replaceWith(note);
  }
  document.addEventListener("htmx:responseError", stopPolling);
  document.addEventListener("htmx:responseError", showFailure);
  document.addEventListener("htmx:sendError", showFailure);

  document.addEventListener("htmx:historyRestore", syncCurrent);
  document.addEventListener("DOMContentLoaded", function () { applyFilter(); syncCurrent(); revealMark(); });

  // Upload: show the bytes sent while the files travel.
  document.addEventListener("htmx:xhr:progress", function (event) {
    var bar = document.getElementById("upload-progress");
    if (bar && event.detail.lengthComputable && event.target && event.target.id === "upload-form") {
      bar.hidden = false;
      bar.value = Math.round((event.detail.loaded / event.detail.total) * 100);
    }
  });

  document.addEventListener("htmx:afterRequest", function (event) {
    var form = event.detail.elt, bar = document.getElementById("upload-progress");
    if (!form || form.id !== "upload-form") { return; }
    if (bar) { bar.hidden = true; bar.value = 0; }
    // Files taken: clear the form, so the same files are not sent twice; a refusal keeps them to fix.
    if (event.detail.successful) { form.reset(); }
  });

  function isTyping(el) {
    if (!el) { return false; }
    var tag = el.tagName;
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || el.isContentEditable;
  }

  // j/k: the next/previous clause the filter shows, counted from the one in hand even when the
  // filter has just hidden it (a decision taken under "Not reviewed" moves on to the next one).
  function moveClause(step) {
    var all = allClauseLinks();
    if (!clauseLinks().length) { return; }
    var here = all.indexOf(document.activeElement);
    if (here < 0) { here = all.indexOf(currentLink()); }
    var i = here < 0 ? (step > 0 ? -1 : all.length) : here, link = null;
    for (i += step; i >= 0 && i < all.length; i += step) {
      if (shown(all[i])) { link = all[i]; break; }
    }
    if (!link && here >= 0 && shown(all[here])) { link = all[here]; }  // at the end: stay
    if (!link) { return; }
    link.focus();
    if (link.getAttribute("aria-current") !== "true") { link.click(); }
  }

  // A clause being opened (j/k, a click in the list): until its view is swapped in, the decision form on
  // screen is the one of the clause being left, so a decision taken now would record on a clause the
  // reviewer has moved away from. Its buttons are disabled meanwhile; a decision key is held back and
  // said so on the clause that opens.
  var opening = 0, heldKey = null;  // clauses asked for and not yet shown
  function opensClause(event) {
    var config = event.detail.requestConfig;
    return event.detail.target && event.detail.target.id === "workspace" && !!config && config.verb === "get";
  }
  function disableDecisions(now) {
    Array.prototype.forEach.call(document.querySelectorAll("#decision-form button"), function (b) { b.disabled = now; });
  }
  document.addEventListener("htmx:beforeRequest", function (event) {
    if (opensClause(event)) { opening += 1; disableDecisions(true); }
  });
  // htmx takes over a swapped-in view's links and forms only when it settles it (20 ms later, longer on a
  // busy machine): a decision key pressed meanwhile would have the browser post the form as a page of its
  // own. The workspace is taken over at once instead (htmx skips it when it settles), and a clause counts
  // as shown from then.
  document.addEventListener("htmx:afterSwap", function (event) {
    if (!event.target || event.target.id !== "workspace") { return; }
    window.htmx.process(event.target);
    clauseShown(event);
  });
  // A refused or failed request swaps nothing: it is over when htmx says so.
  document.addEventListener("htmx:afterRequest", function (event) {
    if (!opensClause(event) || event.detail.successful) { return; }
    opening = Math.max(0, opening - 1);
    if (!opening) { disableDecisions(false); heldKey = null; }
  });
  function clauseShown(event) {
    if (opensClause(event)) { opening = Math.max(0, opening - 1); }
    disableDecisions(opening > 0);  // still opening: the clause just shown is not the last one asked for
  }
  function sayHeldKey() {
    if (opening) { return; }  // the key is said on the last clause asked for
    var key = heldKey, form = document.getElementById("decision-form");
    heldKey = null;
    if (!key || !form) { return; }
    var note = document.createElement("p");
    note.id = "decision-held";
    note.className = "alert warn";
    note.setAttribute("role", "alert");
    note.textContent = "Nothing recorded: \u201c" + key + "\u201d was pressed before this clause showed. " +
      "Press it again to decide this clause.";
    form.parentNode.insertBefore(note, form);
  }

  function pressDecision(action) {
    var button = document.querySelector('#decision-form button[data-action="' + action + '"]');
    if (button) { button.click(); }
    return button;
  }

  // The decision the reason box's Enter submits; a refused decision's form comes back with it
  // (data-pending rendered from the draft), so the swap does not forget it.
  function pending(form, action) {
    if (form) { form.setAttribute("data-pending", action); }
  }

  // A form that returns to the page it was sent from (the document type in the header) says which page
  // that is now: htmx moves between clauses without reloading the header.
  document.addEventListener("submit", function (event) {
    var form = event.target, next = form.matches && form.matches("form[data-keeps-place]") && form.elements.next;
    if (next) { next.value = location.pathname + location.search; }
  });

  // Keyboard: j/k next/previous clause, a accept, r reject (reason first), n not in this contract,
  // e edit the text, / find.
  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.altKey || event.metaKey || event.ctrlKey) {
      // Ctrl/Cmd+Enter in the correction box saves it; in the reason box it submits the decision the box
      // was opened for, as Enter does.
      if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
        var boxId = event.target.id, opened = event.target.form && event.target.form.getAttribute("data-pending");
        if (boxId === "decision-corrected") { event.preventDefault(); pressDecision("correct"); }
        else if (boxId === "decision-reason" && opened) { event.preventDefault(); pressDecision(opened); }
      }
      return;
    }
    var target = event.target;
    if (isTyping(target)) {
      if (event.key === "Escape" && !focusClause()) { target.blur(); }
      // Enter in the reason box submits the decision it was opened for (r → reject); Shift+Enter is a new line.
      if (event.key === "Enter" && !event.shiftKey && target.id === "decision-reason") {
        var form = target.form, action = form && form.getAttribute("data-pending");
        if (action) { event.preventDefault(); pressDecision(action); }
      }
      return;
    }
    var form = document.getElementById("decision-form");
    if (opening && form && /^[anre]$/.test(event.key)) {
      event.preventDefault();
      heldKey = event.key;
      return;
    }
    switch (event.key) {
      case "j": event.preventDefault(); moveClause(1); break;
      case "k": event.preventDefault(); moveClause(-1); break;
      case "a": if (form) { event.preventDefault(); pressDecision("accept"); } break;
      case "n": if (form && pressDecision("absent")) { event.preventDefault(); } break;
      case "r":
        if (form) {
          event.preventDefault();
          var reason = document.getElementById("decision-reason");
          if (reason.value.trim()) { pressDecision("reject"); }
          else { pending(form, "reject"); reason.placeholder = "Reason for rejecting, then Enter"; reason.focus(); }
        }
        break;
      case "e":
        if (form) {
          event.preventDefault();
          var box = document.getElementById("correct-box"), text = document.getElementById("decision-corrected");
          if (box) { box.open = true; }
          pending(form, "correct");
          if (text) { text.focus(); text.setSelectionRange(text.value.length, text.value.length); }
        }
        break;
      case "/":
        var find = document.getElementById("find-question");
        if (find) { event.preventDefault(); find.focus(); find.select(); }  // typing replaces the last question
        break;
    }
  });
})();
