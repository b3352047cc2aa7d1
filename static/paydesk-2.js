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

  ready(function () {
    scheduleExpiry(document);
    document.body.addEventListener("htmx:afterSettle", function (e) {
      scheduleExpiry(e.detail.elt.parentNode || document);
    });

    // <select data-autosubmit> submits its form when changed.
    document.body.addEventListener("change", function (e) {
      var el = e.target;
      if (el && el.matches && el.matches("select[data-autosubmit]") && el.form) el.form.requestSubmit();
    });

    // htmx does not swap error answers; say what happened instead.
    document.body.addEventListener("htmx:responseError", function (e) {
      var xhr = e.detail.xhr;
      var text = "The request failed (HTTP " + xhr.status + ").";
      var doc = new DOMParser().parseFromString(xhr.responseText || "", "text/html");
      var p = doc.querySelector("main p");
      if (p && p.textContent) text = p.textContent;
      flash(text);
    });
    document.body.addEventListener("htmx:sendError", function () {
      flash("Paydesk could not be reached. Check your connection and try again.");
    });
  });
})();
