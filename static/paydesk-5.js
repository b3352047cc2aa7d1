// Paydesk's small page behaviours. No inline scripts anywhere (the CSP
// forbids them); everything hangs off data- attributes.
(function () {
  "use strict";

  function ready(fn) {
    if (document.readyState !== "loading") fn();
    else document.addEventListener("DOMContentLoaded", fn);
  }

  function flash(message) {
    var box = document.getElementById("flash");
    if (!box) return;
    box.textContent = message;
    box.className = "error";
  }

  // [data-expire-after=N] elements (revealed card details) empty themselves
  // after N seconds, so secrets don't stay on an unattended screen.
  function scheduleExpiry(root) {
    var nodes = root.querySelectorAll ? root.querySelectorAll("[data-expire-after]") : [];
    Array.prototype.forEach.call(nodes, function (el) {
      if (el.dataset.expiryScheduled) return;
      el.dataset.expiryScheduled = "1";
      var secs = parseInt(el.getAttribute("data-expire-after"), 10) || 30;
      setTimeout(function () {
        el.textContent = "";
        var p = document.createElement("p");
        p.className = "muted small";
        p.textContent = "The card details are hidden again. Reveal them again if you still need them.";
        el.appendChild(p);
      }, secs * 1000);
    });
  }

  // <button data-copy="text"> puts the text on the clipboard and says so.
  function copy(button) {
    var text = button.getAttribute("data-copy");
    var said = button.textContent;
    function done(message) {
      button.textContent = message;
      setTimeout(function () { button.textContent = said; }, 1500);
    }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () { done("Copied"); }, function () { done("Copy failed"); });
    } else {
      // Plain-HTTP deployments have no clipboard API; the old way still works there.
      var area = document.createElement("textarea");
      area.value = text;
      document.body.appendChild(area);
      area.select();
      var ok = document.execCommand("copy");
      document.body.removeChild(area);
      done(ok ? "Copied" : "Copy failed");
    }
  }

  // <input type="file" data-fill="NAME" hidden> reads the chosen file into
  // the form's textarea NAME, so what was uploaded can be fixed in place;
  // without scripts the textarea alone is the way in.
  function showFilePickers(root) {
    var nodes = root.querySelectorAll ? root.querySelectorAll("input[type=file][data-fill]") : [];
    Array.prototype.forEach.call(nodes, function (input) {
      input.hidden = false;
      var label = input.closest("label");
      if (label) label.hidden = false;
    });
  }

  function fill(input) {
    var file = input.files && input.files[0];
    var target = input.form && input.form.elements[input.getAttribute("data-fill")];
    if (!file || !target) return;
    var reader = new FileReader();
    reader.onload = function () { target.value = reader.result; };
    reader.onerror = function () { flash("The file could not be read. Paste its contents instead."); };
    reader.readAsText(file);
  }

  ready(function () {
    // On a phone the menu is one scrolling row: bring the current page's
    // entry into view.
    var current = document.querySelector(".sidebar [aria-current=page]");
    if (current && current.parentNode.parentNode.scrollWidth > 0 && window.innerWidth <= 720) {
      current.scrollIntoView({ block: "nearest", inline: "center" });
    }
    scheduleExpiry(document);
    showFilePickers(document);
    // <button data-print hidden> prints the page; hidden without scripts,
    // where the browser's own Print does the same.
    Array.prototype.forEach.call(document.querySelectorAll("button[data-print]"), function (b) { b.hidden = false; });
    document.body.addEventListener("click", function (e) {
      var button = e.target && e.target.closest ? e.target.closest("button[data-copy]") : null;
      if (button) copy(button);
      var print = e.target && e.target.closest ? e.target.closest("button[data-print]") : null;
      if (print) window.print();
    });
    document.body.addEventListener("htmx:afterSettle", function (e) {
      scheduleExpiry(e.detail.elt.parentNode || document);
    });

    // <select data-autosubmit> submits its form when changed.
    document.body.addEventListener("change", function (e) {
      var el = e.target;
      if (el && el.matches && el.matches("select[data-autosubmit]") && el.form) el.form.requestSubmit();
      if (el && el.matches && el.matches("input[type=file][data-fill]")) fill(el);
    });

    // htmx does not swap error answers; say what happened instead.
    document.body.addEventListener("htmx:responseError", function (e) {
      var xhr = e.detail.xhr;
      var text = "The request failed (HTTP " + xhr.status + ").";
      var doc = new DOMParser().parseFromString(xhr.responseText || "", "text/html");
      var p = doc.querySelector("main p:not(.brand)");
      if (p && p.textContent) text = p.textContent;
      flash(text);
    });
    document.body.addEventListener("htmx:sendError", function () {
      flash("Paydesk could not be reached. Check your connection and try again.");
    });
  });
})();
